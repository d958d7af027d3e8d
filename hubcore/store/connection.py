"""Opening a store file with the hub's pragmas."""

from __future__ import annotations

import logging
import resource
import sqlite3
from pathlib import Path

log = logging.getLogger("hubcore.store")
FILES_PER_CONNECTION = 3  # the database, its write-ahead log and its shared-memory index
# A store's pooled readers do not map the file (issue 28, docs/decisions.md "Performance"). A map
# (SQLite's `mmap_size`) let a read take pages from the OS page cache without copying them into
# the connection's 2 MiB cache, but every page a reader touched stayed resident in the hub's
# VmRSS, once per reader mapping it, growing with the database: the soak's RSS never levelled off.
# Measured against no map, the search and listing benches' CPU did not move (docs/benchmarks.md,
# "Third session: the read map and the soak"). tools/bench/read_map.py sets this to compare again.
READ_MMAP_BYTES = 0


def connect(
    path: Path, *, readonly: bool = False, synchronous: str = "normal", mmap_bytes: int = 0
) -> sqlite3.Connection:
    """A connection in WAL mode with the hub's pragmas. Autocommit: the actor manages transactions.
    `mmap_bytes` maps that much of the file for reads (0: none; a read error through a map is a
    signal rather than an error, so integrity checks of a damaged file never map it)."""
    if readonly:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False, isolation_level=None)
    else:
        conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute(f"PRAGMA synchronous={synchronous.upper()}")
    conn.execute("PRAGMA busy_timeout=5000")
    conn.execute("PRAGMA foreign_keys=ON")
    if mmap_bytes:
        conn.execute(f"PRAGMA mmap_size={int(mmap_bytes)}")
    conn.row_factory = sqlite3.Row
    return conn


def end_read(conn: sqlite3.Connection) -> bool:
    """End a pooled reader's read transaction: True when the connection can be reused; one left in
    an unknown state is closed instead (False)."""
    try:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
    except sqlite3.Error:
        conn.close()
        return False
    return True


def allow_open_files(connections: int, other: int = 1024) -> int:
    """Raise this process's soft limit on open files so that `connections` store connections and
    `other` sockets and files fit (the per-file pools are sized by settings; a typical service
    limit of 1024 would not hold them). Never lowers it; returns the soft limit now in force."""
    wanted = connections * FILES_PER_CONNECTION + other
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= wanted:
        return int(soft)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if target > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    if target < wanted:
        log.warning(
            "open files are limited to %d; the store pools may want %d (lower open_stores_max "
            "or open_readers_max, or raise the limit)",
            target,
            wanted,
        )
    return int(target)
