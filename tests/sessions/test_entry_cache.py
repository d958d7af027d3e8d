"""A brain get of a remembered session and a cached entry touches no file and no thread
(`hubcore.services.brain_cache`, `RowMemory`), and answers exactly what the file holds: after a
put, a delete, a cancelled put, a fork, an end and a resume, a prune, and a change of who may see
the project. Runs on asyncio and trio."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from hubcore.caller import Caller
from hubcore.errors import HubError, conflict
from hubcore.hub import Hub
from hubcore.services.brain_cache import EntryCache
from hubcore.store.brain import Entry
from tests.requests import (
    a_brain_delete,
    a_brain_get,
    a_brain_put,
    a_project_update,
    a_prune,
    a_session_end,
    a_session_start,
)
from tests.sessions.support import ALICE, BOB, HUMAN, alice_and_bob_hub

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def hub(tmp_path: Path) -> AsyncIterator[Hub]:
    async with alice_and_bob_hub(tmp_path / "data") as h, h.search_index.held():
        yield h  # the index held: its passes read brain files too, and only gets are counted


class Reads:
    """Counts the get path's reads: hub.db's session check with the brain's (`read_then`) and the
    brain file's alone (`ReadCache.read`)."""

    def __init__(self, hub: Hub, monkeypatch: pytest.MonkeyPatch) -> None:
        self.rows = self.files = 0
        read_then, read = hub.core.store.read_then, hub.brains.readers.read

        async def counted_read_then(*args: Any, **kwargs: Any) -> Any:
            self.rows += 1
            return await read_then(*args, **kwargs)

        async def counted_read(*args: Any, **kwargs: Any) -> Any:
            self.files += 1
            return await read(*args, **kwargs)

        monkeypatch.setattr(hub.core.store, "read_then", counted_read_then)
        monkeypatch.setattr(hub.brains.readers, "read", counted_read)

    @property
    def both(self) -> tuple[int, int]:
        return self.rows, self.files


async def start(hub: Hub, who: Caller = ALICE, name: str = "task") -> str:
    return str((await hub.sessions.start(who, a_session_start("web", name)))["session_id"])


async def put(hub: Hub, sid: str, path: str, content: str, **extra: Any) -> dict[str, Any]:
    req = a_brain_put(path=path, content=content, store="session", session_id=sid, **extra)
    return await hub.brains.write_entry(ALICE, req)


async def get(hub: Hub, sid: str, path: str, who: Caller = ALICE, seen: Any = None) -> dict[str, Any]:
    return await hub.brains.read_entry(who, a_brain_get(path=path, session_id=sid), seen=seen)


async def refused(hub: Hub, sid: str, path: str, who: Caller = ALICE) -> HubError:
    with pytest.raises(HubError) as caught:
        await get(hub, sid, path, who)
    return caught.value


def on_file(hub: Hub, sid: str, path: str) -> str | None:
    with sqlite3.connect(hub.brains.path_of(sid)) as conn:
        row = conn.execute("SELECT value FROM entries WHERE path = ?", (path,)).fetchone()
    return None if row is None else bytes(row[0]).decode()


async def test_a_second_get_reads_nothing_and_answers_the_same(hub: Hub, monkeypatch: pytest.MonkeyPatch) -> None:
    sid = await start(hub)
    await put(hub, sid, "/kv/a", "one")
    reads = Reads(hub, monkeypatch)
    first = await get(hub, sid, "/kv/a")
    assert reads.both == (1, 0)  # the session's row (the entry was cached by the put)
    again = await get(hub, sid, "/kv/a")
    assert again == first
    assert reads.both == (1, 0)
    assert (first["content"], first["type"], first["size_bytes"], first["session_id"]) == ("one", "key", 3, sid)


async def test_a_get_from_memory_still_pauses(hub: Hub, monkeypatch: pytest.MonkeyPatch) -> None:
    """A get answered from memory pauses once (`hubcore.services.intake`), so the requests that
    arrived with it are taken in before it answers: in a cancelled scope it stops there, where it
    would otherwise answer without a pause. It reads nothing either way."""
    sid = await start(hub)
    await put(hub, sid, "/kv/a", "one")
    assert (await get(hub, sid, "/kv/a"))["content"] == "one"  # the session's row remembered
    reads = Reads(hub, monkeypatch)
    answered = None
    with anyio.CancelScope() as scope:
        scope.cancel()
        answered = await get(hub, sid, "/kv/a")
    assert scope.cancelled_caught and answered is None
    assert (await get(hub, sid, "/kv/a"))["content"] == "one"
    assert reads.both == (0, 0)


