"""Who is asking. Every service function takes a `Caller`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

HUMAN = "human"


@dataclass(frozen=True)
class Caller:
    kind: Literal["admin", "agent", "public"]
    agent_id: str | None = None
    # The actor label an admin caller records instead of `human` (the standalone stdio server
    # takes it from HUB_AGENT_ID). Authority stays the admin's.
    label: str | None = None

    @classmethod
    def admin(cls, label: str | None = None) -> Caller:
        return cls("admin", label=label)

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
        if self.kind == "admin":
            return self.label or HUMAN
        return "public"
