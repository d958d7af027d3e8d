"""Feed events: the rules every appended event obeys, in one place.

`insert_event` is the only way an event enters `events`. It runs inside a write command (the
caller's `store.execute` function), so the ceiling check, the id mint, the row and the per-project
tally are one atomic step. Other parts (sessions, artifacts, the knowledge base, enrolment) append
through it too, passing an `Effects` to publish after their commit.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from hubcore.clock import iso
from hubcore.errors import HubError, conflict, invalid, quoted, shown, too_large
from hubcore.services import ids
from hubcore.services.changes import Effects
from hubcore.services.validate import one_line

KINDS = (
    "signal",
    "finished",
    "question",
    "answer",
    "approval",
    "artifact",
    "session",
    "idea",
    "system",
    "enrol_request",
)
# Session lifecycle and audit records are appended past the ceiling.
EXEMPT_KINDS = frozenset({"session", "system"})
HUB_ACTOR = "hub"
SUMMARY_MAX = 1024
PAYLOAD_MAX = 256 * 1024
SESSION_ID_MAX = 128


# 1 when the event `:id` of `:project` lies above the human's cursor (no cursor, or no project row:
# every event does), else 0: how much the event adds to, or its removal takes from, the project's
# kept unseen count (`feed_stats.unseen`). A new id is always past the cursor (ids only grow); the
# check keeps the count true without leaning on that.
ABOVE_CURSOR = """(:id > COALESCE((SELECT p.last_seen_event FROM projects p WHERE p.id = :project), ''))"""


@dataclass(frozen=True)
class NewEvent:
    project_id: str
    kind: str
    actor: str
    summary: str
    payload: Mapping[str, Any]
    session_id: str | None = None
    thread_id: str | None = None  # the question or approval an answer belongs to
    roots_thread: bool = False  # a question or approval: its own id is its thread id
    exempt: bool = False  # hub resolutions and audit records are never refused by the ceiling


def check_summary(value: Any, payload: Mapping[str, Any], *, field: str = "summary") -> str:
    """The stored summary: trimmed, one line, at most 1024 characters.

    A missing or blank summary falls back to the first line of a string `body` (cut to the limit),
    because a signal's body is its row text; with neither the event is refused.
    """
    if value is None or (isinstance(value, str) and not value.strip()):
        body = payload.get("body")
        first = body.strip().splitlines()[0].strip()[:SUMMARY_MAX] if isinstance(body, str) and body.strip() else ""
        if first and one_line(first):  # only a NUL can survive splitlines, and no summary may hold one
            return first
        raise invalid(f"{field} is required (or a string body to take it from)", field=field)
    if not isinstance(value, str):
        raise invalid(f"{field} must be a string", field=field)
    summary = value.strip()
    if not one_line(summary):
        raise invalid(f"{field} must be one line", field=field)
    if len(summary) > SUMMARY_MAX:
        raise too_large(
            f"{field} is {len(summary)} characters; the limit is {SUMMARY_MAX}", field=field, limit=SUMMARY_MAX
        )
    return summary


def check_payload(value: Any) -> dict[str, Any]:
    """A JSON object whose serialized form is at most 256 KiB."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise invalid("payload must be a JSON object", field="payload")
    try:
        size = len(orjson.dumps(dict(value)))
    except TypeError as exc:
        member = wide_integer_at(value, "payload")
        if member is not None:
            # Refused, not stored: JSON readers (orjson, JavaScript) cannot hold it exactly either.
            raise invalid(f"{member} is an integer beyond 64 bits; send it as a string", field=member) from None
        raise invalid(f"payload cannot be stored as JSON: {exc}", field="payload") from None
    if size > PAYLOAD_MAX:
        raise too_large(
            f"payload is {size} bytes serialized; the limit is {PAYLOAD_MAX}", field="payload", limit=PAYLOAD_MAX
        )
    return dict(value)


INT_MIN, INT_MAX = -(2**63), 2**64 - 1  # the integers orjson (and SQLite's JSON) store exactly


def wide_integer_at(value: Any, path: str, depth: int = 0) -> str | None:
    """Where the first integer beyond 64 bits sits inside `value` (`payload.a.b[2]`), or None.
    The walk stops deeper than orjson nests (255), which refuses such a payload anyway."""
    if isinstance(value, bool) or depth > 256:
        return None
    if isinstance(value, int):
        return path if not INT_MIN <= value <= INT_MAX else None
    if isinstance(value, Mapping):
        items: Any = ((f"{path}.{str(k)[:64]}", v) for k, v in value.items())
    elif isinstance(value, list | tuple):
        items = ((f"{path}[{i}]", v) for i, v in enumerate(value))
    else:
        return None
    return next((found for where, v in items if (found := wide_integer_at(v, where, depth + 1)) is not None), None)


def check_kinds(value: Any) -> tuple[str, ...]:
    """A kind filter: one kind, a comma-separated list, or a list; every entry a known kind."""
    if value is None or value == "" or value == []:
        return ()
    parts = value.split(",") if isinstance(value, str) else value
    if not isinstance(parts, list | tuple) or not all(isinstance(p, str) for p in parts):
        raise invalid("kind must be a string or a list of strings", field="kind")
    kinds = tuple(dict.fromkeys(p.strip() for p in parts if p.strip()))
    unknown = [k for k in kinds if k not in KINDS]
    if unknown or not kinds:
        named = shown(", ".join(unknown)) if unknown else quoted(value)
        raise invalid(f"unknown kind {named}; kinds are {', '.join(KINDS)}", field="kind")
    return kinds


