"""A session's brain file: its entries under `/fs/` and `/kv/`, and its tool-call log (replay).

Storage only: rows in, rows out. What a path may be, the size limits, versions and the
`if_version` condition are rules of `hubcore.services.entries`, which the knowledge base shares.
Every function here runs on a connection handed to it by the brain's actor (writes) or its reader
pool (reads); the service's compare-and-write therefore happens inside one actor command.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from hubcore.store import jsonrows
from hubcore.store.schema import setup_file

SCHEMA_VERSION = 2
"""The brain file's `PRAGMA user_version`: 1 added the seal, 2 the change counter (`changes`, each
entry's `seq`, the tombstones in `gone`) the search index follows. A file at 0 is new or predates
both."""

ENDED, PRUNED, UNSYNCED = "ended", "pruned", "unsynced"
"""Seal states. `unsynced`: a new file, or one from before the seal, whose session's state is not
known yet; its first write learns it from hub.db (and commits it, unless that write is refused)."""


def setup(conn: sqlite3.Connection) -> None:
    """Create (or migrate) the brain's tables, in one transaction so a crash leaves it redoable."""
    setup_file(conn, SCHEMA_VERSION, _create)


def _create(conn: sqlite3.Connection, version: int) -> None:
    _create_tables(conn)
    if version == 0:  # new, or written before seals: the first write learns the session's state
        conn.execute("INSERT OR IGNORE INTO seal (id, state, at) VALUES (1, ?, NULL)", (UNSYNCED,))
    if version < 2:
        _add_changes(conn)


def _add_changes(conn: sqlite3.Connection) -> None:
    """The change counter: every put or delete takes the next `seq` (an entry keeps the seq of its
    last write, a deleted path leaves a tombstone in `gone`), so the search index reads only what
    changed after the seq it holds. `epoch` names this counter's lineage: a mark of another one
    (an older file, a rebuilt one) cannot be followed and the brain is read whole."""
    columns = {row[1] for row in conn.execute("PRAGMA table_info(entries)")}
    if "seq" not in columns:  # a file from before the counter: its entries count as written at 0
        conn.execute("ALTER TABLE entries ADD COLUMN seq INTEGER NOT NULL DEFAULT 0")
    conn.execute("CREATE INDEX IF NOT EXISTS entries_seq ON entries (seq)")
    conn.execute("CREATE TABLE IF NOT EXISTS gone (path TEXT PRIMARY KEY, seq INTEGER NOT NULL)")
    conn.execute("CREATE INDEX IF NOT EXISTS gone_seq ON gone (seq)")
    conn.execute(
        """CREATE TABLE IF NOT EXISTS changes (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            epoch TEXT NOT NULL,
            seq INTEGER NOT NULL
        )"""
    )
    conn.execute("INSERT OR IGNORE INTO changes (id, epoch, seq) VALUES (1, lower(hex(randomblob(8))), 0)")


def _create_tables(conn: sqlite3.Connection) -> None:
    conn.execute(
        """CREATE TABLE IF NOT EXISTS entries (
            path TEXT PRIMARY KEY,
            value BLOB NOT NULL,
            version TEXT NOT NULL,
            written_at REAL,
            written_by TEXT,
            seq INTEGER NOT NULL DEFAULT 0
        )"""
    )
    conn.execute(
        """CREATE TABLE IF NOT EXISTS calls (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            at REAL NOT NULL,
            tool TEXT NOT NULL,
            arguments TEXT NOT NULL,
            outcome TEXT NOT NULL
        )"""
    )
    # At most one row: present means entry writes are refused (the session ended or was pruned).
    conn.execute(
        """CREATE TABLE IF NOT EXISTS seal (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            state TEXT NOT NULL,
            at REAL
        )"""
    )


def seal_state(conn: sqlite3.Connection) -> str | None:
    """`ended`, `pruned` or `unsynced` when sealed; None when the brain takes writes."""
    row = conn.execute("SELECT state FROM seal WHERE id = 1").fetchone()
    return None if row is None else str(row[0])


