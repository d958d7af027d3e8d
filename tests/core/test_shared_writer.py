"""Store actors sharing one writer thread (the brain files' pool does), on asyncio and on trio.

Each file keeps its own connection, its own order and its own group commit; what one file's
commands do (fail, kill the connection, close) is that file's alone. What the tests look at: the
replies, the rows committed in each file, the statistics, and which thread ran the commands.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from anyio.abc import TaskGroup

from hubcore.errors import StoreBroken, StoreClosed
from hubcore.store.actor import StoreActor
from hubcore.store.pool import ActorPool
from hubcore.store.writer import WriterThread
from tests.core.support import Gate, Results, insert, insert_then_fail, record, setup, stored_tags, wait_until

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@asynccontextmanager
async def two_files(tmp_path: Path, **options: Any) -> AsyncIterator[tuple[StoreActor, StoreActor, WriterThread]]:
    """Actors of a.db and b.db on one shared writer thread, running."""
    thread = WriterThread("store shared test")
    a = StoreActor(tmp_path / "a.db", setup=setup, **options)
    b = StoreActor(tmp_path / "b.db", setup=setup, **options)
    a.share_thread(thread)
    b.share_thread(thread)
    try:
        async with anyio.create_task_group() as tg:
            await tg.start(a.run)
            await tg.start(b.run)
            try:
                yield a, b, thread
            finally:
                await a.aclose()
                await b.aclose()
    finally:
        thread.stop()


async def queue(
    tg: TaskGroup, actor: StoreActor, name: str, fn: Callable[[sqlite3.Connection], Any], results: Results
) -> None:
    """Send a command and wait until its caller waits for the reply (queued, or on the thread:
    an idle actor hands its first command straight to the shared thread's own queue)."""
    tg.start_soon(record, actor, name, fn, results)
    await anyio.wait_all_tasks_blocked()


async def test_interleaved_files_keep_their_own_order_and_group_commit(tmp_path: Path) -> None:
    results: Results = {}
    async with two_files(tmp_path) as (a, b, _thread):
        async with anyio.create_task_group() as tg:
            gate = Gate()  # a's command holds the shared thread: b's commands queue up too
            tg.start_soon(record, a, "gate", gate, results)
            await gate.wait_entered()
            for i in range(4):
                await queue(tg, a, f"a{i}", insert(f"a{i}"), results)
                await queue(tg, b, f"b{i}", insert(f"b{i}"), results)
            await queue(tg, b, "b-bad", insert_then_fail("b-bad", ValueError("b refuses")), results)
            await queue(tg, a, "a4", insert("a4"), results)
            gate.open()
        stats_a, stats_b = a.statistics(), b.statistics()
    assert stored_tags(tmp_path / "a.db") == ["gate", "a0", "a1", "a2", "a3", "a4"]
    assert stored_tags(tmp_path / "b.db") == ["b0", "b1", "b2", "b3"]
    assert isinstance(results["b-bad"], ValueError)
    assert all(isinstance(results[f"a{i}"], int) for i in range(5))
    assert (stats_a.batches, stats_a.last_batch, stats_a.failed_commands) == (2, 5, 0)  # the gate, then one batch
    # b was idle: its first command went to the thread alone, the rest queued behind it
    assert (stats_b.batches, stats_b.last_batch, stats_b.failed_commands) == (2, 4, 1)


async def test_every_command_of_both_files_runs_on_the_one_thread(tmp_path: Path) -> None:
    def ident(conn: sqlite3.Connection) -> int:
        return threading.get_ident()

    async with two_files(tmp_path) as (a, b, _thread):
        seen = {await a.execute(ident), await b.execute(ident), await a.execute(ident), await b.execute(ident)}
    assert len(seen) == 1 and threading.get_ident() not in seen


async def hold_thread(tg: TaskGroup, b: StoreActor, results: Results) -> Gate:
    """A command of b's holding the shared thread (so a's commands wait behind it) until opened."""
    gate = Gate("b-gate")
    tg.start_soon(record, b, "b-gate", gate, results)
    await gate.wait_entered()
    return gate


async def handed_on() -> None:
    """Let the loop run the hand-over callbacks the commands just queued scheduled (a plain
    callback on asyncio, which `wait_all_tasks_blocked` does not wait for)."""
    for _ in range(3):
        await anyio.lowlevel.checkpoint()


async def three_behind_held_thread(tg: TaskGroup, a: StoreActor, b: StoreActor, results: Results) -> Gate:
    """b's command holding the shared thread, then a's inserts a0, a1, a2 sent and their
    hand-over callbacks run; the gate that frees the thread."""
    gate = await hold_thread(tg, b, results)
    for i in range(3):
        await queue(tg, a, f"a{i}", insert(f"a{i}"), results)
    await handed_on()
    return gate


@pytest.mark.parametrize("gather", [True, False])
async def test_a_file_whose_connection_dies_does_not_touch_the_other(tmp_path: Path, gather: bool) -> None:
    """Not gathering, the command after the one that kills the connection is on the thread
    already when the connection dies: it is refused there, never run."""

    def kill(conn: sqlite3.Connection) -> None:
        conn.close()

    results: Results = {}
    async with two_files(tmp_path, gather=gather) as (a, b, _thread):
        await b.execute(insert("b0"))
        async with anyio.create_task_group() as tg:
            gate = await hold_thread(tg, b, results)
            await queue(tg, a, "kill", kill, results)
            await queue(tg, a, "a-after", insert("a-after"), results)
            await handed_on()
            assert a.queue_depth() == (1 if gather else 0)
            await queue(tg, b, "b1", insert("b1"), results)
            gate.open()
        assert a.broken and not b.broken
        for name in ("kill", "a-after"):
            assert isinstance(results[name], StoreBroken)
        assert await b.execute(insert("b2")) > 0
        with pytest.raises(StoreBroken):
            await a.execute(insert("a-later"))
    assert stored_tags(tmp_path / "a.db") == []
    assert stored_tags(tmp_path / "b.db") == ["b0", "b-gate", "b1", "b2"]


async def test_closing_one_file_leaves_the_other_writing_on_the_thread(tmp_path: Path) -> None:
    async with two_files(tmp_path) as (a, b, _thread):
        await a.execute(insert("a0"))
        await b.execute(insert("b0"))
        await a.aclose()
        assert a.stopped and not b.closed
        with pytest.raises(StoreClosed):
            await a.execute(insert("a1"))
        assert await b.execute(insert("b1")) > 0
        wal = tmp_path / "a.db-wal"
        assert not wal.exists() or wal.stat().st_size == 0  # a's file was checkpointed and closed
    assert stored_tags(tmp_path / "a.db") == ["a0"]
    assert stored_tags(tmp_path / "b.db") == ["b0", "b1"]


def pool_threads(name: str) -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith(f"store {name} ")]


