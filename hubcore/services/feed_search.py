"""What the feed gives the search index: each event as a document of family `feed`, taken in id
order from the newest indexed (one source, `feed`), and how a feed hit reads."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import orjson

from hubcore.parts.protocol import SearchBatch, SearchDoc, snippet_of

SOURCE = "feed"
FAMILY = "feed"
BATCH = 2000  # events per indexing command: a long catch-up never holds the writer for long


def mark(conn: sqlite3.Connection) -> str:
    """The newest event id ("" with none): event ids are minted in order, so the index of events
    is incremental from it."""
    row = conn.execute("SELECT MAX(id) FROM events").fetchone()
    return str(row[0] or "")


def batch(conn: sqlite3.Connection, since: str | None) -> SearchBatch:
    """The events after `since` (a mark), oldest first, at most `BATCH`."""
    rows = conn.execute(
        """SELECT id, project_id, kind, actor, summary, payload, session_id FROM events
                           WHERE id > ? ORDER BY id LIMIT ?""",
        (since or "", BATCH),
    ).fetchall()
    docs = [_event_doc(r) for r in rows]
    last = rows[-1][0] if rows else (since or "")
    return SearchBatch(docs, last, replace=False, more=len(rows) == BATCH, still=_standing)


def _standing(conn: sqlite3.Connection, docs: Sequence[SearchDoc]) -> list[SearchDoc]:
    """The documents whose events still exist (one removed while the batch was read is left out)."""
    if not docs:
        return []
    held = {
        r[0]
        for r in conn.execute(
            "SELECT id FROM events WHERE id IN (SELECT value FROM json_each(?))",
            (orjson.dumps([d.key for d in docs]).decode(),),
        )
    }
    return [d for d in docs if d.key in held]


def hit(row: sqlite3.Row, meta: Mapping[str, Any]) -> dict[str, Any]:
    """A feed hit's own members."""
    return {
        "event_id": meta["id"],
        "event_kind": meta["event_kind"],
        "actor": meta["actor"],
        "session_id": row["session_id"],
    }


def _event_doc(row: sqlite3.Row | tuple[Any, ...]) -> SearchDoc:
    event_id, project_id, kind, actor, summary, payload_text, session_id = tuple(row)
    try:
        payload = orjson.loads(payload_text)
    except orjson.JSONDecodeError:
        payload = {}
    body = payload.get("body") if isinstance(payload, dict) else None
    shown = body if isinstance(body, str) and body.strip() else summary
    text = "\n".join([summary, *_words(payload)])
    return SearchDoc(
        FAMILY,
        event_id,
        project_id,
        text,
        snippet_of(shown),
        session_id,
        {"id": event_id, "event_kind": kind, "actor": actor},
    )


def _words(value: Any) -> Iterator[str]:
    """Every string and number inside a JSON value (keys included): the payload's indexed text,
    never its serialised JSON punctuation."""
    if isinstance(value, dict):
        for key, inner in value.items():
            yield str(key)
            yield from _words(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _words(inner)
    elif isinstance(value, str | int | float) and not isinstance(value, bool):
        yield str(value)
