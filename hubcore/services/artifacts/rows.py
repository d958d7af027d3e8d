"""The artifact tables (`artifacts`, `artifact_versions` in hub.db): reads, writes and renderings.

Every function takes the connection it runs on: writes run inside the artifact service's commands
on the hub store's actor, reads on read-only connections.
"""

from __future__ import annotations

import re
import sqlite3
from typing import Any

import orjson

from hubcore.caller import Caller
from hubcore.clock import iso
from hubcore.errors import HubError, not_found
from hubcore.services.access import visibility

LIVE_WINDOW_SECS = 900.0  # DESIGN section 7: `live` while the drafting session was active this recently
ARTIFACT_COLUMNS = """a.id, a.project_id, a.title, a.kind, a.description, a.actor, a.session_id, a.version,
    a.live_version, a.live_rev, a.live_session, a.live_at, a.comments_count, a.comments_open, a.created_at,
    a.updated_at"""
VERSION_COLUMNS = (
    "v.version, v.sha256, v.size_bytes, v.label, v.envelope, v.actor, v.session_id, v.created_at, v.updated_at, v.diff"
)
_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def artifact_missing(artifact_id: str) -> HubError:
    """The one answer for an artifact that is missing or that the caller may not see."""
    shown = artifact_id if len(artifact_id) <= 64 else artifact_id[:64] + "..."
    return not_found(f"artifact {shown!r} not found")


def readable(conn: sqlite3.Connection, caller: Caller, artifact_id: str) -> sqlite3.Row:
    """The artifact row when the caller may see its project; else the missing-artifact error.
    The public (a page) reads any artifact by its id: the id is the capability."""
    if caller.kind == "public":
        row = conn.execute(f"SELECT {ARTIFACT_COLUMNS} FROM artifacts a WHERE a.id = ?", (artifact_id,)).fetchone()
    else:
        cond, params = visibility(caller)
        row = conn.execute(
            f"""SELECT {ARTIFACT_COLUMNS} FROM artifacts a JOIN projects p ON p.id = a.project_id
                WHERE a.id = :id AND {cond}""",
            {"id": artifact_id, **params},
        ).fetchone()
    if row is None:
        raise artifact_missing(artifact_id)
    result: sqlite3.Row = row
    return result


def version_row(conn: sqlite3.Connection, artifact_id: str, version: int) -> sqlite3.Row | None:
    row: sqlite3.Row | None = conn.execute(
        f"SELECT {VERSION_COLUMNS} FROM artifact_versions v WHERE v.artifact_id = ? AND v.version = ?",
        (artifact_id, version),
    ).fetchone()
    return row


def newest_version(row: sqlite3.Row) -> int:
    """The newest version: the live one while one is held, else the current sealed one."""
    live: int | None = row["live_version"]
    return live if live is not None else int(row["version"])


def heading_of(markdown: str) -> str:
    """The text of a markdown document's first ATX heading outside code fences ('' when none)."""
    fence: str | None = None
    for line in markdown.splitlines()[:2000]:
        opened = _FENCE.match(line)
        if opened:
            mark = opened.group(1)
            if fence is None:
                fence = mark
            elif mark[0] == fence[0] and len(mark) >= len(fence):
                fence = None
            continue
        if fence is None:
            found = _HEADING.match(line)
            if found and found.group(2).strip():
                return found.group(2).strip()
    return ""


def digests_of(conn: sqlite3.Connection, where: str, params: tuple[Any, ...]) -> list[str]:
    return [
        r[0]
        for r in conn.execute(
            f"SELECT DISTINCT v.sha256 FROM artifact_versions v JOIN artifacts a ON a.id = v.artifact_id WHERE {where}",
            params,
        )
    ]


def referenced(conn: sqlite3.Connection, digests: list[str]) -> set[str]:
    """Which of `digests` some version row references."""
    found: set[str] = set()
    for start in range(0, len(digests), 500):
        chunk = digests[start : start + 500]
        marks = ", ".join("?" * len(chunk))
        found.update(
            r[0]
            for r in conn.execute(f"SELECT DISTINCT sha256 FROM artifact_versions WHERE sha256 IN ({marks})", chunk)
        )
    return found


def live_state(row: sqlite3.Row, session_active_at: float | None, now: float) -> str:
    """`sealed` (no live version), `live` (its session active within 900 s) or `idle`."""
    if row["live_version"] is None:
        return "sealed"
    last = max(float(row["live_at"] or 0.0), session_active_at or 0.0)
    return "live" if now - last <= LIVE_WINDOW_SECS else "idle"


def session_activity(conn: sqlite3.Connection, session_id: str | None) -> float | None:
    if session_id is None:
        return None
    found = conn.execute("SELECT last_activity_at FROM sessions WHERE id = ?", (session_id,)).fetchone()
    return float(found[0]) if found else None


def render_version(v: sqlite3.Row, live_version: int | None) -> dict[str, Any]:
    return {
        "version": v["version"],
        "label": v["label"],
        "size_bytes": v["size_bytes"],
        "protected": v["envelope"] is not None,
        "actor": v["actor"],
        "session_id": v["session_id"],
        "live": v["version"] == live_version,
        "created_at": iso(v["created_at"]),
        "updated_at": iso(v["updated_at"]),
    }


def render_summary(a: sqlite3.Row, v: sqlite3.Row) -> dict[str, Any]:
    """An artifact as listings show it: its current version's facts, no content."""
    return {
        "id": a["id"],
        "project_id": a["project_id"],
        "title": a["title"],
        "kind": a["kind"],
        "description": a["description"],
        "actor": a["actor"],
        "session_id": a["session_id"],
        "version": a["version"],
        "label": v["label"],
        "size_bytes": v["size_bytes"],
        "protected": v["envelope"] is not None,
        "live_version": a["live_version"],
        "comments_count": a["comments_count"],
        "comments_open": a["comments_open"],
        "created_at": iso(a["created_at"]),
        "updated_at": iso(a["updated_at"]),
    }


def render_artifact(a: sqlite3.Row, v: sqlite3.Row, content: str) -> dict[str, Any]:
    """`artifact_get`, `GET /artifacts/:id` (DESIGN section 7 "Artifact reads"): the summary with
    the chosen version's number, label, size, protection, envelope and content."""
    envelope = orjson.loads(v["envelope"]) if v["envelope"] is not None else None
    live = v["version"] == a["live_version"]
    found = {
        **render_summary(a, v),
        "version": v["version"],
        "envelope": envelope,
        "content": content,
        "live": live,
        "live_rev": a["live_rev"] if live else 0,
    }
    if a["kind"] == "diff":
        found["diff"] = orjson.loads(v["diff"]) if v["diff"] is not None else None
    return found
