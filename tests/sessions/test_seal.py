"""The brain's seal: its own actor refuses writes once its session stopped running.

The races are driven deterministically: a command holds the brain's writer thread (`Gate`) while
writes and the seal queue behind it, and a write is held between its hub.db check and its queueing
(`HeldWrite`), the window a session end can fall into. Runs on asyncio and trio.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import TaskGroup

from hubcore.caller import Caller
from hubcore.clock import FakeClock
from hubcore.errors import HubError
from hubcore.hub import Hub
from hubcore.store import brain
from hubcore.store.actor import StoreActor
from tests.core.support import wait_until
from tests.harness import test_settings as settings_for
from tests.requests import (
    a_brain_put,
    a_project,
    a_prune,
    a_reassign,
    a_session_end,
    a_session_start,
    an_agent,
    an_undo,
)

pytestmark = pytest.mark.anyio

HUMAN, ALICE, BOB = Caller.admin(), Caller.agent("alice"), Caller.agent("bob")
Outcome = dict[str, Any]


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@asynccontextmanager
async def open_hub(data: Path) -> AsyncIterator[Hub]:
    async with Hub.open(settings_for(data), clock=FakeClock()) as hub:
        yield hub


@pytest.fixture
async def hub(tmp_path: Path) -> AsyncIterator[Hub]:
    async with open_hub(tmp_path / "data") as h:
        await h.projects.create(HUMAN, a_project(id="web"))
        await h.agents.create(HUMAN, an_agent(id="alice"))
        await h.agents.create(HUMAN, an_agent(id="bob"))
        yield h


async def start(hub: Hub, who: Caller = ALICE, name: str = "task", source: Any = None) -> str:
    return str((await hub.sessions.start(who, a_session_start("web", name, source)))["session_id"])


def put(hub: Hub, sid: str, path: str, who: Caller = ALICE) -> Awaitable[Outcome]:
    return hub.brains.write_entry(who, a_brain_put(path=path, content=path, store="session"), active=(sid, "web"))


def stored(hub: Hub, sid: str) -> list[str]:
    """The entry paths in the brain file, read without the hub."""
    with sqlite3.connect(hub.brains.path_of(sid)) as conn:
        return [r[0] for r in conn.execute("SELECT path FROM entries ORDER BY path")]


def seal_in_file(hub: Hub, sid: str) -> str | None:
    with sqlite3.connect(hub.brains.path_of(sid)) as conn:
        return brain.seal_state(conn)


class Gate:
    """A brain command that holds the brain's writer thread until the test opens it."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.opened = threading.Event()
        self.actor: StoreActor | None = None

    def __call__(self, conn: sqlite3.Connection) -> None:
        self.entered.set()
        if not self.opened.wait(10):
            raise TimeoutError("the test never opened the gate")

    async def hold(self, hub: Hub, sid: str, tg: TaskGroup) -> None:
        async def run() -> None:
            async with hub.brains.pool.use(sid) as actor:
                self.actor = actor
                await actor.execute(self)

        tg.start_soon(run)
        await anyio.to_thread.run_sync(self.entered.wait, 10)

    async def queued(self, depth: int) -> None:
        """Wait until `depth` commands wait behind the gate (queued, or on the writer thread after
        it: a brain hands each batch on at once)."""
        actor = self.actor
        assert actor is not None
        await wait_until(lambda: actor.unanswered() == depth + 1, f"{depth} commands behind the gate")


class HeldWrite:
    """Holds brain writes just after hub.db said their session runs, until `release`."""

    def __init__(self, hub: Hub, monkeypatch: pytest.MonkeyPatch) -> None:
        self.checked = anyio.Event()
        self.go = anyio.Event()
        real = hub.sessions.writable

        async def writable(*args: Any) -> Any:
            row = await real(*args)
            self.checked.set()
            await self.go.wait()
            return row

        monkeypatch.setattr(hub.sessions, "writable", writable)

    def release(self) -> None:
        self.go.set()


async def settle(outcomes: dict[str, Outcome | HubError], key: str, call: Callable[[], Awaitable[Outcome]]) -> None:
    """Run `call`, keeping its result or its refusal under `key`."""
    try:
        outcomes[key] = await call()
    except HubError as exc:
        outcomes[key] = exc


def refusal(outcome: Outcome | HubError) -> str:
    assert isinstance(outcome, HubError), outcome
    return outcome.code


async def write_held_across_the_end(
    hub: Hub, monkeypatch: pytest.MonkeyPatch, sid: str, meanwhile: Callable[[], Awaitable[None]] | None = None
) -> Outcome | HubError:
    """A write of `/kv/late` held past its checks while the session ends (and `meanwhile` runs), then
    let go: its outcome."""
    held, outcomes = HeldWrite(hub, monkeypatch), dict[str, Outcome | HubError]()
    async with anyio.create_task_group() as tg:
        tg.start_soon(settle, outcomes, "late", lambda: put(hub, sid, "/kv/late"))
        await held.checked.wait()
        await hub.sessions.end(ALICE, a_session_end(session_id=sid))
        if meanwhile is not None:
            await meanwhile()
        held.release()
    return outcomes["late"]


