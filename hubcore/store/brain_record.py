"""The replay record's mark in a brain file: the highest hub.db staging id its `calls` hold
(`hubcore.services.callstage`). Written in the same command as the rows it covers, so a move
repeated after a crash (the brain written, hub.db not yet told) appends nothing twice.

The table is made on the first move into a file (`CREATE TABLE IF NOT EXISTS`), not by the brain's
schema steps: a brain from before staging has none and its mark is 0, which every staged id passes.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from hubcore.store import brain


def mark(conn: sqlite3.Connection) -> int:
    """The highest staging id this brain took (0: none, or a file from before staging)."""
    try:
        row = conn.execute("SELECT staged FROM calls_moved WHERE id = 1").fetchone()
    except sqlite3.OperationalError:  # no table: never moved into
        return 0
    return 0 if row is None else int(row[0])


def before_append(conn: sqlite3.Connection) -> tuple[str | None, int | None]:
    """What a move checks first, in one statement: the seal's state (`brain.seal_state`) and the
    mark (None: no mark yet, the file was never moved into). A move writes each brain it touches
    once per step, so each statement it saves is one per brain and move."""
    try:
        row = conn.execute(
            "SELECT (SELECT state FROM seal WHERE id = 1), (SELECT staged FROM calls_moved WHERE id = 1)"
        ).fetchone()
    except sqlite3.OperationalError:  # no table: never moved into
        return brain.seal_state(conn), None
    return (None if row[0] is None else str(row[0])), (None if row[1] is None else int(row[1]))


def append(conn: sqlite3.Connection, rows: Sequence[tuple[int, float, str, str, str]], held: int | None) -> int:
    """Append the (staging id, at, tool, arguments, outcome) rows past the mark `held` (as
    `before_append` read it in this transaction), in the order given, and move the mark to the
    last id; how many were appended."""
    fresh = [r for r in rows if r[0] > (held or 0)]
    if not fresh:
        return 0
    brain.record_calls(conn, [r[1:] for r in fresh])
    if held is None:  # the first move into this file: its mark's table and row are made here
        conn.execute(
            "CREATE TABLE IF NOT EXISTS calls_moved (id INTEGER PRIMARY KEY CHECK (id = 1), staged INTEGER NOT NULL)"
        )
        conn.execute(
            """INSERT INTO calls_moved (id, staged) VALUES (1, ?)
               ON CONFLICT (id) DO UPDATE SET staged = max(staged, excluded.staged)""",
            (fresh[-1][0],),
        )
    else:
        conn.execute("UPDATE calls_moved SET staged = ? WHERE id = 1", (fresh[-1][0],))
    return len(fresh)
