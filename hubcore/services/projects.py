"""Projects: create, list, read, change, delete; personal spaces; confidentiality."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, model_validator

from hubcore.caller import Caller
from hubcore.clock import iso
from hubcore.errors import conflict, forbidden, invalid
from hubcore.services import validate
from hubcore.services.access import project_missing, readable_project, require_admin, visibility
from hubcore.services.changes import Effects
from hubcore.services.core import Core
from hubcore.services.events import NewEvent, insert_event
from hubcore.services.fields import DisplayName, ProjectId
from hubcore.services.requests import Request

PasswordPolicy = Literal["off", "optional", "required"]


class ProjectCreate(Request):
    """`POST /projects`: the id (a slug, not `space-...`), its name (the id when absent)."""

    model_config = ConfigDict(extra="ignore")

    id: Annotated[ProjectId, Field(json_schema_extra={"not": {"pattern": "^space-"}})]  # personal spaces'
    display_name: DisplayName | None = None
    confidential: bool = False
    artifact_password_policy: PasswordPolicy = "optional"


class ProjectUpdate(Request):
    """`PATCH /projects/:id`: a member left out (or null) is left alone; an `id` member is refused
    (the id cannot change)."""

    model_config = ConfigDict(extra="ignore")

    project_id: ProjectId
    display_name: DisplayName | None = None
    confidential: bool | None = None
    artifact_password_policy: PasswordPolicy | None = None

    @model_validator(mode="before")
    @classmethod
    def _id_is_fixed(cls, data: Any) -> Any:
        # Spec (projects): unknown members are ignored, but an id in a PATCH body (null too) is refused.
        if isinstance(data, Mapping) and "id" in data:
            raise invalid("a project's id cannot be changed; leave it out of the body", field="id")
        return data


def unseen_counts(conn: sqlite3.Connection, project_ids: list[str]) -> dict[str, int]:
    """Feed events above the human's cursor, per project: the count kept beside the feed's other
    tallies (`feed_stats.unseen`, maintained by every append, removal and cursor move), one indexed
    row per project whatever the backlog. A project with no events has no row and counts 0."""
    counts = dict.fromkeys(project_ids, 0)
    if not project_ids:
        return counts
    marks = ", ".join("?" * len(project_ids))
    rows = conn.execute(f"SELECT project_id, unseen FROM feed_stats WHERE project_id IN ({marks})", project_ids)
    for project_id, count in rows:
        counts[project_id] = int(count)
    return counts


def render(row: sqlite3.Row, unseen: int) -> dict[str, Any]:
    return {
        "id": row["id"],
        "display_name": row["display_name"],
        "owner_agent": row["owner_agent"],
        "created_at": iso(row["created_at"]),
        "unseen_events": unseen,
        "is_personal": row["personal_of"] is not None,
        "confidential": bool(row["confidential"]),
        "artifact_password_policy": row["artifact_password_policy"],
    }


def insert_personal_space(conn: sqlite3.Connection, agent_id: str, display_name: str, now: float) -> None:
    conn.execute(
        """INSERT INTO projects (id, display_name, owner_agent, created_at, personal_of)
           VALUES (?, ?, ?, ?, ?)""",
        (validate.PERSONAL_PREFIX + agent_id, f"{display_name}'s space", agent_id, now, agent_id),
    )


class ProjectsService:
    def __init__(self, core: Core) -> None:
        self.core = core

    async def list(self, caller: Caller) -> list[dict[str, Any]]:
        def read(conn: sqlite3.Connection) -> list[dict[str, Any]]:
            cond, params = visibility(caller)
            rows = conn.execute(f"SELECT p.* FROM projects p WHERE {cond} ORDER BY p.id", params).fetchall()
            unseen = unseen_counts(conn, [r["id"] for r in rows])
            return [render(r, unseen[r["id"]]) for r in rows]

        return await self.core.store.read(read)

    async def get(self, caller: Caller, project_id: str) -> dict[str, Any]:
        def read(conn: sqlite3.Connection) -> dict[str, Any]:
            row = readable_project(conn, caller, project_id)
            return render(row, unseen_counts(conn, [project_id])[project_id])

        return await self.core.store.read(read)

    async def create(self, caller: Caller, req: ProjectCreate) -> dict[str, Any]:
        pid = req.id
        if pid.startswith(validate.PERSONAL_PREFIX):
            raise invalid("project ids starting with 'space-' are reserved for personal spaces", field="id")
        name, confidential, policy = req.display_name or pid, req.confidential, req.artifact_password_policy
        if caller.kind not in ("admin", "agent"):
            raise forbidden("creating a project needs a token")
        now = self.core.now()

        def write(conn: sqlite3.Connection) -> dict[str, Any]:
            if conn.execute("SELECT 1 FROM projects WHERE id = ?", (pid,)).fetchone():
                raise conflict(f"project {pid!r} already exists")
            conn.execute(
                """INSERT INTO projects (id, display_name, owner_agent, created_at, confidential,
                   artifact_password_policy) VALUES (?, ?, ?, ?, ?, ?)""",
                (pid, name, caller.agent_id, now, int(confidential), policy),
            )
            if confidential and caller.agent_id:
                # The creator keeps sight of its own confidential project.
                conn.execute(
                    "INSERT INTO grants (agent_id, project_id, created_at) VALUES (?, ?, ?)",
                    (caller.agent_id, pid, now),
                )
            row = conn.execute("SELECT * FROM projects WHERE id = ?", (pid,)).fetchone()
            return render(row, 0)

        return await self.core.store.execute(write)

    async def update(self, caller: Caller, req: ProjectUpdate) -> dict[str, Any]:
        project_id = req.project_id
        # A member sent as null is left alone, like a member the body does not name.
        changes: dict[str, Any] = {
            col: value
            for col, value in (
                ("display_name", req.display_name),
                ("artifact_password_policy", req.artifact_password_policy),
            )
            if value is not None
        }
        if req.confidential is not None:
            changes["confidential"] = int(req.confidential)
        if changes.keys() - {"confidential"}:  # an agent may only hide a project it can see
            require_admin(caller, "renaming a project or setting its password policy")

        now = self.core.now()

        def write(conn: sqlite3.Connection) -> tuple[dict[str, Any], Effects]:
            effects = Effects()
            row = readable_project(conn, caller, project_id)
            if changes.get("confidential") == 0 and row["confidential"] and not caller.is_admin:
                raise forbidden("making a confidential project public needs the admin token")
            if changes:
                assignments = ", ".join(f"{col} = :{col}" for col in changes)
                conn.execute(f"UPDATE projects SET {assignments} WHERE id = :id", {**changes, "id": project_id})
            if changes.get("confidential") == 1 and not row["confidential"] and caller.agent_id:
                self._made_confidential(conn, caller.agent_id, project_id, now, effects)
            fresh = conn.execute("SELECT * FROM projects WHERE id = ?", (project_id,)).fetchone()
            return render(fresh, unseen_counts(conn, [project_id])[project_id]), effects

        async with self.core.access_changing():  # a project made confidential hides from agents
            return await self.core.store.execute_effects(write)

    def _made_confidential(
        self, conn: sqlite3.Connection, agent: str, project_id: str, now: float, effects: Effects
    ) -> None:
        """An agent hid a project: the agent keeps sight of it (a grant) and the feed says who did it.
        The signal is an audit record, so the feed ceiling does not refuse it."""
        conn.execute(
            "INSERT OR IGNORE INTO grants (agent_id, project_id, created_at) VALUES (?, ?, ?)", (agent, project_id, now)
        )
        insert_event(
            conn,
            NewEvent(
                project_id=project_id,
                kind="signal",
                actor=agent,
                summary=f"{agent} made this project confidential",
                payload={"action": "made_confidential"},
                exempt=True,
            ),
            now=now,
            cap=self.core.settings.events_per_project,
            effects=effects,
        )

    async def delete(self, caller: Caller, project_id: str) -> None:
        require_admin(caller, "deleting a project")
        parts = self.core.parts  # every part removes its share: rows here, files after the commit

        def write(conn: sqlite3.Connection) -> None:
            row = conn.execute("SELECT * FROM projects WHERE id = ?", (project_id,)).fetchone()
            if row is None:
                raise project_missing(project_id)
            if row["personal_of"] is not None:
                raise conflict(f"project {project_id!r} is a personal space and cannot be deleted")
            for part in parts:
                part.purge_rows(conn, project_id)
            conn.execute("DELETE FROM projects WHERE id = ?", (project_id,))

        await self.core.store.execute(write)
        for part in parts:
            await part.after_delete(project_id)
