"""The store actor (DESIGN section 2), on asyncio and on trio.

Every test looks at what a user of the actor can see: the replies, the rows committed in the file
(through a connection of the test's own), the statistics, and the errors.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import TaskGroup

from hubcore.errors import HubError, StoreBroken, StoreClosed
from hubcore.store.actor import StoreActor
from hubcore.store.connection import connect
from tests.core.support import (
    Gate,
    Results,
    insert,
    insert_then_fail,
    new_actor,
    record,
    running,
    stored_tags,
    wait_until,
)

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def hold_writer(tg: TaskGroup, actor: StoreActor, results: Results) -> Gate:
    """Occupy the write thread with a gate command, so that what is sent next queues up."""
    gate = Gate()
    tg.start_soon(record, actor, "gate", gate, results)
    await gate.wait_entered()
    return gate


async def queue_in_order(
    tg: TaskGroup, actor: StoreActor, commands: dict[str, Callable[[sqlite3.Connection], Any]], results: Results
) -> None:
    """Queue commands one after the other (each is in the mailbox before the next is sent)."""
    for name, fn in commands.items():
        depth = actor.queue_depth()
        tg.start_soon(record, actor, name, fn, results)
        await wait_until(lambda d=depth: actor.queue_depth() == d + 1, f"{name} to be queued")  # type: ignore[misc]


async def one_batch(actor: StoreActor, commands: dict[str, Callable[[sqlite3.Connection], Any]]) -> Results:
    """Run `commands` as one batch behind a held writer, queued in order: each one's result or
    error (and the gate's)."""
    results: Results = {}
    async with anyio.create_task_group() as tg:
        gate = await hold_writer(tg, actor, results)
        await queue_in_order(tg, actor, commands, results)
        gate.open()
    return results


def interrupted_bulk_insert(conn: sqlite3.Connection) -> None:
    """A command SQLite interrupts mid-statement: SQLite then rolls back the whole transaction."""
    ticks = 0

    def progress() -> bool:
        nonlocal ticks
        ticks += 1
        return ticks > 2

    conn.set_progress_handler(progress, 100)
    try:
        conn.execute(
            "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 100000) "
            "INSERT INTO item (tag) SELECT 'bulk' || i FROM r"
        )
    finally:
        conn.set_progress_handler(None, 0)


# -- order and group commit ------------------------------------------------------------------------


async def test_commands_commit_in_arrival_order(tmp_path: Path) -> None:
    sent: list[str] = []
    results: Results = {}

    async def send(tag: str) -> None:
        sent.append(tag)  # nothing awaits between this and the command entering the mailbox
        await actor.execute(insert(tag))

    async with running(new_actor(tmp_path, max_batch=8)) as actor:
        async with anyio.create_task_group() as tg:
            gate = await hold_writer(tg, actor, results)
            for i in range(50):
                tg.start_soon(send, f"t{i}")
            await wait_until(lambda: actor.queue_depth() == 50, "50 commands queued")
            gate.open()
        stats = actor.statistics()
    assert stored_tags(tmp_path / "store.db") == ["gate", *sent]
    assert stats.commands == 51
    assert stats.max_batch == 8
    assert stats.batches == 1 + 7  # the gate alone, then 50 commands in batches of at most 8


@pytest.mark.parametrize("position", [0, 2, 4])
async def test_failing_command_gets_its_own_error_and_its_batch_mates_commit(tmp_path: Path, position: int) -> None:
    failure = ValueError("the command refused")
    commands = {f"ok{i}": insert(f"ok{i}") for i in range(5)}
    commands[f"ok{position}"] = insert_then_fail("bad", failure)
    async with running(new_actor(tmp_path)) as actor:
        results = await one_batch(actor, commands)
        stats = actor.statistics()
    assert results[f"ok{position}"] is failure
    assert all(isinstance(results[f"ok{i}"], int) for i in range(5) if i != position)
    assert stored_tags(tmp_path / "store.db") == ["gate", *(f"ok{i}" for i in range(5) if i != position)]
    assert (stats.last_batch, stats.failed_commands) == (5, 1)


async def test_constraint_violation_is_the_violating_commands_own(tmp_path: Path) -> None:
    async with running(new_actor(tmp_path)) as actor:
        results = await one_batch(actor, {"a": insert("a"), "dup": insert("a"), "b": insert("b")})
    assert isinstance(results["dup"], sqlite3.IntegrityError)
    assert stored_tags(tmp_path / "store.db") == ["gate", "a", "b"]


async def test_command_that_aborts_the_transaction_fails_only_what_it_took_down(tmp_path: Path) -> None:
    commands = {"before1": insert("before1"), "before2": insert("before2"), "abort": interrupted_bulk_insert}
    commands |= {"after1": insert("after1"), "after2": insert("after2")}
    async with running(new_actor(tmp_path)) as actor:
        results = await one_batch(actor, commands)
        assert await actor.execute(insert("later")) > 0
    assert isinstance(results["abort"], sqlite3.OperationalError)
    for name in ("before1", "before2"):  # rolled back with the transaction: told so, retryable
        err = results[name]
        assert isinstance(err, HubError) and err.code == "unavailable" and err.retryable
        assert err.__cause__ is results["abort"]
    assert stored_tags(tmp_path / "store.db") == ["gate", "after1", "after2", "later"]


async def test_failed_commit_fails_every_command_of_the_batch_and_the_actor_goes_on(tmp_path: Path) -> None:
    def orphan(conn: sqlite3.Connection) -> None:  # the deferred foreign key fails only at COMMIT
        conn.execute("INSERT INTO child (parent_id) VALUES (42)")

    async with running(new_actor(tmp_path)) as actor:
        results = await one_batch(actor, {"a": insert("a"), "orphan": orphan, "b": insert("b")})
        await actor.execute(insert("later"))
        assert not actor.broken
    for name in ("a", "orphan", "b"):
        err = results[name]
        assert isinstance(err, HubError) and err.code == "unavailable" and err.retryable
        assert isinstance(err.__cause__, sqlite3.IntegrityError)
    assert results["a"] is not results["b"]  # each caller raises its own exception object
    assert stored_tags(tmp_path / "store.db") == ["gate", "later"]


# -- back-pressure and statistics -----------------------------------------------------------------


async def test_full_mailbox_blocks_senders_in_arrival_order(tmp_path: Path) -> None:
    results: Results = {}
    async with running(new_actor(tmp_path, mailbox_size=2)) as actor:
        async with anyio.create_task_group() as tg:
            gate = await hold_writer(tg, actor, results)
            await queue_in_order(tg, actor, {"b": insert("b"), "c": insert("c")}, results)
            for waiting, name in enumerate(("d", "e"), start=1):
                tg.start_soon(record, actor, name, insert(name), results)
                await wait_until(lambda n=waiting: actor.statistics().waiting_for_room == n, f"{name} to wait")  # type: ignore[misc]
            await anyio.wait_all_tasks_blocked()  # every chance to get in, if the mailbox let them
            assert actor.queue_depth() == 2
            assert "d" not in results and "e" not in results
            assert stored_tags(tmp_path / "store.db") == []  # nothing committed while the gate holds
            gate.open()
        stats = actor.statistics()
    assert stored_tags(tmp_path / "store.db") == ["gate", "b", "c", "d", "e"]
    assert (stats.peak_depth, stats.depth, stats.waiting_for_room) == (2, 0, 0)


async def test_a_sender_cancelled_while_waiting_for_room_sends_nothing(tmp_path: Path) -> None:
    results: Results = {}
    async with running(new_actor(tmp_path, mailbox_size=1)) as actor:
        async with anyio.create_task_group() as tg:
            gate = await hold_writer(tg, actor, results)
            await queue_in_order(tg, actor, {"b": insert("b")}, results)
            with anyio.move_on_after(0.05) as scope:
                await actor.execute(insert("impatient"))
            assert scope.cancelled_caught
            assert actor.statistics().waiting_for_room == 0
            gate.open()
        await actor.execute(insert("c"))
        assert actor.queue_depth() == 0
    assert stored_tags(tmp_path / "store.db") == ["gate", "b", "c"]


async def test_a_caller_cancelled_after_queueing_still_commits_and_its_batch_is_answered(tmp_path: Path) -> None:
    results: Results = {}
    async with running(new_actor(tmp_path)) as actor:
        async with anyio.create_task_group() as tg:
            gate = await hold_writer(tg, actor, results)
            await queue_in_order(tg, actor, {"b": insert("b")}, results)
            with anyio.move_on_after(0.05) as scope:  # queued behind the gate, then given up on
                await actor.execute(insert("impatient"))
            assert scope.cancelled_caught
            await queue_in_order(tg, actor, {"c": insert("c")}, results)
            gate.open()
        assert set(results) == {"gate", "b", "c"}
        assert not any(isinstance(r, BaseException) for r in results.values())
        assert actor.statistics().failed_commands == 0
    assert stored_tags(tmp_path / "store.db") == ["gate", "b", "impatient", "c"]


async def test_statistics_report_depth_peak_and_batch_sizes(tmp_path: Path) -> None:
    sizes: list[int] = []
    results: Results = {}
    actor = new_actor(tmp_path, max_batch=2, on_batch=lambda size, seconds: sizes.append(size))
    async with running(actor):
        assert actor.statistics().batches == 0
        async with anyio.create_task_group() as tg:
            gate = await hold_writer(tg, actor, results)
            commands = {"a": insert("a"), "bad": insert_then_fail("bad", ValueError("no")), "b": insert("b")}
            await queue_in_order(tg, actor, commands | {"c": insert("c"), "d": insert("d")}, results)
            assert actor.statistics().depth == 5
            gate.open()
        stats = actor.statistics()
    assert sizes == [1, 2, 2, 1]
    assert (stats.commands, stats.failed_commands, stats.batches) == (6, 1, 4)
    assert (stats.max_batch, stats.last_batch, stats.mean_batch) == (2, 1, 1.5)
    assert (stats.depth, stats.peak_depth) == (0, 5)


# -- close, cancel, break --------------------------------------------------------------------------


async def test_close_answers_queued_and_waiting_commands_then_refuses(tmp_path: Path) -> None:
    results: Results = {}
    path = tmp_path / "store.db"
    async with running(new_actor(tmp_path, mailbox_size=2)) as actor:
        async with anyio.create_task_group() as tg:
            gate = await hold_writer(tg, actor, results)
            await queue_in_order(tg, actor, {"b": insert("b"), "c": insert("c")}, results)
            tg.start_soon(record, actor, "d", insert("d"), results)
            await wait_until(lambda: actor.statistics().waiting_for_room == 1, "d to wait for room")
            tg.start_soon(actor.aclose)
            await wait_until(lambda: actor.closed, "close to begin")
            with pytest.raises(StoreClosed):
                await actor.execute(insert("late"))
            with pytest.raises(StoreClosed):
                await actor.read(lambda conn: None)
            gate.open()
        assert actor.stopped
        with pytest.raises(StoreClosed):
            await actor.execute(insert("later still"))
    assert all(isinstance(results[name], (int, str)) for name in ("gate", "b", "c", "d"))
    assert stored_tags(path) == ["gate", "b", "c", "d"]
    wal = path.with_name(path.name + "-wal")
    assert not wal.exists() or wal.stat().st_size == 0  # checkpointed into the file


async def test_cancelled_actor_refuses_what_it_did_not_run(tmp_path: Path) -> None:
    results: Results = {}
    actor = new_actor(tmp_path)
    async with anyio.create_task_group() as callers, anyio.create_task_group() as stores:
        await stores.start(actor.run)
        gate = await hold_writer(callers, actor, results)
        await queue_in_order(callers, actor, {"b": insert("b")}, results)
        stores.cancel_scope.cancel()
        gate.open()  # the batch already in the thread finishes and is answered
    assert results["gate"] == "gate"
    assert isinstance(results["b"], StoreClosed)
    with pytest.raises(StoreClosed):
        await actor.execute(insert("c"))
    assert actor.stopped and not actor.broken
    assert stored_tags(tmp_path / "store.db") == ["gate"]


async def test_command_that_kills_the_connection_breaks_the_actor(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    def kill(conn: sqlite3.Connection) -> None:
        conn.close()

    results: Results = {}
    caplog.set_level(logging.ERROR, logger="hubcore.store")
    async with running(new_actor(tmp_path, max_batch=2)) as actor:
        async with anyio.create_task_group() as tg:
            gate = await hold_writer(tg, actor, results)
            await queue_in_order(tg, actor, {"kill": kill, "b": insert("b"), "c": insert("c")}, results)
            gate.open()
        for name in ("kill", "b", "c"):  # in the dead batch, and still queued behind it
            assert isinstance(results[name], StoreBroken)
            assert isinstance(results[name].__cause__, sqlite3.ProgrammingError)
        for later in (actor.execute(insert("d")), actor.read(lambda conn: None)):
            with pytest.raises(StoreBroken) as info:
                await later
            assert isinstance(info.value.__cause__, sqlite3.ProgrammingError)
        await actor.aclose()  # returns once the broken actor let go of its file
        assert actor.broken and actor.stopped
    assert results["gate"] == "gate"
    assert stored_tags(tmp_path / "store.db") == ["gate"]
    assert "broke" in caplog.text


async def test_bug_in_the_loop_breaks_the_actor_for_every_caller(tmp_path: Path) -> None:
    bug = RuntimeError("bug in the loop")

    def broken_record(*args: object) -> None:
        raise bug

    results: Results = {}
    async with running(new_actor(tmp_path)) as actor:
        async with anyio.create_task_group() as tg:
            gate = await hold_writer(tg, actor, results)
            await queue_in_order(tg, actor, {"b": insert("b"), "c": insert("c")}, results)
            actor._record = broken_record  # type: ignore[method-assign]
            gate.open()
        assert results["gate"] == "gate"  # its batch had committed before the loop failed
        for name in ("b", "c"):
            assert isinstance(results[name], StoreBroken) and results[name].__cause__ is bug
        with pytest.raises(StoreBroken) as info:
            await actor.execute(insert("d"))
        assert info.value.__cause__ is bug
    assert stored_tags(tmp_path / "store.db") == ["gate"]


async def test_file_that_cannot_be_opened_fails_the_start_and_breaks_the_actor(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    path.write_bytes(b"this is not a database" * 100)
    actor = StoreActor(path)
    async with anyio.create_task_group() as tg:
        with pytest.raises(sqlite3.DatabaseError):
            await tg.start(actor.run)
    with pytest.raises(StoreBroken) as info:
        await actor.execute(insert("a"))
    assert isinstance(info.value.__cause__, sqlite3.DatabaseError)


# -- reads -----------------------------------------------------------------------------------------


async def test_reads_do_not_queue_behind_a_slow_write(tmp_path: Path) -> None:
    results: Results = {}
    async with running(new_actor(tmp_path)) as actor:
        await actor.execute(insert("first"))
        async with anyio.create_task_group() as tg:
            gate = await hold_writer(tg, actor, results)
            await queue_in_order(tg, actor, {"b": insert("b")}, results)
            with anyio.fail_after(5):
                seen = await actor.read(lambda conn: [r["tag"] for r in conn.execute("SELECT tag FROM item")])
            assert seen == ["first"]  # the committed state: the gate's row is not committed yet
            assert "gate" not in results and actor.queue_depth() == 1
            gate.open()
        assert await actor.read(lambda conn: conn.execute("SELECT count(*) FROM item").fetchone()[0]) == 3


async def test_a_failing_read_raises_its_error_and_reads_go_on(tmp_path: Path) -> None:
    def missing(conn: sqlite3.Connection) -> None:
        raise LookupError("no such thing")

    async with running(new_actor(tmp_path)) as actor:
        await actor.execute(insert("a"))
        with pytest.raises(LookupError):
            await actor.read(missing)
        with pytest.raises(sqlite3.OperationalError):  # read-only: no writes through a read
            await actor.read(lambda conn: conn.execute("INSERT INTO item (tag) VALUES ('x')"))
        assert await actor.read(lambda conn: conn.execute("SELECT count(*) FROM item").fetchone()[0]) == 1


async def test_pooled_readers_map_nothing_and_see_the_file_grow(tmp_path: Path) -> None:
    """Pooled readers read through their own page cache, not a memory map (issue 28: a map's pages
    counted in the hub's RSS and grew with the file, for no speed the benches could measure); a write
    that grows the file after a reader opened it is seen whole by that reader's next read. A map
    asked for (`mmap_bytes`, what tools/bench/read_map.py sets through READ_MMAP_BYTES) is taken."""
    mapped = lambda conn: conn.execute("PRAGMA mmap_size").fetchone()[0]  # noqa: E731
    async with running(new_actor(tmp_path, readers=1)) as actor:
        await actor.execute(insert("a"))
        assert await actor.read(mapped) == 0
        assert await actor.execute(mapped) == 0
        size = (tmp_path / "store.db").stat().st_size
        await actor.execute(
            lambda conn: conn.executemany(
                "INSERT INTO item (tag) VALUES (?)", [(f"t{n}-" + "x" * 500,) for n in range(2000)]
            )
        )
        own = sqlite3.connect(tmp_path / "store.db")  # the pages move from the log into the file
        try:
            own.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            own.close()
        assert (tmp_path / "store.db").stat().st_size > size
        assert await actor.read(
            lambda conn: conn.execute("SELECT count(*), max(length(tag)) FROM item").fetchone()[:]
        ) == (2001, 506)
    for asked in (0, 16 * 2**20):
        conn = connect(tmp_path / "store.db", readonly=True, mmap_bytes=asked)
        try:
            assert mapped(conn) == asked
        finally:
            conn.close()
