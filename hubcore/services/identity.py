"""Who the caller is, as an agent would like to be told: identity and personal space."""

from __future__ import annotations

import sqlite3
from typing import Any

from hubcore.caller import Caller
from hubcore.clock import iso
from hubcore.errors import HubError
from hubcore.services import validate
from hubcore.services.core import Core


class IdentityService:
    def __init__(self, core: Core) -> None:
        self.core = core

    async def whoami(self, caller: Caller) -> dict[str, Any]:
        if caller.kind == "admin":
            return {
                "kind": "admin",
                "actor": caller.actor,
                "agent_id": None,
                "display_name": "the human",
                "personal_project_id": None,
                "status": "active",
                "created_at": None,
            }
        if caller.kind != "agent" or not caller.agent_id:
            raise HubError("unauthenticated", "no identity: this call needs an agent token")
        agent_id = caller.agent_id

        def read(conn: sqlite3.Connection) -> sqlite3.Row | None:
            row: sqlite3.Row | None = conn.execute(
                "SELECT id, display_name, status, created_at FROM agents WHERE id = ?", (agent_id,)
            ).fetchone()
            return row

        row = await self.core.store.read(read)
        if row is None:
            raise HubError("unauthenticated", "this token's agent no longer exists")
        return {
            "kind": "agent",
            "actor": caller.actor,
            "agent_id": row["id"],
            "display_name": row["display_name"],
            "personal_project_id": validate.PERSONAL_PREFIX + row["id"],
            "status": row["status"],
            "created_at": iso(row["created_at"]),
        }