def ceiling_error(project_id: str, cap: int) -> HubError:
    return conflict(
        f"project {project_id!r} holds {cap} events, its cap (events_per_project = {cap}); nothing was appended",
        cap=cap,
        setting="events_per_project",
    )


def check_ceiling(conn: sqlite3.Connection, project_id: str, cap: int) -> None:
    """Refuse when the project's feed already holds `cap` events (0 disables the ceiling)."""
    if cap <= 0:
        return
    row = conn.execute("SELECT events FROM feed_stats WHERE project_id = ?", (project_id,)).fetchone()
    if row is not None and row[0] >= cap:
        raise ceiling_error(project_id, cap)


def insert_event(
    conn: sqlite3.Connection, ev: NewEvent, *, now: float, cap: int, effects: Effects | None = None
) -> dict[str, Any]:
    """Append one event (ceiling checked unless exempt); returns it rendered."""
    if ev.kind not in KINDS:
        raise invalid(f"unknown kind {ev.kind!r}", field="kind")
    if not (ev.exempt or ev.kind in EXEMPT_KINDS):
        check_ceiling(conn, ev.project_id, cap)
    event_id = ids.mint(conn, now)
    payload = orjson.dumps(dict(ev.payload)).decode()
    thread = event_id if ev.roots_thread else ev.thread_id
    conn.execute(
        """INSERT INTO events (id, project_id, kind, actor, summary, payload, session_id, thread_id, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)""",
        (event_id, ev.project_id, ev.kind, ev.actor, ev.summary, payload, ev.session_id, thread, now),
    )
    conn.execute(
        f"""INSERT INTO feed_stats (project_id, events, bytes, newest_id, newest_at, unseen)
           VALUES (:project, 1, :bytes, :id, :at, {ABOVE_CURSOR})
           ON CONFLICT (project_id) DO UPDATE SET events = events + 1, bytes = bytes + excluded.bytes,
           newest_id = excluded.newest_id, newest_at = excluded.newest_at, unseen = unseen + excluded.unseen""",
        {
            "project": ev.project_id,
            "bytes": len(ev.summary.encode()) + len(payload.encode()),
            "id": event_id,
            "at": now,
        },
    )
    conn.execute(
        """INSERT INTO feed_actors (project_id, actor, events, last_at) VALUES (?, ?, 1, ?)
           ON CONFLICT (project_id, actor) DO UPDATE SET events = events + 1, last_at = excluded.last_at""",
        (ev.project_id, ev.actor, now),
    )
    rendered = {
        "id": event_id,
        "project_id": ev.project_id,
        "kind": ev.kind,
        "actor": ev.actor,
        "summary": ev.summary,
        "payload": dict(ev.payload),
        "session_id": ev.session_id,
        "thread_id": thread,
        "created_at": iso(now),
    }
    if effects is not None:
        effects.event(rendered)
    return rendered


EVENT_COLUMNS = "e.id, e.project_id, e.kind, e.actor, e.summary, e.payload, e.session_id, e.thread_id, e.created_at"


def render_event(row: sqlite3.Row) -> dict[str, Any]:
    return {
        "id": row["id"],
        "project_id": row["project_id"],
        "kind": row["kind"],
        "actor": row["actor"],
        "summary": row["summary"],
        "payload": orjson.loads(row["payload"]),
        "session_id": row["session_id"],
        "thread_id": row["thread_id"],
        "created_at": iso(row["created_at"]),
    }


def remove_events(conn: sqlite3.Connection, event_ids: list[str]) -> int:
    """Delete single events (an abandoned enrolment request, say) with their inbox items, keeping
    each project's tallies true: the event ceiling and unseen counts read them (an event above the
    human's cursor leaves the unseen count with it). Returns how many."""
    removed = 0
    for event_id in event_ids:
        row = conn.execute("SELECT project_id, summary, payload FROM events WHERE id = ?", (event_id,)).fetchone()
        if row is None:
            continue
        conn.execute("DELETE FROM inbox WHERE event_id = ?", (event_id,))
        conn.execute("DELETE FROM events WHERE id = ?", (event_id,))
        newest = conn.execute(
            "SELECT id, created_at FROM events WHERE project_id = ? ORDER BY id DESC LIMIT 1", (row["project_id"],)
        ).fetchone()
        conn.execute(
            f"""UPDATE feed_stats SET events = events - 1, bytes = MAX(0, bytes - :bytes), newest_id = :newest,
               newest_at = :newest_at, unseen = unseen - {ABOVE_CURSOR} WHERE project_id = :project""",
            {
                "bytes": len(row["summary"].encode()) + len(row["payload"].encode()),
                "newest": newest[0] if newest else None,
                "newest_at": newest[1] if newest else None,
                "id": event_id,
                "project": row["project_id"],
            },
        )
        removed += 1
    return removed


def purge_project(conn: sqlite3.Connection, project_id: str) -> None:
    """Remove a project's events (its audit events included) and everything keyed on them."""
    conn.execute("DELETE FROM inbox WHERE project_id = ?", (project_id,))
    conn.execute("DELETE FROM events WHERE project_id = ?", (project_id,))
    conn.execute("DELETE FROM feed_stats WHERE project_id = ?", (project_id,))
    conn.execute("DELETE FROM feed_actors WHERE project_id = ?", (project_id,))
    conn.execute("DELETE FROM actor_cursors WHERE project_id = ?", (project_id,))
    conn.execute("DELETE FROM idempotency_keys WHERE project_id = ?", (project_id,))
