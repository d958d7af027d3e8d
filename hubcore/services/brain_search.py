"""What session brains give the search index: each session's entries as documents of family
`brain` (one source per session, `brain:<id>`, caught up from the brain's change counter: a put
indexes its one entry, a delete removes its one document), and how a brain hit reads. A brain
hit is shown only while its session exists unpruned: the sessions part's `SCOPE`."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hubcore.parts.protocol import SearchBatch, SearchDoc, SearchScope, Still, snippet_of
from hubcore.store import brain

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


STEP_MAX = 500  # changes a catch-up reads by seq; past it the brain is read whole


def mark(conn: sqlite3.Connection) -> str:
    """`<epoch>:<seq>` of the brain's change counter: it moves with any write or delete. A file
    from before the counter (not migrated yet) gives a digest of every entry's path and version."""
    held = brain.counter(conn)
    if held is not None:
        return f"{held[0]}:{held[1]}"
    digest = hashlib.sha256()
    for path, version in conn.execute("SELECT path, version FROM entries ORDER BY path"):
        digest.update(f"{path}\0{version}\0".encode())
    return digest.hexdigest()[:32]


def batch(conn: sqlite3.Connection, session_id: str, project_id: str, since: str | None) -> SearchBatch:
    """The entries written and deleted after the mark `since`, or every entry (a `replace` batch)
    when the mark cannot be followed: never indexed, a digest (a file from before the counter), a
    counter of another lineage or behind it (a rebuilt or restored file), or too many changes."""
    still = standing(session_id)
    if brain.counter(conn) is None:
        return SearchBatch(docs(conn, session_id, project_id), mark(conn), still=still)
    epoch, _, seq = (since or "").partition(":")
    held = brain.changes_since(conn, int(seq) if seq.isdigit() else -1)
    now = f"{held.epoch}:{held.seq}"
    follows = epoch == held.epoch and seq.isdigit() and int(seq) <= held.seq
    if not follows or len(held.written) + len(held.deleted) > STEP_MAX:
        whole = held if not seq.isdigit() else brain.changes_since(conn, -1)
        return SearchBatch(_as_docs(whole.written, session_id, project_id), f"{whole.epoch}:{whole.seq}", still=still)
    gone = [(FAMILY, f"{session_id}:{path}") for path in held.deleted]
    return SearchBatch(_as_docs(held.written, session_id, project_id), now, replace=False, gone=gone, still=still)


@dataclass
class _Pending:
    """A brain's writes since the index last took them: every seq noted, and each path's newest
    write (seq, value; None for a delete). Only the newest value of a path is kept, so what waits
    for a pass is bounded by the paths written, not by the puts (a burst of 4 MiB puts to one path
    holds one value)."""

    project_id: str
    epoch: str
    seqs: set[int] = field(default_factory=set)
    latest: dict[str, tuple[int, bytes | None]] = field(default_factory=dict)


class Pushes:
    """What brain writes hand the search index directly, so a pass indexes a put without reading
    the session's row or the brain file (`SessionsPart.search_pushed`). The brain's actor is its
    file's only writer and every put or delete takes the next seq of the file's counter, so the
    writes noted here from the mark the index holds on, with no seq missing, are exactly what
    `batch` would read from the file: the same documents, the same removals, the same mark. A
    source whose notes do not follow its mark (never indexed, another epoch, a seq missing: a
    write whose note is still on its way, a restart, a fork's copy) is read from the file as
    before (`batch`), which is also what heals a crash between a write and its note."""

    def __init__(self) -> None:
        self._pending: dict[str, _Pending] = {}

    def note(self, session_id: str, project_id: str, counter: brain.Counter, path: str, value: bytes | None) -> None:
        """A committed write (`value` None: a delete) and the counter it left."""
        epoch, seq = counter
        held = self._pending.get(session_id)
        if held is None or held.epoch != epoch or len(held.seqs) >= STEP_MAX:
            held = self._pending[session_id] = _Pending(project_id, epoch)
        held.seqs.add(seq)
        newest = held.latest.get(path)
        if newest is None or newest[0] < seq:  # notes may arrive out of seq order
            held.latest[path] = (seq, value)

    def forget(self, session_id: str) -> None:
        """The brain file was replaced or removed: what was noted of it no longer follows."""
        self._pending.pop(session_id, None)

    def take(self, session_id: str, since: str | None) -> SearchBatch | None:
        """The batch the noted writes after the mark `since` make (taken: forgotten here), or
        None when they cannot stand for the file (then the file is read)."""
        held = self._pending.pop(session_id, None)
        epoch, _, seq = (since or "").partition(":")
        if held is None or epoch != held.epoch or not seq.isdigit():
            return None
        after = sorted(s for s in held.seqs if s > int(seq))
        if not after or after[-1] - int(seq) != len(after):  # nothing new, or a seq missing
            return None
        last = {path: value for path, (s, value) in held.latest.items() if s > int(seq)}
        written = sorted((p, v) for p, v in last.items() if v is not None)
        gone = [(FAMILY, f"{session_id}:{p}") for p in sorted(p for p, v in last.items() if v is None)]
        docs = _as_docs(written, session_id, held.project_id)
        return SearchBatch(docs, f"{epoch}:{after[-1]}", replace=False, gone=gone, still=standing(session_id))


def docs(conn: sqlite3.Connection, session_id: str, project_id: str) -> list[SearchDoc]:
    rows = [(str(p), bytes(v)) for p, v in conn.execute("SELECT path, value FROM entries ORDER BY path")]
    return _as_docs(rows, session_id, project_id)


def _as_docs(rows: Sequence[tuple[str, bytes]], session_id: str, project_id: str) -> list[SearchDoc]:
    found = []
    for path, value in rows:
        text = value.decode("utf-8", "replace")
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
