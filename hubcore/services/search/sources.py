"""What each family feeds the search index: documents built from a part's own rows or files.

The parts call these from their `search_*` members (`hubcore.parts`), so the shape of a document
(what is indexed, what the snippet is) is decided here, once per family.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
from collections.abc import Iterator
from typing import Any

import orjson

from hubcore.parts import SearchBatch, SearchDoc

SNIPPET_MAX = 200
FEED_BATCH = 2000  # events per indexing command: a long catch-up never holds the writer for long
_SPACE = re.compile(r"\s+")


def snippet_of(text: str) -> str:
    """The opening of `text` as one line of plain text, at most `SNIPPET_MAX` characters."""
    flat = _SPACE.sub(" ", text).strip()
    return flat if len(flat) <= SNIPPET_MAX else flat[: SNIPPET_MAX - 1].rstrip() + "…"


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


# -- feed events ------------------------------------------------------------------------------------

def feed_mark(conn: sqlite3.Connection) -> str:
    """The newest event id ("" with none): event ids are minted in order, so the index of events
    is incremental from it."""
    row = conn.execute("SELECT MAX(id) FROM events").fetchone()
    return str(row[0] or "")


def feed_batch(conn: sqlite3.Connection, mark: str | None) -> SearchBatch:
    """The events after `mark`, oldest first, at most `FEED_BATCH`."""
    rows = conn.execute("""SELECT id, project_id, kind, actor, summary, payload, session_id FROM events
                           WHERE id > ? ORDER BY id LIMIT ?""", (mark or "", FEED_BATCH)).fetchall()
    docs = [_event_doc(r) for r in rows]
    last = rows[-1][0] if rows else (mark or "")
    return SearchBatch(docs, last, replace=False, more=len(rows) == FEED_BATCH)


def _event_doc(row: sqlite3.Row | tuple[Any, ...]) -> SearchDoc:
    event_id, project_id, kind, actor, summary, payload_text, session_id = tuple(row)
    try:
        payload = orjson.loads(payload_text)
    except orjson.JSONDecodeError:
        payload = {}
    body = payload.get("body") if isinstance(payload, dict) else None
    shown = body if isinstance(body, str) and body.strip() else summary
    text = "\n".join([summary, *_words(payload)])
    return SearchDoc("feed", event_id, project_id, text, snippet_of(shown), session_id,
                     {"id": event_id, "event_kind": kind, "actor": actor})


# -- session brains ---------------------------------------------------------------------------------

def brain_source(session_id: str) -> str:
    return f"brain:{session_id}"


def brain_mark(conn: sqlite3.Connection) -> str:
    """A digest of every entry's path and version: it moves with any write or delete."""
    digest = hashlib.sha256()
    for path, version in conn.execute("SELECT path, version FROM entries ORDER BY path"):
        digest.update(f"{path}\0{version}\0".encode())
    return digest.hexdigest()[:32]


def brain_docs(conn: sqlite3.Connection, session_id: str, project_id: str) -> list[SearchDoc]:
    docs = []
    for path, value in conn.execute("SELECT path, value FROM entries ORDER BY path"):
        text = bytes(value).decode("utf-8", "replace")
        docs.append(SearchDoc("brain", f"{session_id}:{path}", project_id, f"{path}\n{text}",
                              snippet_of(text), session_id, {"path": path}))
    return docs


# -- knowledge pages --------------------------------------------------------------------------------

def kb_source(project_id: str) -> str:
    return f"kb:{project_id}"


def kb_mark(conn: sqlite3.Connection) -> str:
    """The newest write-log row and the page count: every put, delete, revert or promote logs."""
    last = conn.execute("SELECT MAX(id) FROM log").fetchone()[0]
    pages = conn.execute("SELECT COUNT(*) FROM pages").fetchone()[0]
    return f"{last or 0}:{pages}"


def kb_docs(conn: sqlite3.Connection, project_id: str) -> list[SearchDoc]:
    rows = conn.execute("""SELECT p.path, b.content FROM pages p JOIN blobs b ON b.version = p.version
                           ORDER BY p.path""").fetchall()
    docs = []
    for path, content in rows:
        text = bytes(content).decode("utf-8", "replace")
        docs.append(SearchDoc("kb", f"{project_id}:{path}", project_id, f"{path}\n{text}",
                              snippet_of(_without_frontmatter(text)), None, {"path": path}))
    return docs


def _without_frontmatter(text: str) -> str:
    """The page's text after its frontmatter block (opened only by an exact `---` first line)."""
    lines = text.split("\n")
    if lines and lines[0].rstrip("\r") == "---":
        for i, line in enumerate(lines[1:], start=1):
            if line.rstrip("\r") in ("---", "..."):
                return "\n".join(lines[i + 1:])
    return text
