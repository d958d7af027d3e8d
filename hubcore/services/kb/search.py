"""What a knowledge base gives the search index: its pages as documents of family `kb` (one source
per project, `kb:<project_id>`, caught up from the write log), and how a page hit reads."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from hubcore.parts.protocol import SearchBatch, SearchDoc, Still, snippet_of

FAMILY = "kb"
PREFIX = "kb:"
STEP_MAX = 500  # pages a catch-up reads by path; past it the project is read whole


def source(project_id: str) -> str:
    return f"{PREFIX}{project_id}"


def mark(conn: sqlite3.Connection) -> str:
    """The newest write-log row and the page count: every put, delete, revert or promote logs."""
    last = conn.execute("SELECT MAX(id) FROM log").fetchone()[0]
    pages = conn.execute("SELECT COUNT(*) FROM pages").fetchone()[0]
    return f"{last or 0}:{pages}"


def batch(conn: sqlite3.Connection, project_id: str, since: str | None) -> SearchBatch:
    """The pages written since the mark `since` (the paths the write log names after its log id),
    or every page when the mark cannot say (never indexed, the log behind it, too many paths)."""
    now = mark(conn)
    last = _log_id(since)
    top = int(conn.execute("SELECT MAX(id) FROM log").fetchone()[0] or 0)
    if last is None or last > top or (last == top and since != now):
        return SearchBatch(docs(conn, project_id), now, still=standing(project_id))
    paths = [r[0] for r in conn.execute("SELECT DISTINCT path FROM log WHERE id > ? LIMIT ?", (last, STEP_MAX + 1))]
    if len(paths) > STEP_MAX:
        return SearchBatch(docs(conn, project_id), now, still=standing(project_id))
    found = docs(conn, project_id, paths)
    held = {doc.key for doc in found}
    gone = [(FAMILY, f"{project_id}:{p}") for p in paths if f"{project_id}:{p}" not in held]
    return SearchBatch(found, now, replace=False, gone=gone, still=standing(project_id))


def _log_id(mark: str | None) -> int | None:
    head = (mark or "").split(":", 1)[0]
    return int(head) if head.isdigit() else None


def docs(conn: sqlite3.Connection, project_id: str, paths: list[str] | None = None) -> list[SearchDoc]:
    """The project's pages (only `paths`, when given) as documents."""
    only = "" if paths is None else "WHERE p.path IN (SELECT value FROM json_each(:paths))"
    rows = conn.execute(
        f"""SELECT p.path, b.content FROM pages p JOIN blobs b ON b.version = p.version {only}
                            ORDER BY p.path""",
        {"paths": orjson.dumps(paths).decode()},
    ).fetchall()
    found = []
    for path, content in rows:
        text = bytes(content).decode("utf-8", "replace")
        found.append(
            SearchDoc(
                FAMILY,
                f"{project_id}:{path}",
                project_id,
                f"{path}\n{text}",
                snippet_of(_without_frontmatter(text)),
                None,
                {"path": path},
            )
        )
    return found


def standing(project_id: str) -> Still:
    """A knowledge base batch stands while its project row does (the file goes after the delete)."""

    def still(conn: sqlite3.Connection, docs: Sequence[SearchDoc]) -> Sequence[SearchDoc] | None:
        return docs if conn.execute("SELECT 1 FROM projects WHERE id = ?", (project_id,)).fetchone() else None

    return still


def hit(row: sqlite3.Row, meta: Mapping[str, Any]) -> dict[str, Any]:
    """A page hit's own member: its path."""
    return {"path": meta["path"]}


def _without_frontmatter(text: str) -> str:
    """The page's text after its frontmatter block (opened only by an exact `---` first line)."""
    lines = text.split("\n")
    if lines and lines[0].rstrip("\r") == "---":
        for i, line in enumerate(lines[1:], start=1):
            if line.rstrip("\r") in ("---", "..."):
                return "\n".join(lines[i + 1 :])
    return text