async def test_an_entry_not_cached_is_read_from_its_file_once(hub: Hub, monkeypatch: pytest.MonkeyPatch) -> None:
    sid = await start(hub)
    await put(hub, sid, "/fs/a.md", "# a")
    hub.brains.entries.forget(sid)  # as after a restart: only the file holds it
    reads = Reads(hub, monkeypatch)
    assert (await get(hub, sid, "/fs/a.md"))["content"] == "# a"
    assert reads.both == (1, 0)  # row and file in one hop
    hub.brains.entries.forget(sid)
    assert (await get(hub, sid, "/fs/a.md"))["content"] == "# a"
    assert reads.both == (1, 1)  # the row remembered: the file alone
    assert (await get(hub, sid, "/fs/a.md"))["content"] == "# a"
    assert reads.both == (1, 1)


async def test_a_get_after_a_put_or_delete_answers_what_the_file_holds(
    hub: Hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    sid = await start(hub)
    await put(hub, sid, "/kv/a", "one")
    await get(hub, sid, "/kv/a")
    reads = Reads(hub, monkeypatch)
    written = await put(hub, sid, "/kv/a", "two, longer")
    got = await get(hub, sid, "/kv/a")
    assert (got["content"], got["version"], got["size_bytes"]) == ("two, longer", written["version"], 11)
    assert reads.both == (0, 0)
    assert on_file(hub, sid, "/kv/a") == "two, longer"
    await hub.brains.delete_entry(ALICE, a_brain_delete(path="/kv/a", store="session", session_id=sid))
    err = await refused(hub, sid, "/kv/a")
    assert (err.code, str(err.message)) == ("not_found", "no brain entry at /kv/a")
    assert on_file(hub, sid, "/kv/a") is None


async def test_a_refused_put_leaves_the_cached_entry_as_the_file_holds_it(hub: Hub) -> None:
    sid = await start(hub)
    held = await put(hub, sid, "/kv/a", "one")
    with pytest.raises(HubError) as caught:
        await put(hub, sid, "/kv/a", "two", if_version="sha256:" + "0" * 64)
    assert caught.value.code == "conflict"
    got = await get(hub, sid, "/kv/a")
    assert (got["content"], got["version"]) == ("one", held["version"])
    assert on_file(hub, sid, "/kv/a") == "one"


async def test_a_cancelled_put_still_sets_the_entry_it_wrote(hub: Hub) -> None:
    """The put's command is queued behind a held writer and its caller is cancelled: the command
    runs anyway, and a get meanwhile (which reads the old value) must not leave it cached."""
    sid = await start(hub)
    await put(hub, sid, "/kv/a", "old")
    release, holding = threading.Event(), threading.Event()

    def hold(conn: sqlite3.Connection) -> None:
        holding.set()
        release.wait(10)

    async with hub.brains.pool.use(sid) as actor, anyio.create_task_group() as tg:
        tg.start_soon(actor.execute, hold)
        await anyio.to_thread.run_sync(holding.wait)
        scope = anyio.CancelScope()
        tg.start_soon(put_in, hub, sid, scope)
        await anyio.wait_all_tasks_blocked()
        assert actor.unanswered() == 2  # `hold` on the thread, the put behind it
        scope.cancel()
        await anyio.wait_all_tasks_blocked()  # a put that gave up on its command would be gone now
        hub.brains.entries.forget(sid)  # what a cache without the put's wait would be left with
        assert (await get(hub, sid, "/kv/a"))["content"] == "old"  # the file, before the put commits
        release.set()
    assert on_file(hub, sid, "/kv/a") == "new"
    assert (await get(hub, sid, "/kv/a"))["content"] == "new"


async def put_in(hub: Hub, sid: str, scope: anyio.CancelScope) -> None:
    with scope:
        await put(hub, sid, "/kv/a", "new")


async def test_another_callers_read_checks_its_own_sight(hub: Hub, monkeypatch: pytest.MonkeyPatch) -> None:
    sid = await start(hub)
    await put(hub, sid, "/kv/a", "one")
    await get(hub, sid, "/kv/a")
    reads = Reads(hub, monkeypatch)
    assert (await get(hub, sid, "/kv/a", BOB))["content"] == "one"  # web is not confidential
    assert reads.both == (1, 0)
    await hub.projects.update(HUMAN, a_project_update(project_id="web", confidential=True))
    for who in (ALICE, BOB):
        err = await refused(hub, sid, "/kv/a", who)
        assert (err.code, str(err.message)) == ("not_found", f"session '{sid}' not found")
    assert (await get(hub, sid, "/kv/a", HUMAN))["content"] == "one"


async def test_a_pruned_session_is_not_found(hub: Hub) -> None:
    sid = await start(hub)
    await put(hub, sid, "/kv/a", "one")
    await get(hub, sid, "/kv/a")
    await hub.sessions.end(ALICE, a_session_end(session_id=sid))
    await get(hub, sid, "/kv/a")  # an ended session's brain is readable (and remembered)
    await hub.storage.prune(HUMAN, a_prune(session_id=sid))
    err = await refused(hub, sid, "/kv/a")
    assert (err.code, str(err.message)) == ("not_found", f"session '{sid}' not found")


async def test_the_row_a_get_tells_follows_an_end_and_a_resume(hub: Hub) -> None:
    """`seen` (where the MCP tools record the call) is told the session's status as it is now."""
    sid = await start(hub)
    await put(hub, sid, "/kv/a", "one")
    told: list[str] = []

    def seen(row: Any) -> None:
        told.append(str(row["status"]))

    await get(hub, sid, "/kv/a", seen=seen)
    await get(hub, sid, "/kv/a", seen=seen)
    await hub.sessions.end(ALICE, a_session_end(session_id=sid))
    await get(hub, sid, "/kv/a", seen=seen)
    await get(hub, sid, "/kv/a", seen=seen)
    assert (await hub.sessions.start(ALICE, a_session_start("web", "task")))["started"] == "resumed"
    await get(hub, sid, "/kv/a", seen=seen)
    assert told == ["active", "active", "ended", "ended", "active"]


async def test_a_fork_reads_its_own_copy(hub: Hub) -> None:
    sid = await start(hub)
    await put(hub, sid, "/kv/a", "source")
    await get(hub, sid, "/kv/a")
    fork = str((await hub.sessions.start(ALICE, a_session_start("web", "fork", {"session_id": sid})))["session_id"])
    assert (await get(hub, fork, "/kv/a"))["content"] == "source"
    await put(hub, fork, "/kv/a", "forked")
    assert (await get(hub, fork, "/kv/a"))["content"] == "forked"
    assert (await get(hub, sid, "/kv/a"))["content"] == "source"


# -- the cache itself ----------------------------------------------------------------------------


def entry(path: str, size: int = 3, version: str = "v1") -> Entry:
    return Entry(path, b"x" * size, version, 1.0)


def test_values_past_the_budget_push_out_the_least_recently_used() -> None:
    cache = EntryCache(max_bytes=10, entry_max=8)
    for name in ("a", "b", "c"):
        with cache.writing("s") as done:
            done.entry = entry(f"/kv/{name}", 3)
    assert cache.get("s", "/kv/a") is not None  # a used: b is now the oldest
    with cache.writing("s") as done:
        done.entry = entry("/kv/d", 3)
    assert [p for p in ("a", "b", "c", "d") if cache.get("s", f"/kv/{p}")] == ["a", "c", "d"]
    assert cache.held_bytes == 9
    with cache.writing("s") as done:
        done.entry = entry("/kv/big", 9)  # over `entry_max`: not kept, and what it replaced goes
    assert cache.get("s", "/kv/big") is None
    with cache.writing("s") as done:
        done.entry = entry("/kv/a", 9)
    assert cache.get("s", "/kv/a") is None
    assert cache.held_bytes == 6


def test_a_read_that_a_write_overlapped_fills_nothing() -> None:
    cache = EntryCache()
    before = cache.moment("s")
    with cache.writing("s") as done:
        assert cache.moment("s") is None  # a read begun now fills nothing
        done.entry = entry("/kv/a", version="new")
    cache.fill("s", entry("/kv/a", version="old"), before)  # read before the write ended
    got = cache.get("s", "/kv/a")
    assert got is not None and got.version == "new"
    cache.fill("s", entry("/kv/b", version="b"), None)
    assert cache.get("s", "/kv/b") is None
    now = cache.moment("s")
    cache.fill("s", entry("/kv/b", version="b"), now)
    assert cache.get("s", "/kv/b") is not None


def test_a_refusal_keeps_the_entry_and_an_unknown_outcome_forgets_the_session() -> None:
    cache = EntryCache()
    for sid in ("s", "t"):
        with cache.writing(sid) as done:
            done.entry = entry("/kv/a")
    with pytest.raises(HubError), cache.writing("s"):
        raise conflict("the version moved")
    assert cache.get("s", "/kv/a") is not None
    with pytest.raises(RuntimeError), cache.writing("s"):
        raise RuntimeError("the store broke")
    assert cache.get("s", "/kv/a") is None
    assert cache.get("t", "/kv/a") is not None
    with cache.writing("t") as done:
        done.removed = "/kv/a"
    assert (cache.get("t", "/kv/a"), len(cache), cache.held_bytes) == (None, 0, 0)


def test_a_session_idle_for_the_stores_idle_time_is_forgotten() -> None:
    now = [100.0]
    cache = EntryCache(monotonic=lambda: now[0])
    for sid in ("busy", "idle"):
        with cache.writing(sid) as done:
            done.entry = entry("/kv/a")
    now[0] = 150.0
    assert cache.get("busy", "/kv/a") is not None  # a read keeps its session in
    now[0] = 170.0
    assert cache.sweep(60.0) == 1
    assert (cache.get("idle", "/kv/a"), cache.get("busy", "/kv/a") is not None) == (None, True)
    now[0] = 240.0
    assert cache.sweep(60.0) == 1
    assert (len(cache), cache.held_bytes, cache.sweep(60.0)) == (0, 0, 0)