async def test_end_seals_behind_queued_writes_and_refuses_later_ones(hub: Hub, monkeypatch: pytest.MonkeyPatch) -> None:
    sid = await start(hub)
    await put(hub, sid, "/kv/first")
    gate, outcomes = Gate(), dict[str, Any]()
    async with anyio.create_task_group() as tg:
        await gate.hold(hub, sid, tg)
        tg.start_soon(settle, outcomes, "queued", lambda: put(hub, sid, "/kv/queued"))
        await gate.queued(1)  # the write waits behind the gate
        held = HeldWrite(hub, monkeypatch)
        tg.start_soon(settle, outcomes, "late", lambda: put(hub, sid, "/kv/late"))
        await held.checked.wait()  # hub.db said "running" to this write; it has not queued yet
        tg.start_soon(settle, outcomes, "end", lambda: hub.sessions.end(ALICE, a_session_end(session_id=sid)))
        await gate.queued(2)  # the seal waits behind the write
        held.release()
        await gate.queued(3)  # the late write waits behind the seal
        gate.opened.set()
    assert outcomes["queued"]["path"] == "/kv/queued"
    assert outcomes["end"]["status"] == "ended"
    late = outcomes["late"]
    assert refusal(late) == "conflict" and "has ended" in late.message
    # A write sent after the end returned: refused before it reaches the brain.
    with pytest.raises(HubError) as caught:
        await put(hub, sid, "/kv/after")
    assert caught.value.code == "conflict"
    assert stored(hub, sid) == ["/kv/first", "/kv/queued"]
    assert seal_in_file(hub, sid) == brain.ENDED


