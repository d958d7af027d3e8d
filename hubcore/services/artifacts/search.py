"""What artifacts give the search index: each artifact's current version as one document of family
`artifact` (one source per artifact, `artifact:<id>`), and how an artifact hit reads. A protected
version is indexed by its title only, never its ciphertext."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Mapping, Sequence
from html.parser import HTMLParser
from typing import Any

from hubcore.errors import HubError
from hubcore.parts.protocol import SearchBatch, SearchDoc, Still, snippet_of
from hubcore.services.artifacts import diffs

FAMILY = "artifact"
PREFIX = "artifact:"
TEXT_MAX = 1_000_000  # characters of a version's text indexed (the rest is left out)
ROW_SQL = """SELECT a.id, a.project_id, a.title, a.kind, a.description, a.version, a.updated_at, v.sha256,
    v.size_bytes, v.envelope FROM artifacts a
    JOIN artifact_versions v ON v.artifact_id = a.id AND v.version = a.version"""
_SPACE = re.compile(r"\s+")


def source(artifact_id: str) -> str:
    return f"{PREFIX}{artifact_id}"


def mark(row: sqlite3.Row) -> str:
    """The current version and the row's last change: a new version or a draft moves it."""
    return f"{row['version']}:{row['updated_at']!r}"


def marks(conn: sqlite3.Connection) -> dict[str, str]:
    return {source(r["id"]): mark(r) for r in conn.execute("SELECT id, version, updated_at FROM artifacts")}


def row_of(conn: sqlite3.Connection, artifact_id: str) -> sqlite3.Row | None:
    """The artifact with its current (sealed) version's row; None once it is gone."""
    row: sqlite3.Row | None = conn.execute(f"{ROW_SQL} WHERE a.id = ?", (artifact_id,)).fetchone()
    return row


def standing(artifact_id: str) -> Still:
    """An artifact's batch stands while the artifact exists (a deleted one is dropped with its
    mark; a version newer than the one read was noted, and the next pass reads it)."""

    def still(conn: sqlite3.Connection, docs: Sequence[SearchDoc]) -> Sequence[SearchDoc] | None:
        return docs if conn.execute("SELECT 1 FROM artifacts WHERE id = ?", (artifact_id,)).fetchone() else None

    return still


def batch(row: sqlite3.Row, content: str | None) -> SearchBatch:
    """The artifact's one document (`doc`) as its source's batch, standing while its row does."""
    return SearchBatch([doc(row, content)], mark(row), still=standing(row["id"]))


def hit(row: sqlite3.Row, meta: Mapping[str, Any]) -> dict[str, Any]:
    """An artifact hit's own members."""
    return {"artifact_id": meta.get("id"), "version": meta.get("version"), "size_bytes": meta.get("size_bytes")}


def diff_text(content: str) -> str:
    """A diff's paths and changed lines (issue 29); context lines are left out."""
    try:
        parsed = diffs.parse(content, files_max=1 << 30, hunks_max=1 << 30)
    except HubError:  # stored before the parser refused it: index it as text
        return content
    return diffs.search_text(parsed, TEXT_MAX)


def doc(row: sqlite3.Row, content: str | None) -> SearchDoc:
    """The current version's document: title, description and text (an HTML artifact's text
    without its markup); a protected version (`content` None) is indexed by its title only, never
    its ciphertext. The snippet is the opening of the indexed text. Artifacts outlive their
    sessions (a prune never touches them), so the document carries no session."""
    meta = {"id": row["id"], "version": row["version"], "size_bytes": row["size_bytes"]}
    if content is None:
        text = row["title"]
    else:
        # HTML is cut before parsing too (markup rarely exceeds three times the text it holds).
        body = (
            html_text(content[: TEXT_MAX * 4])
            if row["kind"] == "html"
            else (diff_text(content) if row["kind"] == "diff" else content)
        )
        text = "\n".join(part for part in (row["title"], row["description"], body[:TEXT_MAX]) if part)
    return SearchDoc(FAMILY, row["id"], row["project_id"], text, snippet_of(text), None, meta)


class _TextOf(HTMLParser):
    """The text an HTML document shows: character data outside script, style and template, with
    a space where a block-level element starts or ends (inline markup joins what it splits)."""

    HIDDEN = frozenset({"script", "style", "template", "noscript"})
    BREAKS = frozenset(
        {
            "address",
            "article",
            "aside",
            "blockquote",
            "br",
            "dd",
            "div",
            "dl",
            "dt",
            "figcaption",
            "figure",
            "footer",
            "h1",
            "h2",
            "h3",
            "h4",
            "h5",
            "h6",
            "header",
            "hr",
            "li",
            "main",
            "nav",
            "ol",
            "p",
            "pre",
            "section",
            "table",
            "td",
            "th",
            "title",
            "tr",
            "ul",
        }
    )

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
