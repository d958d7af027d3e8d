"""The replay record's staging in hub.db (issue 27 part 5, fourth session).

Each tool call made in a session is recorded in that session's brain file. Written one brain
command per session every 0.1 s, that cost about a brain command per call with 200 busy sessions.
Instead the call log (`hubcore.services.calllog`) stages its rows in hub.db's `call_staging`, in
the same command as the sessions' touches (one hub.db command every 0.1 s, batched with the hub's
other writes), and `Mover` moves them into each brain in bulk every 30 s (`calllog`), and before
anything reads the record (the call log's `flush(session_id)`).

A move is exact across a crash. Staged ids only grow (AUTOINCREMENT: never reused), and a
session's rows are staged in the order noted, so its rows are its ids in order. Each brain keeps
the highest staged id it took (`hubcore.store.brain_record`) in the same command as the rows: a
move that wrote a brain and died before hub.db forgot the rows skips them the next time. A
restored directory's hub.db may be older than its brains (the backup copies hub.db first), so its
first start raises the staging counter past every brain's mark (`raise_counter`).
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Awaitable, Callable, Iterable
from functools import partial
from typing import Any, NamedTuple

import anyio
import orjson

from hubcore.errors import HubError
from hubcore.services.calllog import MOVE_ROWS, Call
from hubcore.store import jsonrows

log = logging.getLogger("hubcore.callstage")

TABLE = "call_staging"
# Staged rows read by one step of a move: as many as make a move due, so a move the count called
# writes each brain once (its rows in one command), not once per step. Held at once while a step
# runs: about 25 MB when every summary is at its 500-character cap, about 12 MB at 120 characters
# (the JSON text read plus the rows built from it; docs/benchmarks.md, ninth session).
MOVE_BATCH = MOVE_ROWS
CONCURRENT_BRAINS = 8  # brain files written at once by one move


class Staged(NamedTuple):
    """A staged row: its id in `call_staging` (its place in the session's record) and the call's
    fields. A plain tuple in the order a brain's record takes it (`brain_record.append`): a move
    hands on thousands at once, and builds none of them twice."""

    id: int
    at: float
    tool: str
    arguments: str
    outcome: str


def stage(conn: sqlite3.Connection, calls: dict[str, list[Call]]) -> None:
    """Stage each session's rows, in the order given (their ids grow in that order)."""
    rows = [(sid, c.at, c.tool, c.arguments, c.outcome) for sid, calls_of in calls.items() for c in calls_of]
    jsonrows.insert(conn, "call_staging (session_id, at, tool, arguments, outcome)", rows)


def staged(conn: sqlite3.Connection, session_id: str | None, limit: int) -> list[tuple[str, Staged]]:
    """The oldest `limit` staged rows (of one session, or of all), in id order."""
    where, params = ("WHERE session_id = ?", (session_id, limit)) if session_id else ("", (limit,))
    # One row of JSON, not a row per call (`hubcore.store.jsonrows` says why). `at` goes as 17
    # digits of text, which give back the same float (SQLite's JSON writes reals with 15).
    (text,) = conn.execute(
        f"""SELECT json_group_array(json_array(id, session_id, printf('%!.17g', at), tool, arguments, outcome))
            FROM (SELECT * FROM call_staging {where} ORDER BY id LIMIT ?)""",
        params,
    ).fetchone()
    rows = sorted(orjson.loads(text))
    return [(str(r[1]), Staged(int(r[0]), float(r[2]), str(r[3]), str(r[4]), str(r[5]))) for r in rows]


def unstage(conn: sqlite3.Connection, upto: dict[str, int]) -> None:
    """Forget each session's staged rows up to the id given (moved, or refused by its brain)."""
    if upto:
        conn.execute(
            """DELETE FROM call_staging WHERE id IN (SELECT c.id FROM json_each(?) j
                   JOIN call_staging c ON c.session_id = j.key AND c.id <= j.value)""",
            (jsonrows.payload(upto),),
        )


def drop(conn: sqlite3.Connection, session_ids: Iterable[str]) -> None:
    """Forget the staged rows of sessions whose brains go."""
    conn.execute(
        "DELETE FROM call_staging WHERE session_id IN (SELECT value FROM json_each(?))",
        (jsonrows.payload(list(session_ids)),),
    )


def counter(conn: sqlite3.Connection) -> int:
    """The highest id ever staged (0 before the first)."""
    row = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = ?", (TABLE,)).fetchone()
    return 0 if row is None else int(row[0])


def raise_counter(conn: sqlite3.Connection, floor: int) -> None:
    """Make every id staged from now on higher than `floor` (a brain's mark from a backup)."""
    if floor <= counter(conn):
        return
    if conn.execute("UPDATE sqlite_sequence SET seq = ? WHERE name = ?", (floor, TABLE)).rowcount == 0:
        conn.execute("INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)", (TABLE, floor))


def orphans(conn: sqlite3.Connection) -> list[tuple[str, int]]:
    """Sessions with staged rows and no session row in hub.db, with their row counts."""
    return [
        (str(r[0]), int(r[1]))
        for r in conn.execute(
            """SELECT c.session_id, COUNT(*) FROM call_staging c LEFT JOIN sessions s ON s.id = c.session_id
               WHERE s.id IS NULL GROUP BY c.session_id ORDER BY c.session_id"""
        )
    ]


def count(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT COUNT(*) FROM call_staging").fetchone()[0])


WriteBrain = Callable[[str, list[Staged]], Awaitable[None]]
"""Appends a session's staged rows to its brain (those past its mark), in one command; raises
`HubError` when the brain refuses them (a pruned session's)."""
Read = Callable[[Callable[[sqlite3.Connection], Any]], Awaitable[Any]]


class Mover:
    """Moves staged rows into their brains: reads them from hub.db, writes each session's rows to
    its brain in one command (a few brains at once), then forgets them in hub.db."""

    def __init__(self, read: Read, execute: Read, write_brain: WriteBrain) -> None:
        self._read = read
        self._execute = execute
        self._write_brain = write_brain

    async def move(self, session_id: str | None = None) -> int:
        """Move every row staged so far (or `session_id`'s); how many brains were written."""
        written = 0
        while True:
            rows: list[tuple[str, Staged]] = await self._read(lambda conn: staged(conn, session_id, MOVE_BATCH))
            done: dict[str, int] = {}
            if not rows:
                return written
            by_session: dict[str, list[Staged]] = {}
            for sid, row in rows:
                by_session.setdefault(sid, []).append(row)
            pending = list(by_session.items())
            # A few lanes, each writing its share of the brains one after the other: the same
            # concurrency as a task per brain under a limiter, without a task per brain.
            async with anyio.create_task_group() as tg:
                for lane in range(min(CONCURRENT_BRAINS, len(pending))):
                    tg.start_soon(self._write_brains, pending[lane::CONCURRENT_BRAINS], done)
            await self._execute(partial(unstage, upto=done))
            written += len(done)
            if len(rows) < MOVE_BATCH or not done:  # all of it, or only rows that failed again
                return written

    async def _write_brains(self, share: list[tuple[str, list[Staged]]], done: dict[str, int]) -> None:
        for session_id, rows in share:
            try:
                await self._write_brain(session_id, rows)
            except HubError as err:  # a pruned session's file is going away: its record goes too
                log.debug("replay rows of session %s refused: %s", session_id, err.message)
            except Exception:
                log.exception("moving %d replay rows of session %s failed", len(rows), session_id)
                continue  # kept staged: the next move tries again
            done[session_id] = rows[-1].id
