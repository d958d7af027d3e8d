"""Opening a store file with the hub's pragmas."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def connect(path: Path, *, readonly: bool = False, synchronous: str = "normal") -> sqlite3.Connection:
    """A connection in WAL mode with the hub's pragmas. Autocommit: the actor manages transactions."""
    if readonly:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False, isolation_level=None)
    else:
        conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute(f"PRAGMA synchronous={synchronous.upper()}")
    conn.execute("PRAGMA busy_timeout=5000")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.row_factory = sqlite3.Row
    return conn
