"""What each family feeds the search index: documents built from a part's own rows or files.

The parts call these from their `search_*` members (`hubcore.parts`), so the shape of a document
(what is indexed, what the snippet is) is decided here, once per family.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
from collections.abc import Iterator
from html.parser import HTMLParser
from typing import Any

import orjson

from hubcore.errors import HubError
from hubcore.parts import SearchBatch, SearchDoc
from hubcore.services.artifacts import diffs

SNIPPET_MAX = 200
KB_STEP_MAX = 500  # pages a knowledge base catch-up reads by path; past it the project is read whole
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


def kb_batch(conn: sqlite3.Connection, project_id: str, mark: str | None) -> SearchBatch:
    """The pages written since `mark` (the paths the write log names after its log id), or every
    page when the mark cannot say (never indexed, the log behind it, too many paths)."""
    now = kb_mark(conn)
    last = _log_id(mark)
    top = int(conn.execute("SELECT MAX(id) FROM log").fetchone()[0] or 0)
    if last is None or last > top or (last == top and mark != now):
        return SearchBatch(kb_docs(conn, project_id), now)
    paths = [r[0] for r in conn.execute("SELECT DISTINCT path FROM log WHERE id > ? LIMIT ?", (last, KB_STEP_MAX + 1))]
    if len(paths) > KB_STEP_MAX:
        return SearchBatch(kb_docs(conn, project_id), now)
    docs = kb_docs(conn, project_id, paths)
    held = {doc.key for doc in docs}
    gone = [("kb", f"{project_id}:{p}") for p in paths if f"{project_id}:{p}" not in held]
    return SearchBatch(docs, now, replace=False, gone=gone)


def _log_id(mark: str | None) -> int | None:
    head = (mark or "").split(":", 1)[0]
    return int(head) if head.isdigit() else None


def kb_docs(conn: sqlite3.Connection, project_id: str, paths: list[str] | None = None) -> list[SearchDoc]:
    """The project's pages (only `paths`, when given) as documents."""
    only = "" if paths is None else "WHERE p.path IN (SELECT value FROM json_each(:paths))"
    rows = conn.execute(f"""SELECT p.path, b.content FROM pages p JOIN blobs b ON b.version = p.version {only}
                            ORDER BY p.path""", {"paths": orjson.dumps(paths).decode()}).fetchall()
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


# -- artifacts --------------------------------------------------------------------------------------

ARTIFACT_TEXT_MAX = 1_000_000  # characters of a version's text indexed (the rest is left out)
ARTIFACT_SQL = """SELECT a.id, a.project_id, a.title, a.kind, a.description, a.version, a.updated_at, v.sha256,
    v.size_bytes, v.envelope FROM artifacts a
    JOIN artifact_versions v ON v.artifact_id = a.id AND v.version = a.version"""


def artifact_source(artifact_id: str) -> str:
    return f"artifact:{artifact_id}"


def artifact_mark(row: sqlite3.Row) -> str:
    """The current version and the row's last change: a new version or a draft moves it."""
    return f"{row['version']}:{row['updated_at']!r}"


def artifact_marks(conn: sqlite3.Connection) -> dict[str, str]:
    return {artifact_source(r["id"]): artifact_mark(r)
            for r in conn.execute("SELECT id, version, updated_at FROM artifacts")}


def artifact_row(conn: sqlite3.Connection, artifact_id: str) -> sqlite3.Row | None:
    """The artifact with its current (sealed) version's row; None once it is gone."""
    row: sqlite3.Row | None = conn.execute(f"{ARTIFACT_SQL} WHERE a.id = ?", (artifact_id,)).fetchone()
    return row


def diff_text(content: str) -> str:
    """A diff's paths and changed lines (issue 29); context lines are left out."""
    try:
        parsed = diffs.parse(content, files_max=1 << 30, hunks_max=1 << 30)
    except HubError:  # stored before the parser refused it: index it as text
        return content
    return diffs.search_text(parsed, ARTIFACT_TEXT_MAX)


def artifact_doc(row: sqlite3.Row, content: str | None) -> SearchDoc:
    """The current version's document: title, description and text (an HTML artifact's text
    without its markup); a protected version (`content` None) is indexed by its title only, never
    its ciphertext. The snippet is the opening of the indexed text. Artifacts outlive their
    sessions (a prune never touches them), so the document carries no session."""
    meta = {"id": row["id"], "version": row["version"], "size_bytes": row["size_bytes"]}
    if content is None:
        text = row["title"]
    else:
        # HTML is cut before parsing too (markup rarely exceeds three times the text it holds).
        body = html_text(content[: ARTIFACT_TEXT_MAX * 4]) if row["kind"] == "html" else (
            diff_text(content) if row["kind"] == "diff" else content)
        text = "\n".join(part for part in (row["title"], row["description"], body[:ARTIFACT_TEXT_MAX]) if part)
    return SearchDoc("artifact", row["id"], row["project_id"], text, snippet_of(text), None, meta)


class _TextOf(HTMLParser):
    """The text an HTML document shows: character data outside script, style and template, with
    a space where a block-level element starts or ends (inline markup joins what it splits)."""

    HIDDEN = frozenset({"script", "style", "template", "noscript"})
    BREAKS = frozenset({"address", "article", "aside", "blockquote", "br", "dd", "div", "dl", "dt", "figcaption",
                        "figure", "footer", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li", "main", "nav",
                        "ol", "p", "pre", "section", "table", "td", "th", "title", "tr", "ul"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._hidden = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.HIDDEN:
            self._hidden += 1
        elif tag in self.BREAKS:
            self.parts.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag in self.HIDDEN and self._hidden:
            self._hidden -= 1
        elif tag in self.BREAKS:
            self.parts.append(" ")

    def handle_data(self, data: str) -> None:
        if not self._hidden:
            self.parts.append(data)


def html_text(content: str) -> str:
    """An HTML artifact's visible text, words kept apart where elements meet."""
    parser = _TextOf()
    parser.feed(content)
    parser.close()
    return _SPACE.sub(" ", "".join(parser.parts)).strip()
