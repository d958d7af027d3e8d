"""A brain write's session check is remembered (`RowMemory`): a second put to a running
session reads no session row, and everything that could change the first read's answer makes the
next write read again, with the refusal it always had and nothing written. Runs on asyncio and trio.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from hubcore.caller import Caller
from hubcore.errors import HubError
from hubcore.hub import Hub
from hubcore.store import brain
from tests.requests import (
    a_brain_delete,
    a_brain_put,
    a_grant,
    a_project_update,
    a_prune,
    a_reassign,
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
    async with alice_and_bob_hub(tmp_path / "data", confidential=("secret",)) as h:
        yield h


class Reads:
    """Counts hub.db's point reads that share a hop (`read_then`: the session check's), and can run
    something while one is under way."""

    def __init__(self, hub: Hub, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        self.during: Callable[[], None] | None = None
        real = hub.core.store.read_then

        async def read_then(*args: Any, **kwargs: Any) -> Any:
            self.count += 1
            if self.during is not None:
                self.during()
            return await real(*args, **kwargs)

        monkeypatch.setattr(hub.core.store, "read_then", read_then)


async def start(hub: Hub, who: Caller = ALICE, project: str = "web") -> str:
    return str((await hub.sessions.start(who, a_session_start(project, "task")))["session_id"])


def put(hub: Hub, sid: str, path: str, who: Caller = ALICE, *, by_id: bool = False) -> Awaitable[dict[str, Any]]:
    if by_id:  # named on the call (as REST and a connection with no active session do)
        return hub.brains.write_entry(who, a_brain_put(path=path, content=path, store="session", session_id=sid))
    return hub.brains.write_entry(who, a_brain_put(path=path, content=path, store="session"), active=(sid, "web"))


def stored(hub: Hub, sid: str) -> list[str]:
    with sqlite3.connect(hub.brains.path_of(sid)) as conn:
        return [r[0] for r in conn.execute("SELECT path FROM entries ORDER BY path")]


async def refused(call: Awaitable[Any]) -> HubError:
    with pytest.raises(HubError) as caught:
        await call
    return caught.value


@pytest.mark.parametrize("by_id", [False, True])
async def test_a_second_put_reads_no_session_row(hub: Hub, monkeypatch: pytest.MonkeyPatch, by_id: bool) -> None:
    sid = await start(hub)
    reads = Reads(hub, monkeypatch)
    await put(hub, sid, "/kv/a", by_id=by_id)
    assert reads.count == 1
    for n in range(3):
        assert (await put(hub, sid, f"/kv/b{n}", by_id=by_id))["session_id"] == sid
    assert reads.count == 1
    assert stored(hub, sid) == ["/kv/a", "/kv/b0", "/kv/b1", "/kv/b2"]


async def test_another_caller_is_not_answered_from_the_owners_memory(hub: Hub, monkeypatch: pytest.MonkeyPatch) -> None:
    sid = await start(hub)
    await put(hub, sid, "/kv/a")
    reads = Reads(hub, monkeypatch)
    err = await refused(put(hub, sid, "/kv/bob", BOB))
    assert (err.code, reads.count) == ("forbidden", 1)
    assert stored(hub, sid) == ["/kv/a"]


async def test_an_ended_session_refuses_the_next_put_with_conflict(hub: Hub) -> None:
    sid = await start(hub)
    await put(hub, sid, "/kv/a")
    await hub.sessions.end(ALICE, a_session_end(session_id=sid))
    err = await refused(put(hub, sid, "/kv/late"))
    assert err.code == "conflict"
    assert str(err.message) == f"session {sid} has ended; its brain is read-only"
    assert stored(hub, sid) == ["/kv/a"]


async def test_a_reassigned_session_refuses_its_old_owner_with_forbidden(hub: Hub) -> None:
    sid = await start(hub)
    await put(hub, sid, "/kv/a")
    await hub.sessions.reassign(HUMAN, a_reassign(session_id=sid, agent="bob"))
    err = await refused(put(hub, sid, "/kv/alice"))
    assert err.code == "forbidden"
    assert stored(hub, sid) == ["/kv/a"]
    await put(hub, sid, "/kv/bob", BOB)  # the new owner writes
    assert stored(hub, sid) == ["/kv/a", "/kv/bob"]


async def test_a_pruned_session_is_not_found(hub: Hub) -> None:
    sid = await start(hub)
    await put(hub, sid, "/kv/a")
    await hub.sessions.end(ALICE, a_session_end(session_id=sid))
    await hub.storage.prune(HUMAN, a_prune(session_id=sid))
    err = await refused(put(hub, sid, "/kv/late"))
    assert err.code == "not_found"
    assert stored(hub, sid) == ["/kv/a"]


async def test_a_revoked_grant_hides_the_session_from_its_owner(hub: Hub) -> None:
    await hub.agents.grant(HUMAN, a_grant(agent_id="alice", project_id="secret"))
    sid = await start(hub, project="secret")
    await put(hub, sid, "/kv/a")
    await hub.agents.revoke_grant(HUMAN, "alice", "secret")
    err = await refused(put(hub, sid, "/kv/late"))
    assert (err.code, str(err.message)) == ("not_found", f"session '{sid}' not found")
    assert stored(hub, sid) == ["/kv/a"]


async def test_a_project_made_confidential_hides_the_session_from_its_owner(hub: Hub) -> None:
    sid = await start(hub)
    await put(hub, sid, "/kv/a")
    await hub.projects.update(HUMAN, a_project_update(project_id="web", confidential=True))
    err = await refused(put(hub, sid, "/kv/late"))
    assert err.code == "not_found"
    assert stored(hub, sid) == ["/kv/a"]


@pytest.mark.parametrize("moves", ["generation", "access"])
async def test_a_read_that_a_change_overlapped_is_not_remembered(
    hub: Hub, monkeypatch: pytest.MonkeyPatch, moves: str
) -> None:
    sid = await start(hub)
    reads = Reads(hub, monkeypatch)

    def change_begins() -> None:  # what `changing` and `access_changing` do before their write
        if moves == "generation":
            hub.sessions.generation += 1
        else:
            hub.core.access_changes += 1

    reads.during = change_begins
    await put(hub, sid, "/kv/a")
    reads.during = None
    await put(hub, sid, "/kv/b")
    assert reads.count == 2  # the first answer was not trusted: the second put read again
    await put(hub, sid, "/kv/c")
    assert reads.count == 2
    assert stored(hub, sid) == ["/kv/a", "/kv/b", "/kv/c"]


async def test_a_put_over_a_deleted_path_removes_its_tombstone_and_only_then(hub: Hub) -> None:
    sid = await start(hub)
    await put(hub, sid, "/kv/x")
    await put(hub, sid, "/kv/y")
    await hub.brains.delete_entry(ALICE, a_brain_delete(path="/kv/x", store="session"), active=(sid, "web"))
    await hub.brains.delete_entry(ALICE, a_brain_delete(path="/kv/y", store="session"), active=(sid, "web"))
    await put(hub, sid, "/kv/x")  # the tombstone of /kv/x goes, the one of /kv/y stays
    await put(hub, sid, "/kv/z")
    with sqlite3.connect(hub.brains.path_of(sid)) as conn:
        assert [r[0] for r in conn.execute("SELECT path FROM gone ORDER BY path")] == ["/kv/y"]
    assert stored(hub, sid) == ["/kv/x", "/kv/z"]


def test_before_put_takes_the_next_seq_and_reads_what_the_checks_read(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "b.db", isolation_level=None)
    try:
        brain.setup(conn)
        for path in ("/fs/a.md", "/fs/dir/b.md", "/kv/k", "/kv/gone"):
            brain.put(conn, path, b"x", version="v-" + path, now=1.0, actor="alice")
        brain.delete(conn, "/kv/gone")  # leaves a tombstone
        for state in (brain.UNSYNCED, None, brain.ENDED):
            brain.set_seal(conn, state, now=2.0)
            for path in ("/fs/a.md", "/fs/dir", "/fs/dir/", "/fs/dir/b.md", "/fs/nothing", "/kv/k", "/kv/", "/kv/gone"):
                epoch, seq = brain.counter(conn) or ("", 0)
                tombstone = conn.execute("SELECT 1 FROM gone WHERE path = ?", (path,)).fetchone() is not None
                pages = conn.execute("PRAGMA page_count").fetchone()[0] * conn.execute("PRAGMA page_size").fetchone()[0]
                expected = brain.Before(
                    (epoch, seq + 1),
                    brain.seal_state(conn),
                    brain.held_version(conn, path),
                    brain.is_directory(conn, path),
                    tombstone,
                    pages,
                )
                assert brain.before_put(conn, path) == expected, path
                assert brain.counter(conn) == (epoch, seq + 1)  # taken: a refused put rolls it back
    finally:
        conn.close()


async def test_a_refused_put_gives_its_seq_back(hub: Hub) -> None:
    sid = await start(hub)
    await put(hub, sid, "/fs/dir/x.md")
    with sqlite3.connect(hub.brains.path_of(sid)) as conn:
        held = brain.counter(conn)
    wrong = "sha256:" + "0" * 64
    stale = a_brain_put(path="/fs/dir/x.md", content="new", store="session", if_version=wrong)
    assert (await refused(hub.brains.write_entry(ALICE, stale, active=(sid, "web")))).code == "conflict"
    over_dir = a_brain_put(path="/fs/dir", content="new", store="session")
    assert (await refused(hub.brains.write_entry(ALICE, over_dir, active=(sid, "web")))).code == "conflict"
    with sqlite3.connect(hub.brains.path_of(sid)) as conn:
        assert brain.counter(conn) == held
        assert [r[0] for r in conn.execute("SELECT value FROM entries")] == [b"/fs/dir/x.md"]
    await put(hub, sid, "/kv/next")
    with sqlite3.connect(hub.brains.path_of(sid)) as conn:
        assert held is not None and brain.counter(conn) == (held[0], held[1] + 1)
