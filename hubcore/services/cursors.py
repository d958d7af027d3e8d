"""Durable per-actor cursors (`actor_cursors`): where an actor stands in a feed, its inbox wait
and each of its notification queues, per project. A cursor only moves forward.
"""

from __future__ import annotations

import sqlite3


def get_cursor(conn: sqlite3.Connection, actor: str, name: str, project_id: str = "") -> str | None:
    row = conn.execute(
        "SELECT value FROM actor_cursors WHERE actor = ? AND name = ? AND project_id = ?",
        (actor, name, project_id),
    ).fetchone()
    return str(row[0]) if row else None


def advance_cursor(
    conn: sqlite3.Connection, actor: str, name: str, value: str, now: float, project_id: str = ""
) -> None:
    """Move a durable cursor forward to `value` (never back)."""
    conn.execute(
        """INSERT INTO actor_cursors (actor, name, project_id, value, updated_at) VALUES (?, ?, ?, ?, ?)
           ON CONFLICT (actor, name, project_id) DO UPDATE SET value = MAX(value, excluded.value),
           updated_at = excluded.updated_at""",
        (actor, name, project_id, value, now),
    )


def seed_cursor(conn: sqlite3.Connection, actor: str, name: str, value: str, now: float) -> None:
    """Start a cursor at `value` if the actor has none (a first question seeds its wait cursor)."""
    conn.execute(
        """INSERT OR IGNORE INTO actor_cursors (actor, name, project_id, value, updated_at)
           VALUES (?, ?, '', ?, ?)""",
        (actor, name, value, now),
    )
