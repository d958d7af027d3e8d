"""Who may see which project: the visibility rule, in one place.

The admin (acting as the human) sees everything. An agent sees every ordinary project, its own
personal space, and confidential projects (or other agents' spaces) it holds a grant on. Missing
and denied are indistinguishable to the caller.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from hubcore.caller import Caller
from hubcore.errors import HubError, forbidden, not_found

VISIBLE_SQL = """(
    (p.confidential = 0 AND p.personal_of IS NULL)
    OR p.personal_of = :agent
    OR EXISTS (SELECT 1 FROM grants g WHERE g.project_id = p.id AND g.agent_id = :agent)
)"""


def visibility(caller: Caller, alias: str = "p") -> tuple[str, dict[str, Any]]:
    """A SQL condition on the projects table aliased `alias`, and its parameters."""
    if caller.is_admin:
        return "1", {}
    if caller.kind != "agent":
        return "0", {}
    return VISIBLE_SQL.replace("p.", f"{alias}."), {"agent": caller.agent_id}


def project_missing(project_id: str) -> HubError:
    """The one answer for a project that is missing or that the caller may not see."""
    return not_found(f"project {project_id!r} not found")


def readable_project(conn: sqlite3.Connection, caller: Caller, project_id: str) -> sqlite3.Row:
    """The project row when the caller can see it; else the missing-project error."""
    cond, params = visibility(caller)
    row: sqlite3.Row | None = conn.execute(
        f"SELECT p.* FROM projects p WHERE p.id = :id AND {cond}", {"id": project_id, **params}
    ).fetchone()
    if row is None:
        raise project_missing(project_id)
    return row


def visible_project_ids(conn: sqlite3.Connection, caller: Caller) -> list[str]:
    cond, params = visibility(caller)
    return [r[0] for r in conn.execute(f"SELECT p.id FROM projects p WHERE {cond} ORDER BY p.id", params)]


def require_admin(caller: Caller, what: str) -> None:
    if not caller.is_admin:
        raise forbidden(f"{what} needs the admin token")
