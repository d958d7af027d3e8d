"""The schema of a file that has one per session or per project (a brain, a knowledge base): made
or brought up to date on every open of the file's writer, in one transaction so that a crash leaves
the file as it was (and the next open redoes it)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable


def setup_file(conn: sqlite3.Connection, version: int, create: Callable[[sqlite3.Connection, int], None]) -> None:
    """Bring the file to `version`: `create(conn, found)` makes what is missing, told the version
    the file was at (0 for a new file), and the file is stamped `version`. Free when it is there
    already (the common case: one read of `PRAGMA user_version`)."""
    if conn.execute("PRAGMA user_version").fetchone()[0] == version:
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        found = conn.execute("PRAGMA user_version").fetchone()[0]  # again: another writer may have done it
        create(conn, found)
        if found < version:
            conn.execute(f"PRAGMA user_version = {int(version)}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