async def test_a_write_racing_the_end_of_a_session_without_a_file_lands_nothing(
    hub: Hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    sid = await start(hub)
    # the write in flight makes the end seal through the mailbox
    assert refusal(await write_held_across_the_end(hub, monkeypatch, sid)) == "conflict"
    assert stored(hub, sid) == [] and seal_in_file(hub, sid) == brain.ENDED


async def test_ending_a_session_never_written_creates_no_file(hub: Hub) -> None:
    sid = await start(hub)
    await hub.sessions.end(ALICE, a_session_end(session_id=sid))
    with pytest.raises(HubError) as caught:
        await put(hub, sid, "/kv/x")
    assert caught.value.code == "conflict"
    assert not hub.brains.path_of(sid).exists()


async def test_the_seal_outlives_the_actor_and_a_restart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = tmp_path / "data"
    async with open_hub(data) as hub:
        await hub.projects.create(HUMAN, a_project(id="web"))
        await hub.agents.create(HUMAN, an_agent(id="alice"))
        await hub.agents.create(HUMAN, an_agent(id="bob"))
        sid = await start(hub)
        await put(hub, sid, "/kv/a")

        async def idle() -> None:  # as when idle: the next write opens a new actor
            await hub.brains.pool.close(sid)
            assert not hub.brains.pool.is_open(sid)

        assert refusal(await write_held_across_the_end(hub, monkeypatch, sid, idle)) == "conflict"
        assert stored(hub, sid) == ["/kv/a"]
    async with open_hub(data) as hub:
        assert seal_in_file(hub, sid) == brain.ENDED
        adopted = await hub.sessions.start(BOB, a_session_start("web", "taken", {"session_id": sid}))
        assert adopted["started"] == "adopted" and seal_in_file(hub, sid) is None
        await put(hub, sid, "/kv/bob", BOB)
        assert stored(hub, sid) == ["/kv/a", "/kv/bob"]


def before_seals(conn: sqlite3.Connection) -> None:
    conn.execute("DROP TABLE seal")
    conn.execute("PRAGMA user_version = 0")


async def test_a_brain_from_before_seals_learns_its_session_state_on_first_write(
    hub: Hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    sid = await start(hub)
    await put(hub, sid, "/kv/a")

    async def downgrade() -> None:
        async with hub.brains.pool.use(sid) as actor:  # back to the schema before seals, by its own actor
            await actor.execute(before_seals)
        await hub.brains.pool.close(sid)  # the next write opens the old file afresh, as after an upgrade

    assert refusal(await write_held_across_the_end(hub, monkeypatch, sid, downgrade)) == "conflict"
    # The refused write's command rolled back whole, its look at hub.db included: still unsynced.
    assert stored(hub, sid) == ["/kv/a"] and seal_in_file(hub, sid) == brain.UNSYNCED
    with sqlite3.connect(hub.brains.path_of(sid)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == brain.SCHEMA_VERSION
    await start(hub, BOB, "heir", {"session_id": sid})
    assert seal_in_file(hub, sid) is None
    await put(hub, sid, "/kv/b", BOB)


async def test_resume_and_adopt_unseal_and_reassign_keeps_open(hub: Hub) -> None:
    sid = await start(hub)
    await put(hub, sid, "/kv/a")
    await hub.sessions.end(ALICE, a_session_end(session_id=sid))
    assert (await hub.sessions.start(ALICE, a_session_start("web", "task")))["started"] == "resumed"
    assert seal_in_file(hub, sid) is None
    await hub.sessions.reassign(HUMAN, a_reassign(session_id=sid, agent="bob"))
    await put(hub, sid, "/kv/b", BOB)
    await hub.sessions.end(BOB, a_session_end(session_id=sid))
    assert seal_in_file(hub, sid) == brain.ENDED
    await start(hub, ALICE, "again", {"session_id": sid})
    await put(hub, sid, "/kv/c")
    assert stored(hub, sid) == ["/kv/a", "/kv/b", "/kv/c"]


async def test_end_then_resume_leaves_the_brain_open_whatever_order_the_seals_run(
    hub: Hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    sid = await start(hub)
    await put(hub, sid, "/kv/a")
    real, hold = hub.sessions._seal_brain, anyio.Event()
    reached = anyio.Event()

    async def late_seal(session_id: str) -> None:  # the end's seal is sent only after the resume's
        reached.set()
        await hold.wait()
        await real(session_id)

    monkeypatch.setattr(hub.sessions, "_seal_brain", late_seal)
    async with anyio.create_task_group() as tg:
        tg.start_soon(hub.sessions.end, ALICE, a_session_end(session_id=sid))
        await reached.wait()
        monkeypatch.setattr(hub.sessions, "_seal_brain", real)
        assert (await hub.sessions.start(ALICE, a_session_start("web", "task")))["started"] == "resumed"
        hold.set()
    assert seal_in_file(hub, sid) is None  # the late seal read hub.db: the session runs
    await put(hub, sid, "/kv/b")


async def test_a_pruned_brain_stays_sealed_refuses_its_call_log_and_undo_keeps_it_sealed(hub: Hub) -> None:
    sid = await start(hub)
    await put(hub, sid, "/kv/a")
    await hub.brains.record_call(sid, "brain_put", {"path": "/kv/a"}, "ok")
    await hub.sessions.end(ALICE, a_session_end(session_id=sid))
    await hub.brains.record_call(sid, "session_end", {}, "ok")  # an ended session logs its end
    (pruned,) = (await hub.storage.prune(HUMAN, a_prune(session_id=sid)))["pruned"]
    assert seal_in_file(hub, sid) == brain.ENDED  # sealed since the end; prune opened no brain
    with pytest.raises(HubError) as caught:
        await hub.brains.record_call(sid, "brain_get", {}, "ok")
    assert caught.value.code == "not_found"
    with sqlite3.connect(hub.brains.path_of(sid)) as conn:
        assert [r[0] for r in conn.execute("SELECT tool FROM calls ORDER BY id")] == ["brain_put", "session_end"]
    await hub.storage.undo(HUMAN, an_undo(pruned["undo_token"]))
    assert seal_in_file(hub, sid) == brain.ENDED  # restored as it was: ended, so still sealed
    with pytest.raises(HubError) as caught:
        await put(hub, sid, "/kv/b")
    assert caught.value.code == "conflict"
    await start(hub, BOB, "heir", {"session_id": sid})
    await put(hub, sid, "/kv/b", BOB)
    assert stored(hub, sid) == ["/kv/a", "/kv/b"]


async def test_a_brain_first_written_by_the_call_log_after_the_end_is_born_sealed(hub: Hub) -> None:
    sid = await start(hub)
    await hub.sessions.end(ALICE, a_session_end(session_id=sid))
    assert not hub.brains.path_of(sid).exists()
    await hub.brains.record_call(sid, "session_end", {}, "ok")  # as the MCP tool logs its own call
    assert seal_in_file(hub, sid) == brain.ENDED and stored(hub, sid) == []
    with sqlite3.connect(hub.brains.path_of(sid)) as conn:
        assert conn.execute("SELECT tool FROM calls").fetchall() == [("session_end",)]


async def test_a_fork_copies_the_brain_without_its_seal(hub: Hub) -> None:
    source = await start(hub)
    await put(hub, source, "/kv/a")
    # The source ends while it is being copied: its seal is in the file the fork snapshots.
    async with hub.brains.pool.use(source) as actor:  # through the brain's actor, not behind it
        await actor.execute(lambda conn: brain.set_seal(conn, brain.ENDED, now=0.0))
    fork = await start(hub, BOB, "fork", {"session_id": source})
    assert fork != source and seal_in_file(hub, fork) is None
    assert seal_in_file(hub, source) == brain.ENDED
    await put(hub, fork, "/kv/b", BOB)
    assert stored(hub, fork) == ["/kv/a", "/kv/b"] and stored(hub, source) == ["/kv/a"]
