"""Brain reads on read-only connections kept apart from the writers' pool (issue 11, part 5).

Runs on asyncio and trio.
"""

from __future__ import annotations

import resource
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from hubcore.caller import Caller
from hubcore.clock import FakeClock
from hubcore.hub import Hub
from hubcore.store.connection import FILES_PER_CONNECTION, allow_open_files
from hubcore.store.readcache import ReadCache
from tests.harness import test_settings as settings_for
from tests.requests import a_brain_get, a_brain_put, a_project, a_session_start, an_agent

pytestmark = pytest.mark.anyio

HUMAN, ALICE = Caller.admin(), Caller.agent("alice")


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def a_file(tmp_path: Path, name: str, value: int) -> Path:
    path = tmp_path / f"{name}.db"
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("CREATE TABLE t (x)")
        conn.execute("INSERT INTO t VALUES (?)", (value,))
    return path


def value(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT x FROM t").fetchone()[0])


async def test_connections_are_kept_least_recently_used_first_within_the_cap(tmp_path: Path) -> None:
    cache = ReadCache(2)
    files = {name: a_file(tmp_path, name, n) for n, name in enumerate("abc")}
    try:
        assert [await cache.read(k, files[k], value) for k in "ab"] == [0, 1]
        assert await cache.read("a", files["a"], value) == 0  # kept: no new connection
        assert cache.opened_total == 2 and cache.open_count == 2
        assert await cache.read("c", files["c"], value) == 2  # over the cap: b, the least recent, goes
        assert cache.is_open("a") and cache.is_open("c") and not cache.is_open("b")
        cache.forget("a")
        assert not cache.is_open("a") and cache.open_count == 1
    finally:
        cache.close()
    assert cache.open_count == 0


async def test_a_read_sees_each_commit_and_a_failed_read_keeps_nothing_open(tmp_path: Path) -> None:
    cache = ReadCache(4)
    path = a_file(tmp_path, "a", 1)
    try:
        assert await cache.read("a", path, value) == 1
        with sqlite3.connect(path) as conn:
            conn.execute("UPDATE t SET x = 2")
        assert await cache.read("a", path, value) == 2  # a new read transaction each time

        def broken(conn: sqlite3.Connection) -> int:
            raise sqlite3.OperationalError("no")

        with pytest.raises(sqlite3.OperationalError):
            await cache.read("a", path, broken)
        assert await cache.read("a", path, value) == 2 and cache.opened_total == 1
    finally:
        cache.close()


async def test_idle_connections_are_swept(tmp_path: Path) -> None:
    now = [0.0]
    cache = ReadCache(4, monotonic=lambda: now[0])
    files = {name: a_file(tmp_path, name, 0) for name in "ab"}
    await cache.read("a", files["a"], value)
    now[0] = 30.0
    await cache.read("b", files["b"], value)
    now[0] = 60.0
    assert cache.sweep(60.0) == 1 and not cache.is_open("a") and cache.is_open("b")
    cache.close()


@pytest.fixture
async def hub(tmp_path: Path) -> AsyncIterator[Hub]:
    # Four writers for thirty sessions: the writers' pool is far smaller than the sessions read.
    async with Hub.open(settings_for(tmp_path / "data", open_stores_max=4), clock=FakeClock()) as h:
        await h.projects.create(HUMAN, a_project(id="web"))
        await h.agents.create(HUMAN, an_agent(id="alice"))
        yield h


async def test_brain_reads_open_no_writer_and_each_file_once(hub: Hub) -> None:
    sids = []
    for n in range(30):
        sid = str((await hub.sessions.start(ALICE, a_session_start("web", f"s{n}")))["session_id"])
        await hub.brains.write_entry(
            ALICE, a_brain_put(path="/kv/n", content=str(n), store="session"), active=(sid, "web")
        )
        sids.append(sid)
    await hub.search_index.settled()  # the index's pass read these brains too, through the same cache
    writers_opened = hub.brains.pool.opened_total
    assert hub.brains.pool.open_count <= 4
    rounds = []
    for _ in range(2):
        for n, sid in enumerate(sids):
            got = await hub.brains.read_entry(ALICE, a_brain_get(path="/kv/n", session_id=sid))
            assert got["content"] == str(n)
        rounds.append(hub.brains.readers.opened_total)
    assert hub.brains.pool.opened_total == writers_opened  # no read opened a writer actor
    assert rounds[0] <= 30  # one connection per file, the index's reads and these alike
    assert rounds[1] == rounds[0]  # kept for the second round


def test_the_open_files_limit_is_raised_to_fit_the_pools_and_never_lowered() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 2048:
        pytest.skip("the hard limit leaves no room to test raising the soft one")
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))
        assert allow_open_files(100, other=500) == 100 * FILES_PER_CONNECTION + 500
        assert resource.getrlimit(resource.RLIMIT_NOFILE)[0] == 800
        assert allow_open_files(10, other=10) == 800  # already enough: left alone
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
