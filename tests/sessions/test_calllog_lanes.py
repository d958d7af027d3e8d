"""A move of staged replay rows over more sessions than it writes at once (issue 27 part 5): the
brains are written in lanes, each session's rows once and in the order staged; a session whose
brain refuses its rows has them forgotten, one whose write fails keeps them staged for the next
move, and neither stops the others. Runs on asyncio and trio."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

import pytest

from hubcore.errors import HubError
from hubcore.services import callstage
from hubcore.services.calllog import Call
from hubcore.services.callstage import CONCURRENT_BRAINS, Mover, Staged
from hubcore.services.sessions_schema import V16_CALL_STAGING

pytestmark = pytest.mark.anyio

SESSIONS = [f"s{n:02d}" for n in range(3 * CONCURRENT_BRAINS + 1)]
REFUSED, BROKEN = SESSIONS[3], SESSIONS[CONCURRENT_BRAINS + 3]  # in the same lane, with others after them


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


class Brains:
    def __init__(self) -> None:
        self.written: dict[str, list[tuple[int, str]]] = {}
        self.writes = 0
        self.broken = True

    async def write(self, session_id: str, rows: list[Staged]) -> None:
        self.writes += 1
        if session_id == REFUSED:
            raise HubError("not_found", f"session {session_id} not found")
        if session_id == BROKEN and self.broken:
            raise RuntimeError("disk on fire")
        assert session_id not in self.written, "a session's rows were written twice"
        self.written[session_id] = [(row.id, row.tool) for row in rows]


def store() -> tuple[sqlite3.Connection, Callable[..., Any]]:
    conn = sqlite3.connect(":memory:", isolation_level=None)
    V16_CALL_STAGING(conn)

    async def run(fn: Callable[[sqlite3.Connection], Any]) -> Any:
        return fn(conn)

    return conn, run


async def test_a_move_writes_every_session_once_in_order_past_a_failed_one() -> None:
    conn, run = store()
    brains = Brains()
    for turn in range(3):
        callstage.stage(conn, {sid: [Call(float(turn), f"t{turn}", "{}", "ok")] for sid in SESSIONS})

    written = await Mover(run, run, brains.write).move()

    assert brains.writes == len(SESSIONS) and written == len(SESSIONS) - 1
    tools = {sid: [tool for _, tool in rows] for sid, rows in brains.written.items()}
    assert tools == {sid: ["t0", "t1", "t2"] for sid in SESSIONS if sid not in (REFUSED, BROKEN)}
    for rows in brains.written.values():
        assert [i for i, _ in rows] == sorted(i for i, _ in rows)  # the staged order
    # The refused session's rows are forgotten; the broken one's wait for the next move.
    left = callstage.staged(conn, None, 100)
    assert {sid for sid, _ in left} == {BROKEN} and [r.tool for _, r in left] == ["t0", "t1", "t2"]
    brains.broken = False
    assert await Mover(run, run, brains.write).move() == 1
    assert [tool for _, tool in brains.written[BROKEN]] == ["t0", "t1", "t2"]
    assert callstage.count(conn) == 0


async def test_a_move_of_one_session_leaves_the_others_staged() -> None:
    conn, run = store()
    brains = Brains()
    callstage.stage(conn, {"a": [Call(1.0, "x", "{}", "ok")], "b": [Call(2.0, "y", "{}", "ok")]})
    await Mover(run, run, brains.write).move("b")
    assert list(brains.written) == ["b"] and [sid for sid, _ in callstage.staged(conn, None, 10)] == ["a"]


async def test_a_move_past_one_batch_takes_every_row(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(callstage, "MOVE_BATCH", 5)
    conn, run = store()
    seen: dict[str, list[str]] = {}

    async def write(session_id: str, rows: list[Staged]) -> None:
        seen.setdefault(session_id, []).extend(r.tool for r in rows)

    callstage.stage(conn, {"a": [Call(float(n), f"t{n}", "{}", "ok") for n in range(12)]})
    await Mover(run, run, write).move()
    assert seen == {"a": [f"t{n}" for n in range(12)]} and callstage.count(conn) == 0
