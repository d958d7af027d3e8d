"""`session_brief`: what an agent should know before it starts work in a project.

It moves no cursor. The window is the events above the caller's durable feed cursor; with no feed
history, those after the caller's previous session's last activity; with neither, the whole feed
(basis `none`). Entries are pointers: text is cut to 200 characters (`truncated: true`), except the
previous handoff, which comes in full. Each list section says how many more it left out (`more`),
counted up to 10,000 (`more_capped: true` past that). `comments` lists the human's open comments
on the caller's artifacts in the project (at most 10, newest first), whatever the window.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from typing import Any

import orjson

from hubcore.caller import HUMAN, Caller
from hubcore.clock import iso
from hubcore.parts.protocol import Part
from hubcore.services.access import readable_project
from hubcore.services.core import Core
from hubcore.services.cursors import get_cursor
from hubcore.services.feed import FEED_CURSOR
from hubcore.services.fields import ProjectId
from hubcore.services.requests import Request
from hubcore.services.sessions import RECOVERY_PATH

ANSWERS_MAX = 10
COMMENTS_MAX = 10
EVENTS_MAX = 20
STALE_MAX = 10
TEXT_MAX = 200
COUNT_CAP = 10_000
RANKED_AMONG = 200


def cut(text: str | None) -> tuple[str | None, bool]:
    if text is None or len(text) <= TEXT_MAX:
        return text, False
    return text[:TEXT_MAX], True


def section(items: list[dict[str, Any]], total: int, shown: int) -> dict[str, Any]:
    more = max(total - shown, 0)
    out: dict[str, Any] = {"items": items, "more": min(more, COUNT_CAP)}
    if more > COUNT_CAP:
        out["more_capped"] = True
    return out


def _window(conn: sqlite3.Connection, actor: str, project_id: str) -> tuple[dict[str, Any], str, list[Any]]:
    """The `since` member, and the SQL condition (on events `e`) with its arguments."""
    cursor = get_cursor(conn, actor, FEED_CURSOR, project_id)
    if cursor is not None:
        return {"basis": "feed_cursor", "event_id": cursor}, "e.id > ?", [cursor]
    prev = _previous(conn, actor, project_id)
    if prev is not None:
        at = prev["last_activity_at"]
        return {"basis": "previous_session", "at": iso(at)}, "e.created_at > ?", [at]
    return {"basis": "none"}, "1", []


def _previous(conn: sqlite3.Connection, actor: str, project_id: str) -> sqlite3.Row | None:
    row: sqlite3.Row | None = conn.execute(
        """SELECT id, name, status, handoff, last_activity_at FROM sessions
           WHERE project_id = ? AND owner = ? AND pruned_at IS NULL
           ORDER BY last_activity_at DESC, id DESC LIMIT 1""",
        (project_id, actor),
    ).fetchone()
    return row


def _answers(
    conn: sqlite3.Connection, actor: str, project_id: str, cond: str, args: list[Any]
) -> tuple[list[dict[str, Any]], int]:
    sql = f"""FROM inbox i JOIN events e ON e.id = i.resolution_id
              WHERE i.project_id = ? AND i.actor = ? AND i.kind IN ('question', 'approval') AND {cond}"""
    total = conn.execute(f"SELECT COUNT(*) {sql}", [project_id, actor, *args]).fetchone()[0]
    rows = conn.execute(
        f"SELECT i.event_id, i.kind, e.id AS answer_id, e.actor, e.payload, e.created_at {sql} "
        f"ORDER BY e.id DESC LIMIT {ANSWERS_MAX}",
        [project_id, actor, *args],
    ).fetchall()
    return [_answer(r) for r in rows], int(total)


def _answer(row: sqlite3.Row) -> dict[str, Any]:
    payload = orjson.loads(row["payload"])
    expired = bool(payload.get("expired"))
    if row["kind"] == "approval":
        outcome = "approved" if payload.get("decision") == "approved" else "declined"
        text = payload.get("note") or payload.get("body")
    else:
        outcome = "expired" if expired else "answered"
        text = payload.get("body")
    reply, truncated = cut(text if isinstance(text, str) else None)
    item = {
        "id": row["event_id"],
        "answer_id": row["answer_id"],
        "outcome": outcome,
        "expired": expired,
        "reply": reply,
        "who": row["actor"],
        "when": iso(row["created_at"]),
    }
    if truncated:
        item["truncated"] = True
    return item


def _comments(conn: sqlite3.Connection, actor: str, project_id: str) -> tuple[list[dict[str, Any]], int]:
    """The human's open comments on the caller's artifacts in the project, newest first (issue 25
    part 7): not windowed, since an open comment matters until it is resolved."""
    sql = """FROM artifact_comments c JOIN artifacts a ON a.id = c.artifact_id
             WHERE a.project_id = ? AND a.actor = ? AND c.author = ? AND c.done = 0"""
    args = [project_id, actor, HUMAN]
    total = conn.execute(f"SELECT COUNT(*) {sql}", args).fetchone()[0]
    rows = conn.execute(
        f"""SELECT c.id, c.artifact_id, a.title, c.body, c.anchor, c.anchor_version, c.created_at
                            {sql} ORDER BY c.id DESC LIMIT {COMMENTS_MAX}""",
        args,
    ).fetchall()
    out = []
    for r in rows:
        body, truncated = cut(r["body"])
        item: dict[str, Any] = {
            "artifact_id": r["artifact_id"],
            "title": r["title"],
            "comment_id": r["id"],
            "body": body,
            "version": r["anchor_version"],
            "at": iso(r["created_at"]),
        }
        anchor = orjson.loads(r["anchor"]) if r["anchor"] else None
        if isinstance(anchor, dict) and anchor.get("mode") == "text":
            quote, cut_quote = cut(anchor.get("quote"))
            item["quote"] = quote
            truncated = truncated or cut_quote
        if truncated:
            item["truncated"] = True
        out.append(item)
    return out, int(total)


def _pointer(row: sqlite3.Row, **extra: Any) -> dict[str, Any]:
    summary, truncated = cut(row["summary"])
    item = {
        "id": row["id"],
        "kind": row["kind"],
        "actor": row["actor"],
        "summary": summary,
        "at": iso(row["created_at"]),
        **extra,
    }
    if truncated:
        item["truncated"] = True
    return item


def _events(
    conn: sqlite3.Connection, actor: str, project_id: str, cond: str, args: list[Any], answered: set[str]
) -> tuple[list[dict[str, Any]], int]:
    waiting = conn.execute(
        """SELECT e.id, e.kind, e.actor, e.summary, e.created_at FROM inbox i JOIN events e ON e.id = i.event_id
           WHERE i.project_id = ? AND i.status = 'waiting' ORDER BY e.id DESC""",
        (project_id,),
    ).fetchall()
    open_ids = {r["id"] for r in waiting}
    recent = conn.execute(
        f"""SELECT e.id, e.kind, e.actor, e.summary, e.created_at FROM events e
            WHERE e.project_id = ? AND e.kind != 'system' AND {cond} ORDER BY e.id DESC LIMIT {RANKED_AMONG}""",
        [project_id, *args],
    ).fetchall()
    rest = [r for r in recent if r["id"] not in answered and r["id"] not in open_ids]
    others = [r for r in rest if r["actor"] != actor and r["kind"] != "session"]
    own = [r for r in rest if r["actor"] == actor or r["kind"] == "session"]
    ranked = [_pointer(r, open=True) for r in waiting] + [_pointer(r) for r in others + own]
    skip = sorted(answered | open_ids)
    marks = ",".join("?" * len(skip)) or "''"
    window_total = conn.execute(
        f"""SELECT COUNT(*) FROM (SELECT 1 FROM events e WHERE e.project_id = ? AND e.kind != 'system'
            AND {cond} AND e.id NOT IN ({marks}) LIMIT {COUNT_CAP + EVENTS_MAX + 1})""",
        [project_id, *args, *skip],
    ).fetchone()[0]
    return ranked[:EVENTS_MAX], len(waiting) + int(window_total)


# Sections parts provide (spec: session_brief), as they read when no part in the hub provides them:
# with no knowledge base, no page can be overdue.
PART_SECTIONS: dict[str, Callable[[], dict[str, Any]]] = {"stale_pages": lambda: section([], 0, 0)}


def _part_sections(
    conn: sqlite3.Connection, caller: Caller, project_id: str, since: dict[str, Any], parts: Sequence[Part]
) -> dict[str, Any]:
    out = {name: empty() for name, empty in PART_SECTIONS.items()}
    for part in parts:
        out.update(part.brief(conn, caller, project_id, since))
    return out


class SessionBrief(Request):
    """`session_brief`: what to know before starting work in a project."""

    project_id: ProjectId


class BriefService:
    def __init__(self, core: Core) -> None:
        self.core = core

    async def brief(self, caller: Caller, req: SessionBrief) -> dict[str, Any]:
        pid = req.project_id
        actor = caller.actor
        parts = self.core.parts

        def read(conn: sqlite3.Connection) -> dict[str, Any]:
            readable_project(conn, caller, pid)
            since, cond, args = _window(conn, actor, pid)
            answers, answers_total = _answers(conn, actor, pid, cond, args)
            answered = {a["answer_id"] for a in answers}
            events, events_total = _events(conn, actor, pid, cond, args, answered)
            prev = _previous(conn, actor, pid)
            comments, comments_total = _comments(conn, actor, pid)
            return {
                "project_id": pid,
                "since": since,
                "answers": section(answers, answers_total, len(answers)),
                "previous_session": None
                if prev is None
                else {
                    "session_id": prev["id"],
                    "name": prev["name"],
                    "status": prev["status"],
                    "last_activity_at": iso(prev["last_activity_at"]),
                    "handoff": prev["handoff"],
                    "recovery_path": RECOVERY_PATH,
                },
                "events": section(events, events_total, len(events)),
                "comments": section(comments, comments_total, len(comments)),
                **_part_sections(conn, caller, pid, since, parts),
            }

        return await self.core.store.read(read)
