"""What session brains give the search index: each session's entries as documents of family
`brain` (one source per session, `brain:<id>`, indexed whole), and how a brain hit reads. A brain
hit is shown only while its session exists unpruned: the sessions part's `SCOPE`."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

from hubcore.parts.protocol import SearchDoc, SearchScope, Still, snippet_of

FAMILY = "brain"
PREFIX = "brain:"

# Every hit tied to a session (a brain entry, an event a session wrote) is shown only while the
# session is unpruned; a brain hit needs its session's row.
SCOPE = SearchScope(
    joins="LEFT JOIN sessions s ON s.id = d.session_id",
    columns="s.name AS session_name, s.status AS session_status",
    live="(s.id IS NULL OR s.pruned_at IS NULL) AND (d.family != 'brain' OR s.id IS NOT NULL)",
    session="""SELECT 1 FROM sessions s JOIN projects p ON p.id = s.project_id
               WHERE s.id = :sid AND s.pruned_at IS NULL AND {visible}""",
)


def source(session_id: str) -> str:
    return f"{PREFIX}{session_id}"


def mark(conn: sqlite3.Connection) -> str:
    """A digest of every entry's path and version: it moves with any write or delete."""
    digest = hashlib.sha256()
    for path, version in conn.execute("SELECT path, version FROM entries ORDER BY path"):
        digest.update(f"{path}\0{version}\0".encode())
    return digest.hexdigest()[:32]


def docs(conn: sqlite3.Connection, session_id: str, project_id: str) -> list[SearchDoc]:
    found = []
    for path, value in conn.execute("SELECT path, value FROM entries ORDER BY path"):
        text = bytes(value).decode("utf-8", "replace")
        found.append(
            SearchDoc(
                FAMILY,
                f"{session_id}:{path}",
                project_id,
                f"{path}\n{text}",
                snippet_of(text),
                session_id,
                {"path": path},
            )
        )
    return found


def standing(session_id: str) -> Still:
    """A brain batch stands while its session row does (a project deletion removes it)."""

    def still(conn: sqlite3.Connection, docs: Sequence[SearchDoc]) -> Sequence[SearchDoc] | None:
        return docs if conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone() else None

    return still


def hit(row: sqlite3.Row, meta: Mapping[str, Any]) -> dict[str, Any]:
    """A brain hit's own members (the session's name and status come from `SCOPE`'s columns)."""
    return {
        "session_id": row["session_id"],
        "path": meta["path"],
        "session_name": row["session_name"],
        "session_status": row["session_status"],
    }
