"""Agents, their tokens and their grants. Administration is the human's alone."""

from __future__ import annotations

import builtins
import sqlite3
from collections.abc import Callable
from typing import Any

from hubcore.caller import Caller
from hubcore.clock import iso
from hubcore.errors import HubError, conflict, invalid, not_found
from hubcore.services import validate
from hubcore.services.access import project_missing, require_admin
from hubcore.services.core import Core
from hubcore.services.fields import AgentId, DisplayName, ProjectId
from hubcore.services.projects import insert_personal_space
from hubcore.services.requests import Request
from hubcore.tokens import new_token, token_hash

RESERVED_ID = "hub"


class AgentCreate(Request):
    """`POST /agents`: the id (a slug, not a reserved one) and its name (the id when absent)."""

    id: AgentId
    display_name: DisplayName | None = None


class GrantAdd(Request):
    """`POST /agents/:id/grants`: let the agent see a (confidential) project."""

    agent_id: AgentId
    project_id: ProjectId


def render(row: sqlite3.Row) -> dict[str, Any]:
    agent = {
        "id": row["id"],
        "display_name": row["display_name"],
        "status": row["status"],
        "personal_project_id": validate.PERSONAL_PREFIX + row["id"],
        "created_at": iso(row["created_at"]),
        "last_seen_at": iso(row["last_seen_at"]) if row["last_seen_at"] is not None else None,
        "has_token": row["token_hash"] is not None,
    }
    if row["enrol_note"] is not None:
        agent["enrol_note"] = row["enrol_note"]
    return agent


def agent_missing(agent_id: str) -> HubError:
    return not_found(f"agent {agent_id!r} not found")


def _agent_row(conn: sqlite3.Connection, agent_id: str) -> sqlite3.Row:
    row: sqlite3.Row | None = conn.execute("SELECT * FROM agents WHERE id = ?", (agent_id,)).fetchone()
    if row is None:
        raise agent_missing(agent_id)
    return row


def revoke_reserved(conn: sqlite3.Connection) -> int:
    """At open: a store holding an agent with the reserved id loses that agent's token."""
    return conn.execute(
        "UPDATE agents SET token_hash = NULL, token_created_at = NULL WHERE id = ? AND token_hash IS NOT NULL",
        (RESERVED_ID,),
    ).rowcount


class AgentsService:
    def __init__(self, core: Core, *, credentials_changed: Callable[[], None]) -> None:
        self.core = core
        # Told after every commit that changes which token names which active agent.
        self._credentials_changed = credentials_changed

    async def list(self, caller: Caller) -> builtins.list[dict[str, Any]]:
        require_admin(caller, "listing agents")
        return await self.core.store.read(
            lambda conn: [render(r) for r in conn.execute("SELECT * FROM agents ORDER BY id")]
        )

    async def create(self, caller: Caller, req: AgentCreate) -> dict[str, Any]:
        require_admin(caller, "creating an agent")
        aid = req.id
        if aid in validate.RESERVED_AGENT_IDS:
            raise invalid(f"agent id {aid!r} is reserved", field="id")
        name = req.display_name or aid
        now = self.core.now()

        def write(conn: sqlite3.Connection) -> dict[str, Any]:
            if conn.execute("SELECT 1 FROM agents WHERE id = ?", (aid,)).fetchone():
                raise conflict(f"agent {aid!r} already exists")
            conn.execute(
                "INSERT INTO agents (id, display_name, status, created_at) VALUES (?, ?, 'active', ?)",
                (aid, name, now),
            )
            insert_personal_space(conn, aid, name, now)
            return render(_agent_row(conn, aid))

        return await self.core.store.execute(write)

    async def issue_token(self, caller: Caller, agent_id: str) -> dict[str, Any]:
        """A new token for the agent, shown once; any earlier token stops working."""
        require_admin(caller, "issuing a token")
        if agent_id == RESERVED_ID:
            raise invalid(f"agent id {RESERVED_ID!r} is reserved; no token can be issued for it")
        token, now = new_token(), self.core.now()

        def write(conn: sqlite3.Connection) -> None:
            _agent_row(conn, agent_id)
            conn.execute(
                "UPDATE agents SET token_hash = ?, token_created_at = ? WHERE id = ?",
                (token_hash(token), now, agent_id),
            )

        try:
            await self.core.store.execute(write)
        finally:  # also when the outcome is unknown: forgetting too much costs one lookup
            self._credentials_changed()
        return {"token": token, "created_at": iso(now)}

    async def revoke_token(self, caller: Caller, agent_id: str) -> None:
        require_admin(caller, "revoking a token")

        def write(conn: sqlite3.Connection) -> None:
            _agent_row(conn, agent_id)
            conn.execute("UPDATE agents SET token_hash = NULL, token_created_at = NULL WHERE id = ?", (agent_id,))

        try:
            await self.core.store.execute(write)
        finally:
            self._credentials_changed()

    async def grants(self, caller: Caller, agent_id: str) -> builtins.list[dict[str, Any]]:
        require_admin(caller, "reading grants")

        def read(conn: sqlite3.Connection) -> builtins.list[dict[str, Any]]:
            _agent_row(conn, agent_id)
            rows = conn.execute("SELECT * FROM grants WHERE agent_id = ? ORDER BY project_id", (agent_id,)).fetchall()
            return [_render_grant(r) for r in rows]

        return await self.core.store.read(read)

    async def grant(self, caller: Caller, req: GrantAdd) -> builtins.tuple[dict[str, Any], bool]:
        """Grant access; returns the grant and whether it is new (an existing grant is kept)."""
        require_admin(caller, "granting access")
        agent_id, pid = req.agent_id, req.project_id
        now = self.core.now()

        def write(conn: sqlite3.Connection) -> builtins.tuple[dict[str, Any], bool]:
            _agent_row(conn, agent_id)
            if not conn.execute("SELECT 1 FROM projects WHERE id = ?", (pid,)).fetchone():
                raise project_missing(pid)
            created = (
                conn.execute(
                    "INSERT OR IGNORE INTO grants (agent_id, project_id, created_at) VALUES (?, ?, ?)",
                    (agent_id, pid, now),
                ).rowcount
                == 1
            )
            row = conn.execute("SELECT * FROM grants WHERE agent_id = ? AND project_id = ?", (agent_id, pid)).fetchone()
            return _render_grant(row), created

        return await self.core.store.execute(write)

    async def revoke_grant(self, caller: Caller, agent_id: str, project_id: str) -> None:
        require_admin(caller, "revoking a grant")

        def write(conn: sqlite3.Connection) -> None:
            _agent_row(conn, agent_id)
            gone = conn.execute(
                "DELETE FROM grants WHERE agent_id = ? AND project_id = ?", (agent_id, project_id)
            ).rowcount
            if not gone:
                raise not_found(f"agent {agent_id!r} holds no grant on project {project_id!r}")

        async with self.core.access_changing():  # the agent may see the project no more
            await self.core.store.execute(write)


def _render_grant(row: sqlite3.Row) -> dict[str, Any]:
    return {"agent_id": row["agent_id"], "project_id": row["project_id"], "created_at": iso(row["created_at"])}