async def test_a_pool_with_shared_threads_spreads_its_files_and_stops_them_at_close(tmp_path: Path) -> None:
    def ident(conn: sqlite3.Connection) -> int:
        return threading.get_ident()

    def factory(key: str) -> StoreActor:
        return StoreActor(tmp_path / f"{key}.db", setup=setup, name=key)

    async with anyio.create_task_group() as tg:
        pool = ActorPool(tg, factory, max_open=2, writer_threads=2, name="shared-pool-test")
        seen: dict[str, int] = {}
        for key in ("k0", "k1", "k2", "k3"):  # beyond the cap: the first ones close meanwhile
            async with pool.use(key) as actor:
                await actor.execute(insert(key))
                seen[key] = await actor.execute(ident)
        assert len(set(seen.values())) == 2  # two threads, the files in turn
        assert len(pool_threads("shared-pool-test")) == 2
        await pool.aclose()
    await wait_until(lambda: not pool_threads("shared-pool-test"), "the pool's threads to end")
    for key in seen:
        assert stored_tags(tmp_path / f"{key}.db") == [key]


async def test_a_running_actor_cannot_change_its_thread(tmp_path: Path) -> None:
    thread = WriterThread("store late test")
    try:
        async with two_files(tmp_path) as (a, _b, _thread):
            with pytest.raises(RuntimeError):
                a.share_thread(thread)
            assert await a.execute(insert("a0")) > 0
    finally:
        thread.stop()


@pytest.mark.parametrize("gather", [True, False])
async def test_a_landed_batch_hands_on_the_next_after_or_before_the_answered_callers_turn(
    tmp_path: Path, gather: bool, anyio_backend: str
) -> None:
    """Batch 1 is held on the thread while A queues; its caller sends B as soon as it is
    answered. Gathering (hub.db), B joins A's batch (on asyncio, whose callbacks run in order;
    trio may run the hand-over first); not gathering (a brain file), A's batch is on the thread
    at once and B makes a third. Either way every command commits, in order."""
    async with two_files(tmp_path, gather=gather) as (a, _b, _thread):
        gate, results = Gate("first"), Results()

        async def first_then_b() -> None:
            results["first"] = await a.execute(gate)
            results["b"] = await a.execute(insert("b"))

        async with anyio.create_task_group() as tg:
            tg.start_soon(first_then_b)
            await gate.wait_entered()
            await queue(tg, a, "a", insert("a"), results)
            gate.open()
        if gather and anyio_backend == "trio":
            assert a.statistics().batches in (2, 3)
        else:
            assert a.statistics().batches == (2 if gather else 3)
        assert stored_tags(a.path) == ["first", "a", "b"]
        assert (results["first"], isinstance(results["a"], int), isinstance(results["b"], int)) == ("first", True, True)


