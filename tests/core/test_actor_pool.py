"""Per-file actors opened on demand and closed when idle (`ActorPool`), on asyncio and trio."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest

from hubcore.errors import StoreBroken, StoreClosed
from hubcore.store.actor import StoreActor
from hubcore.store.pool import ActorPool
from tests.core.support import Gate, insert, setup, stored_tags, wait_until

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


class FakeTime:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Factory:
    """Makes actors for keys under a directory and remembers every one it made."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.made: list[tuple[str, StoreActor]] = []
        self.on_make: Callable[[str], None] | None = None

    def __call__(self, key: str) -> StoreActor:
        if self.on_make is not None:
            self.on_make(key)
        actor = StoreActor(self.directory / f"{key}.db", setup=setup, name=key)
        self.made.append((key, actor))
        return actor

    def actors(self, key: str) -> list[StoreActor]:
        return [actor for k, actor in self.made if k == key]


@asynccontextmanager
async def pool_of(tmp_path: Path, **options: float) -> AsyncIterator[tuple[ActorPool, Factory]]:
    factory = Factory(tmp_path)
    async with anyio.create_task_group() as tg:
        pool = ActorPool(tg, factory, **options)  # type: ignore[arg-type]
        try:
            yield pool, factory
        finally:
            await pool.aclose()


async def write(pool: ActorPool, key: str, tag: str) -> None:
    async with pool.use(key) as actor:
        await actor.execute(insert(tag))


async def test_opens_on_first_use_and_reuses_the_open_actor(tmp_path: Path) -> None:
    async with pool_of(tmp_path) as (pool, factory):
        assert not pool.is_open("a")
        await write(pool, "a", "one")
        await write(pool, "a", "two")
        assert pool.is_open("a") and pool.open_count == 1
        assert len(factory.actors("a")) == 1 and pool.opened_total == 1
    assert stored_tags(tmp_path / "a.db") == ["one", "two"]


async def test_least_recently_used_idle_actors_close_beyond_the_cap(tmp_path: Path) -> None:
    async with pool_of(tmp_path, max_open=2) as (pool, factory):
        for key in ("a", "b", "c"):
            await write(pool, key, key)
        assert [pool.is_open(k) for k in "abc"] == [False, True, True]
        await write(pool, "b", "b2")  # b is now the most recently used
        await write(pool, "d", "d")
        assert [pool.is_open(k) for k in "abcd"] == [False, True, False, True]
        for key in "ac":
            await factory.actors(key)[0].aclose()  # waits for the pool's close to finish
            assert factory.actors(key)[0].stopped
        await write(pool, "a", "a2")  # reopened: a new actor on the same file
        assert len(factory.actors("a")) == 2 and pool.opened_total == 5
    assert stored_tags(tmp_path / "a.db") == ["a", "a2"]


async def test_a_leased_actor_is_never_closed_under_its_user(tmp_path: Path) -> None:
    clock = FakeTime()
    async with pool_of(tmp_path, max_open=1, idle_secs=10, monotonic=clock) as (pool, _), pool.use("a") as a:
        await write(pool, "b", "b")  # over the cap: only b, idle, may go
        clock.now += 3600
        assert await pool.sweep() == 1
        assert not pool.is_open("b") and pool.is_open("a")
        await pool.close("a")
        assert pool.is_open("a") and not a.closed
        await a.execute(insert("still open"))
    assert stored_tags(tmp_path / "a.db") == ["still open"]


async def test_sweep_closes_actors_idle_for_idle_secs(tmp_path: Path) -> None:
    clock = FakeTime()
    async with pool_of(tmp_path, idle_secs=60, monotonic=clock) as (pool, factory):
        await write(pool, "a", "a")
        clock.now += 30
        await write(pool, "b", "b")
        clock.now += 29
        assert await pool.sweep() == 0
        clock.now += 1  # a idle 60 s, b idle 30 s
        assert await pool.sweep() == 1
        assert not pool.is_open("a") and pool.is_open("b")
        assert factory.actors("a")[0].stopped and pool.closed_total == 1
        clock.now += 30
        assert await pool.sweep() == 1
        assert pool.open_count == 0


async def test_run_sweeper_sweeps_periodically(tmp_path: Path) -> None:
    clock = FakeTime()
    async with pool_of(tmp_path, idle_secs=60, monotonic=clock) as (pool, _), anyio.create_task_group() as tg:
        await write(pool, "a", "a")
        tg.start_soon(pool.run_sweeper, 0.001)
        clock.now += 60
        await wait_until(lambda: not pool.is_open("a"), "the sweeper to close a")
        tg.cancel_scope.cancel()


async def test_close_waits_until_the_file_is_closed(tmp_path: Path) -> None:
    async with pool_of(tmp_path) as (pool, factory):
        await write(pool, "a", "a")
        await pool.close("a")
        assert not pool.is_open("a") and factory.actors("a")[0].stopped
        wal = tmp_path / "a.db-wal"
        assert not wal.exists() or wal.stat().st_size == 0


async def test_a_file_is_reopened_only_after_its_previous_actor_stopped(tmp_path: Path) -> None:
    gate = Gate()
    async with pool_of(tmp_path) as (pool, factory), anyio.create_task_group() as tg:
        async with pool.use("a") as first:
            tg.start_soon(first.execute, gate)
            await gate.wait_entered()
        tg.start_soon(first.aclose)  # closed behind the pool's back, still draining the gate
        await wait_until(lambda: first.closed, "the close to begin")
        seen: list[bool] = []
        factory.on_make = lambda key: seen.append(first.stopped)
        tg.start_soon(write, pool, "a", "second")
        await anyio.wait_all_tasks_blocked()  # the write has gone as far as it can
        assert seen == []  # not opened while the old writer holds the file
        gate.open()
    assert seen == [True]
    assert stored_tags(tmp_path / "a.db") == ["gate", "second"]


async def test_a_broken_actor_is_replaced_on_next_use(tmp_path: Path) -> None:
    def kill(conn: sqlite3.Connection) -> None:
        conn.close()

    async with pool_of(tmp_path) as (pool, factory):
        with pytest.raises(StoreBroken):
            async with pool.use("a") as actor:
                await actor.execute(kill)
        await write(pool, "a", "after")
        assert len(factory.actors("a")) == 2
    assert stored_tags(tmp_path / "a.db") == ["after"]


async def test_aclose_closes_every_actor_and_refuses_new_uses(tmp_path: Path) -> None:
    factory = Factory(tmp_path)
    async with anyio.create_task_group() as tg:
        pool = ActorPool(tg, factory)
        for key in ("a", "b", "c"):
            await write(pool, key, key)
        async with pool.use("a") as leased:
            await pool.aclose()
            with pytest.raises(StoreClosed):
                await leased.execute(insert("late"))
        with pytest.raises(StoreClosed):
            await write(pool, "d", "d")
    assert all(actor.stopped for _, actor in factory.made)
    assert pool.open_count == 0 and pool.closed_total == 3
