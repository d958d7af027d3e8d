"""A brain's replay mark (`hubcore.store.brain_record`): a move reads the seal and the mark in one
statement, appends only the rows past the mark, and makes the mark's table on its first move into
a file (a brain from before staging has none)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from hubcore.store import brain, brain_record


@pytest.fixture
def conn(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    conn = sqlite3.connect(tmp_path / "ses.db", isolation_level=None)
    brain.setup(conn)
    yield conn
    conn.close()


def row(n: int) -> tuple[int, float, str, str, str]:
    return (n, 1.7e9 + n / 7, f"tool{n}", f'{{"n": {n}}}', "ok")


def record(conn: sqlite3.Connection) -> list[tuple[float, str, str, str]]:
    return [tuple(r) for r in conn.execute("SELECT at, tool, arguments, outcome FROM calls ORDER BY id")]


def test_a_first_move_makes_the_mark_and_the_next_appends_only_what_is_past_it(conn: sqlite3.Connection) -> None:
    assert brain_record.before_append(conn) == (brain.UNSYNCED, None)  # a new file: no mark's table yet
    brain.set_seal(conn, None, now=1.0)
    assert brain_record.before_append(conn) == (None, None)
    assert brain_record.append(conn, [row(3), row(5)], None) == 2
    assert brain_record.before_append(conn) == (None, 5) and brain_record.mark(conn) == 5
    # A move repeated after a crash reads 3 and 5 again: only 8 is new.
    assert brain_record.append(conn, [row(3), row(5), row(8)], 5) == 1
    assert brain_record.mark(conn) == 8
    assert record(conn) == [r[1:] for r in (row(3), row(5), row(8))]


def test_rows_all_at_or_below_the_mark_write_nothing(conn: sqlite3.Connection) -> None:
    brain_record.append(conn, [row(4)], None)
    changes = conn.total_changes
    assert brain_record.append(conn, [row(2), row(4)], brain_record.mark(conn)) == 0
    assert conn.total_changes == changes and brain_record.mark(conn) == 4 and len(record(conn)) == 1


def test_the_seal_is_read_with_the_mark(conn: sqlite3.Connection) -> None:
    brain_record.append(conn, [row(1)], None)
    brain.set_seal(conn, brain.ENDED, now=2.0)
    assert brain_record.before_append(conn) == (brain.ENDED, 1)


def test_a_mark_table_left_without_its_row_is_mended_by_the_next_move(conn: sqlite3.Connection) -> None:
    conn.execute("CREATE TABLE calls_moved (id INTEGER PRIMARY KEY CHECK (id = 1), staged INTEGER NOT NULL)")
    assert brain_record.before_append(conn)[1] is None  # read as never moved into
    assert brain_record.append(conn, [row(6)], None) == 1 and brain_record.mark(conn) == 6