@pytest.mark.parametrize("gather", [True, False])
async def test_a_file_that_does_not_gather_hands_each_batch_to_the_thread_at_once(tmp_path: Path, gather: bool) -> None:
    """While the shared thread is held, a file that gathers keeps its later commands queued for
    one batch; a file that does not (a brain) hands each to the thread as it comes, and the
    thread runs them in the order they came. Either way each commits, in order."""
    results: Results = {}
    async with two_files(tmp_path, gather=gather) as (a, b, _thread):
        async with anyio.create_task_group() as tg:
            gate = await three_behind_held_thread(tg, a, b, results)
            # the first went to the thread at once either way (the file was idle)
            assert a.queue_depth() == (2 if gather else 0)
            gate.open()
        # not gathering, a2 may have joined a1's batch before the loop's hand-over callback ran
        assert a.statistics().batches in ((2,) if gather else (2, 3))
    assert stored_tags(tmp_path / "a.db") == ["a0", "a1", "a2"]
    assert [isinstance(results[f"a{i}"], int) for i in range(3)] == [True] * 3


async def test_a_close_waits_for_every_batch_handed_over(tmp_path: Path) -> None:
    """A file that does not gather may have several batches on the thread when it is closed:
    each runs and its caller is answered before the file closes."""
    results: Results = {}
    async with two_files(tmp_path, gather=False) as (a, b, _thread):
        async with anyio.create_task_group() as tg:
            gate = await three_behind_held_thread(tg, a, b, results)
            assert a.queue_depth() == 0
            tg.start_soon(a.aclose)
            await anyio.wait_all_tasks_blocked()
            assert not a.stopped  # the batches on the thread hold the close
            gate.open()
        assert a.stopped and not a.broken
        with pytest.raises(StoreClosed):
            await a.execute(insert("a-late"))
    assert stored_tags(tmp_path / "a.db") == ["a0", "a1", "a2"]
    assert [isinstance(results[f"a{i}"], int) for i in range(3)] == [True] * 3


async def test_a_batch_handed_on_behind_a_protocol_break_never_runs(tmp_path: Path) -> None:
    """A command that commits by itself breaks the protocol with the connection still open: the
    batch a file that does not gather had already handed on behind it is refused on the thread,
    not run on that connection."""

    def commit_itself(conn: sqlite3.Connection) -> None:
        conn.execute("INSERT INTO item (tag) VALUES ('rogue')")
        conn.execute("COMMIT")

    results: Results = {}
    async with two_files(tmp_path, gather=False) as (a, b, _thread):
        async with anyio.create_task_group() as tg:
            gate = await hold_thread(tg, b, results)
            await queue(tg, a, "rogue", commit_itself, results)
            await queue(tg, a, "a-after", insert("a-after"), results)
            await handed_on()
            assert a.queue_depth() == 0  # on the thread behind the rogue command
            gate.open()
        assert a.broken and not b.broken
        assert isinstance(results["rogue"], StoreBroken) and isinstance(results["a-after"], StoreBroken)
    assert "a-after" not in stored_tags(tmp_path / "a.db")


async def test_a_file_that_does_not_gather_counts_its_commands_on_the_thread_against_its_mailbox(
    tmp_path: Path,
) -> None:
    """Handed over at once, a busy file's commands still meet back-pressure: those on the thread
    hold their room in the mailbox until they land, and the callers past it wait for room."""
    results: Results = {}
    async with two_files(tmp_path, gather=False, mailbox_size=2) as (a, b, _thread), anyio.create_task_group() as tg:
        gate = await hold_thread(tg, b, results)
        for i in range(4):
            await queue(tg, a, f"a{i}", insert(f"a{i}"), results)
        await handed_on()
        assert (a.unanswered(), a.statistics().waiting_for_room) == (2, 2)
        gate.open()
    assert stored_tags(tmp_path / "a.db") == ["a0", "a1", "a2", "a3"]
    assert [isinstance(results[f"a{i}"], int) for i in range(4)] == [True] * 4