def set_seal(conn: sqlite3.Connection, state: str | None, *, now: float) -> None:
    """Seal the brain in `state`, or lift the seal with None."""
    if state is None:
        conn.execute("DELETE FROM seal")
    else:
        conn.execute(
            """INSERT INTO seal (id, state, at) VALUES (1, ?, ?)
                        ON CONFLICT (id) DO UPDATE SET state = excluded.state, at = excluded.at""",
            (state, now),
        )


@dataclass(frozen=True)
class Entry:
    path: str
    value: bytes
    version: str
    written_at: float | None

    @property
    def kind(self) -> str:
        return "key" if self.path.startswith("/kv/") else "file"


def read_entry(conn: sqlite3.Connection, path: str) -> Entry | None:
    row = conn.execute("SELECT path, value, version, written_at FROM entries WHERE path = ?", (path,)).fetchone()
    if row is None:
        return None
    return Entry(row[0], bytes(row[1]), row[2], row[3])


def is_directory(conn: sqlite3.Connection, path: str) -> bool:
    prefix = path.rstrip("/") + "/"
    return (
        conn.execute(
            "SELECT 1 FROM entries WHERE path > ? AND path < ? LIMIT 1", (prefix, prefix + "\U0010ffff")
        ).fetchone()
        is not None
    )


def held_version(conn: sqlite3.Connection, path: str) -> str | None:
    """The version stored at `path`, or None when nothing is."""
    row = conn.execute("SELECT version FROM entries WHERE path = ?", (path,)).fetchone()
    return None if row is None else str(row[0])


Counter = tuple[str, int]
"""The change counter's (epoch, seq) after a write: what the write hands the search index (the
index's mark of the brain once that write is in, `brain_search.Pushes`)."""


@dataclass(frozen=True)
class Before:
    """What a put checks first, read in the statement that takes its seq (`before_put`): the
    counter after it, the seal's state (None when the brain takes writes), the version held at
    the path (None when nothing is), whether the path is a directory (entries lie beneath it),
    whether a tombstone of the path is held (its delete left one that the put must remove), and
    the database's size in bytes (its pages: what the file holds once its write-ahead log is
    checkpointed)."""

    counter: Counter
    seal: str | None
    version: str | None
    directory: bool
    tombstone: bool
    size_bytes: int


def before_put(conn: sqlite3.Connection, path: str) -> Before:
    """Take the next seq and read what a put of `path` checks, in one statement. Each statement
    lets go of the GIL on the brain writer's thread, and under load every hand-over costs the
    event loop more than the statement does (docs/benchmarks.md, tenth session); so the seq is
    taken before the checks, and a refused put's rollback gives it back."""
    prefix = path.rstrip("/") + "/"
    row = conn.execute(
        """UPDATE changes SET seq = seq + 1 WHERE id = 1
           RETURNING epoch, seq, (SELECT state FROM seal WHERE id = 1),
                     (SELECT version FROM entries WHERE path = :path),
                     EXISTS (SELECT 1 FROM entries WHERE path > :prefix AND path < :end),
                     EXISTS (SELECT 1 FROM gone WHERE path = :path),
                     (SELECT page_count FROM pragma_page_count()) * (SELECT page_size FROM pragma_page_size())""",
        {"path": path, "prefix": prefix, "end": prefix + "\U0010ffff"},
    ).fetchone()
    return Before(
        (str(row[0]), int(row[1])),
        None if row[2] is None else str(row[2]),
        None if row[3] is None else str(row[3]),
        bool(row[4]),
        bool(row[5]),
        int(row[6]),
    )


def _next_seq(conn: sqlite3.Connection) -> Counter:
    row = conn.execute("UPDATE changes SET seq = seq + 1 WHERE id = 1 RETURNING epoch, seq").fetchone()
    return str(row[0]), int(row[1])


def put(conn: sqlite3.Connection, path: str, value: bytes, *, version: str, now: float, actor: str) -> Counter:
    """Write the entry at `path` under the next seq; the counter after it."""
    counter = _next_seq(conn)
    store(conn, path, value, version=version, now=now, actor=actor, seq=counter[1])
    return counter


