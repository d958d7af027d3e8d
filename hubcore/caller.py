"""Who is asking. Every service function takes a `Caller`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

HUMAN = "human"


@dataclass(frozen=True)
class Caller:
    kind: Literal["admin", "agent", "public"]
    agent_id: str | None = None

    @classmethod
    def admin(cls) -> Caller:
        return cls("admin")

    @classmethod
    def agent(cls, agent_id: str) -> Caller:
        return cls("agent", agent_id)

    @classmethod
    def public(cls) -> Caller:
        return cls("public")

    @property
    def is_admin(self) -> bool:
        return self.kind == "admin"

    @property
    def actor(self) -> str:
        """The actor label the hub records for this caller's writes."""
        if self.kind == "agent" and self.agent_id:
            return self.agent_id
        return HUMAN if self.kind == "admin" else "public"
