"""The replay record and last-activity touches, written behind (issue 11, part 1).

The flush policy is driven by a fake clock; the hub-level tests check what a caller sees: a read
writes nothing on its path, a session's end, reassignment and prune act on its whole record, and a
clean stop leaves every noted call in its brain, oldest first. Runs on asyncio and trio.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import anyio.lowlevel
import pytest

from hubcore.caller import Caller
from hubcore.clock import FakeClock
from hubcore.errors import HubError
from hubcore.hub import Hub
from hubcore.services.calllog import HARD_LIMIT_FACTOR, Call, CallLog
from tests.harness import test_settings as settings_for
from tests.requests import (
    a_brain_get,
    a_brain_put,
    a_project,
    a_prune,
    a_reassign,
    a_session_end,
    a_session_start,
    an_agent,
)

pytestmark = pytest.mark.anyio

HUMAN, ALICE = Caller.admin(), Caller.agent("alice")


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


class Writers:
    """What a `CallLog` hands its writers, kept for the test to read: `calls` are the stagings
    (each session's tools), `moves` the sessions each move was asked for (None: all)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, list[str]]] = []
        self.touches: list[dict[str, float]] = []
        self.moves: list[str | None] = []
        self.dropped: list[str] = []

    async def stage(self, calls: dict[str, list[Call]], touches: dict[str, float]) -> None:
        self.calls.extend((sid, [row.tool for row in rows]) for sid, rows in calls.items())
        self.touches.append(dict(touches))

    async def move(self, session_id: str | None) -> None:
        self.moves.append(session_id)

    async def drop(self, session_id: str) -> None:
        self.dropped.append(session_id)


def a_call(tool: str, at: float = 1.0) -> Call:
    return Call(at=at, tool=tool, arguments="{}", outcome="ok")


async def test_the_buffer_is_due_after_the_delay_or_at_once_when_full() -> None:
    now = [100.0]
    writers = Writers()
    log = CallLog(writers.stage, writers.move, writers.drop, delay=0.1, max_rows=4, monotonic=lambda: now[0])
    assert log.due_in() is None  # nothing to write
    log.note("s1", a_call("brain_get", at=5.0))
    assert log.due_in() == pytest.approx(0.1)
    now[0] += 0.06
    log.note("s2", a_call("feed_read", at=6.0))
    assert log.due_in() == pytest.approx(0.04)  # the oldest row sets the time
    now[0] += 0.04
    assert log.due_in() == 0.0
    now[0] -= 0.09
    log.note("s1", a_call("brain_put", at=7.0))
    log.note("s1", a_call("brain_list", at=4.0))
    assert log.pending == 4 and log.due_in() == 0.0  # full: due at once, whatever the clock
    await log.flush()
    assert sorted(writers.calls) == [("s1", ["brain_get", "brain_put", "brain_list"]), ("s2", ["feed_read"])]
    assert writers.touches == [{"s1": 7.0, "s2": 6.0}]  # the latest call per session
    assert writers.moves == [None]  # a whole flush moves every staged row
    assert log.pending == 0 and log.due_in() is None


async def test_staged_rows_are_due_to_move_a_move_time_after_the_first_staging() -> None:
    now = [100.0]
    writers = Writers()
    log = CallLog(writers.stage, writers.move, writers.drop, delay=0.1, move_every=3.0, monotonic=lambda: now[0])
    assert log.move_due_in() == pytest.approx(3.0)  # at start: a restart may find rows staged before
    await log.flush()
    assert writers.moves == [None] and log.move_due_in() is None
    log.note("s1", a_call("brain_get"))
    now[0] += 1.0
    async with log.exclusive():
        await log.stage_held(None)  # what `run` does when the buffer is due
    assert log.move_due_in() == pytest.approx(3.0) and writers.moves == [None]
    now[0] += 2.0
    log.note("s1", a_call("brain_put"))
    async with log.exclusive():
        await log.stage_held(None)
    assert log.move_due_in() == pytest.approx(1.0)  # the oldest staged row sets the time
    await log.flush("s1")  # one session's flush moves only its rows: the others still wait
    assert writers.moves == [None, "s1"] and log.move_due_in() == pytest.approx(1.0)


async def test_enough_staged_rows_make_a_move_due_at_once_and_a_move_starts_the_count_again() -> None:
    now = [100.0]
    writers = Writers()
    log = CallLog(writers.stage, writers.move, writers.drop, move_every=30.0, move_rows=3, monotonic=lambda: now[0])
    await log.flush()

    async def staged(sid: str) -> None:
        log.note(sid, a_call("brain_get"))
        async with log.exclusive():
            await log.stage_held(None)

    await staged("s1")
    await staged("s1")
    assert log.move_due_in() == pytest.approx(30.0)  # a row short
    await staged("s2")
    assert log.move_due_in() == 0.0  # 3 rows staged, of two sessions
    await log.flush("s1")  # one session's move leaves the others' rows, and the count
    assert log.move_due_in() == 0.0
    await log.flush()
    await staged("s1")
    assert log.move_due_in() == pytest.approx(30.0) and writers.moves == [None, "s1", None]


async def test_flushing_one_session_leaves_the_others_and_discard_drops_rows() -> None:
    writers = Writers()
    log = CallLog(writers.stage, writers.move, writers.drop, monotonic=lambda: 0.0)
    log.note("s1", a_call("a"))
    log.note("s2", a_call("b"))
    log.note("gone", a_call("c"))
    await log.flush("s1")
    assert writers.calls == [("s1", ["a"])] and writers.moves == ["s1"] and log.pending == 2
    await log.discard("gone")
    assert log.pending == 1 and writers.dropped == ["gone"]  # its staged rows go too
    await log.flush()
    assert writers.calls == [("s1", ["a"]), ("s2", ["b"])] and writers.moves == ["s1", None]


async def test_a_stalled_writer_bounds_the_buffer() -> None:
    writers = Writers()
    log = CallLog(writers.stage, writers.move, writers.drop, max_rows=2, monotonic=lambda: 0.0)
    for n in range(HARD_LIMIT_FACTOR * 2 + 3):
        log.note("s1", a_call(f"t{n}"))
    assert log.pending == HARD_LIMIT_FACTOR * 2 and log.dropped == 3


async def test_the_writer_task_writes_when_due_and_everything_when_cancelled() -> None:
    writers = Writers()
    log = CallLog(writers.stage, writers.move, writers.drop, delay=0.0)
    async with anyio.create_task_group() as tg:
        tg.start_soon(log.run)
        log.note("s1", a_call("a"))
        with anyio.fail_after(5):
            while not writers.calls:  # the counter the writer moves
                await anyio.lowlevel.checkpoint()
        log.delay = 3600.0  # the next row would wait an hour: only the cancel writes it
        log.note("s1", a_call("b"))
        tg.cancel_scope.cancel()
    assert writers.calls == [("s1", ["a"]), ("s1", ["b"])] and writers.moves[-1] is None  # all moved


# -- in the hub ------------------------------------------------------------------------------------


@pytest.fixture
async def hub(tmp_path: Path) -> AsyncIterator[Hub]:
    async with Hub.open(settings_for(tmp_path / "data"), clock=FakeClock()) as h:
        await h.projects.create(HUMAN, a_project(id="web"))
        await h.agents.create(HUMAN, an_agent(id="alice"))
        await h.agents.create(HUMAN, an_agent(id="bob"))
        h.brains.calls.delay = 3600.0  # nothing is written behind unless the test says when
        yield h


async def start(hub: Hub, name: str = "task") -> str:
    return str((await hub.sessions.start(ALICE, a_session_start("web", name)))["session_id"])


def logged(hub: Hub, sid: str) -> list[str]:
    """The tools in the session's brain file, oldest first, read without the hub."""
    path = hub.brains.path_of(sid)
    if not path.exists():
        return []
    with sqlite3.connect(path) as conn:
        return [r[0] for r in conn.execute("SELECT tool FROM calls ORDER BY id")]


def last_activity(hub: Hub, sid: str) -> float:
    with sqlite3.connect(hub.core.store.path) as conn:
        return float(conn.execute("SELECT last_activity_at FROM sessions WHERE id = ?", (sid,)).fetchone()[0])


async def test_a_read_and_its_record_write_nothing_on_the_callers_path(hub: Hub) -> None:
    sid = await start(hub)
    await hub.brains.write_entry(ALICE, a_brain_put(path="/kv/a", content="1", store="session"), active=(sid, "web"))
    hub.core.clock.advance(5)  # type: ignore[attr-defined]
    await hub.search_index.settled()  # the index has followed the put: its pass writes hub.db too
    hub_writes, brain_writes = hub.core.store.statistics().commands, hub.brains.writes
    got = await hub.brains.read_entry(ALICE, a_brain_get(path="/kv/a"), active=(sid, "web"))
    hub.brains.note_call(sid, "brain_get", {"path": "/kv/a"}, "ok")  # what the MCP tool does after it
    assert got["content"] == "1"
    assert hub.core.store.statistics().commands == hub_writes and hub.brains.writes == brain_writes
    assert logged(hub, sid) == [] and hub.brains.calls.pending == 1
    before = last_activity(hub, sid)
    await hub.brains.calls.flush()
    assert logged(hub, sid) == ["brain_get"] and last_activity(hub, sid) == before + 5


async def test_end_reassign_and_prune_act_on_the_whole_record(hub: Hub) -> None:
    ended, moved = await start(hub, "ended"), await start(hub, "moved")
    hub.brains.note_call(ended, "brain_put", {}, "ok")
    hub.brains.note_call(moved, "brain_get", {}, "ok")
    await hub.sessions.end(ALICE, a_session_end(session_id=ended))
    assert logged(hub, ended) == ["brain_put"]  # written before the end, so before the seal
    await hub.sessions.reassign(HUMAN, a_reassign(session_id=moved, agent="bob"))
    assert logged(hub, moved) == ["brain_get"]
    hub.brains.note_call(ended, "session_end", {}, "ok")  # as the tool records its own call, after
    await hub.storage.prune(HUMAN, a_prune(session_id=ended))
    assert logged(hub, ended) == ["brain_put", "session_end"]  # landed before the prune refused it


async def test_replay_reads_every_call_noted_oldest_first(hub: Hub) -> None:
    sid = await start(hub)
    for tool in ("brain_put", "brain_get", "feed_read"):
        hub.brains.note_call(sid, tool, {}, "ok")
    replay = await hub.brains.replay(HUMAN, sid)
    assert [e["tool"] for e in replay["events"]] == ["brain_put", "brain_get", "feed_read"]


async def test_a_clean_stop_writes_every_noted_call_oldest_first(tmp_path: Path) -> None:
    data = tmp_path / "data"
    async with Hub.open(settings_for(data), clock=FakeClock()) as hub:
        await hub.projects.create(HUMAN, a_project(id="web"))
        await hub.agents.create(HUMAN, an_agent(id="alice"))
        hub.brains.calls.delay = 3600.0
        sids = [await start(hub, f"s{n}") for n in range(3)]
        for n in range(60):
            hub.brains.note_call(sids[n % 3], f"tool{n}", {"n": n}, "ok")
        paths = {sid: hub.brains.path_of(sid) for sid in sids}
        assert not any(path.exists() for path in paths.values())
    for k, sid in enumerate(sids):
        with sqlite3.connect(paths[sid]) as conn:
            tools = [r[0] for r in conn.execute("SELECT tool FROM calls ORDER BY id")]
        assert tools == [f"tool{n}" for n in range(k, 60, 3)]


async def test_a_write_costs_one_brain_command_and_its_record_lands_in_order(hub: Hub) -> None:
    sid = await start(hub)
    hub.brains.note_call(sid, "brain_get", {}, "ok")
    async with hub.brains.pool.use(sid) as actor:
        before = actor.statistics().commands
        await hub.brains.write_entry(
            ALICE, a_brain_put(path="/kv/a", content="1", store="session"), active=(sid, "web")
        )
        hub.brains.note_call(sid, "brain_put", {"path": "/kv/a"}, "ok")  # what the MCP tool does after it
        assert actor.statistics().commands == before + 1  # the write alone: its record waits behind
    hub.brains.note_call(sid, "feed_read", {}, "ok")
    with pytest.raises(HubError) as caught:
        await hub.brains.write_entry(
            ALICE,
            a_brain_put(path="/kv/a", content="2", store="session", if_version="absent"),
            active=(sid, "web"),
        )
    assert caught.value.code == "conflict"
    hub.brains.note_call(sid, "brain_put", {"path": "/kv/a"}, "conflict")
    assert logged(hub, sid) == []
    await hub.brains.calls.flush(sid)
    assert logged(hub, sid) == ["brain_get", "brain_put", "feed_read", "brain_put"]
    got = await hub.brains.read_entry(ALICE, a_brain_get(path="/kv/a"), active=(sid, "web"))
    assert got["content"] == "1"