def store(
    conn: sqlite3.Connection,
    path: str,
    value: bytes,
    *,
    version: str,
    now: float,
    actor: str,
    seq: int,
    tombstone: bool = True,
) -> None:
    """Write the entry at `path` under `seq`, taken by the caller in this transaction (`put`,
    `before_put`). `tombstone` False: the caller read in this transaction that the path has
    none, so none is deleted."""
    conn.execute(
        """INSERT INTO entries (path, value, version, written_at, written_by, seq) VALUES (?, ?, ?, ?, ?, ?)
           ON CONFLICT (path) DO UPDATE SET value = excluded.value, version = excluded.version,
           written_at = excluded.written_at, written_by = excluded.written_by, seq = excluded.seq""",
        (path, value, version, now, actor, seq),
    )
    if tombstone:
        conn.execute("DELETE FROM gone WHERE path = ?", (path,))


def delete(conn: sqlite3.Connection, path: str) -> Counter | None:
    """Remove the entry at `path` (leaving its tombstone); the counter after it, None when there
    was no entry (nothing changed)."""
    if conn.execute("DELETE FROM entries WHERE path = ?", (path,)).rowcount == 0:
        return None
    epoch, seq = _next_seq(conn)
    conn.execute(
        "INSERT INTO gone (path, seq) VALUES (?, ?) ON CONFLICT (path) DO UPDATE SET seq = excluded.seq",
        (path, seq),
    )
    return epoch, seq


@dataclass(frozen=True)
class Changes:
    """What a brain holds after a seq, read in one statement (one snapshot): the counter (`epoch`,
    `seq`), the entries written after it ((path, value)) and the paths deleted after it."""

    epoch: str
    seq: int
    written: list[tuple[str, bytes]]
    deleted: list[str]


def changes_since(conn: sqlite3.Connection, since: int) -> Changes:
    """The changes after `since` (-1: every entry, no tombstones)."""
    rows = conn.execute(
        """SELECT 0, epoch, seq, NULL FROM changes WHERE id = 1
           UNION ALL SELECT 1, path, seq, value FROM entries WHERE seq > :since
           UNION ALL SELECT 2, path, seq, NULL FROM gone WHERE seq > :since AND :since >= 0""",
        {"since": since},
    ).fetchall()
    epoch, seq = next(((str(r[1]), int(r[2])) for r in rows if r[0] == 0), ("", 0))
    written = sorted((str(r[1]), bytes(r[3])) for r in rows if r[0] == 1)
    return Changes(epoch, seq, written, sorted(str(r[1]) for r in rows if r[0] == 2))


def counter(conn: sqlite3.Connection) -> tuple[str, int] | None:
    """The change counter (epoch, seq), or None on a file from before it (not migrated yet)."""
    if conn.execute("PRAGMA user_version").fetchone()[0] < 2:
        return None
    row = conn.execute("SELECT epoch, seq FROM changes WHERE id = 1").fetchone()
    return None if row is None else (str(row[0]), int(row[1]))


def level(conn: sqlite3.Connection, directory: str, limit: int) -> tuple[list[dict[str, Any]], bool]:
    """One directory level: direct entries and subdirectories (size = sum of what is beneath)."""
    prefix = directory.rstrip("/") + "/"
    rows = conn.execute(
        "SELECT path, length(value) FROM entries WHERE path > ? AND path < ? ORDER BY path",
        (prefix, prefix + "\U0010ffff"),
    )
    children: dict[str, dict[str, Any]] = {}
    for path, size in rows:
        head, sep, _ = path[len(prefix) :].partition("/")
        child = prefix + head
        if sep:
            node = children.setdefault(child, {"path": child, "type": "dir", "size_bytes": 0})
            node["size_bytes"] += size
        else:
            kind = "key" if child.startswith("/kv/") else "file"
            children[child] = {"path": child, "type": kind, "size_bytes": size}
    entries = list(children.values())
    return entries[:limit], len(entries) > limit


def record_calls(conn: sqlite3.Connection, rows: list[tuple[float, str, str, str]]) -> None:
    """Append (at, tool, arguments, outcome) rows in the order given, in one statement."""
    jsonrows.insert(conn, "calls (at, tool, arguments, outcome)", rows)


def calls(conn: sqlite3.Connection) -> list[sqlite3.Row]:
    return conn.execute("SELECT at, tool, arguments, outcome FROM calls ORDER BY id").fetchall()
