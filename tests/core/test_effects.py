"""Effects after the commit, by the machinery (DESIGN section 2), on asyncio and on trio.

A command sent with `execute_effects` returns `(result, effects)`; the actor hands the effects to
its `publish` once the batch committed, in batch order, before any caller of the batch is answered;
a command that failed, or whose transaction did not commit, publishes nothing.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import TaskGroup

from hubcore.errors import HubError
from hubcore.store.actor import StoreActor
from tests.core.support import Gate, running, setup, stored_tags, wait_until
from tests.core.test_store_actor import hold_writer

pytestmark = pytest.mark.anyio

Results = dict[str, Any]


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def insert_noting(tag: str) -> Callable[[sqlite3.Connection], tuple[int, str]]:
    def write(conn: sqlite3.Connection) -> tuple[int, str]:
        cur = conn.execute("INSERT INTO item (tag) VALUES (?)", (tag,))
        assert cur.lastrowid is not None
        return cur.lastrowid, f"effect of {tag}"

    return write


def failing_after_noting(tag: str) -> Callable[[sqlite3.Connection], tuple[int, str]]:
    def write(conn: sqlite3.Connection) -> tuple[int, str]:
        conn.execute("INSERT INTO item (tag) VALUES (?)", (tag,))
        raise ValueError(f"{tag} refused")

    return write


class Sink:
    """The publish hook: what it was handed, which replies had arrived by then, and the rows
    committed at that moment (read through a connection of its own)."""

    def __init__(self, path: Path, results: Results) -> None:
        self.path = path
        self.results = results
        self.published: list[str] = []
        self.replied_before: list[set[str]] = []
        self.committed_at: list[list[str]] = []

    def __call__(self, effects: Any) -> None:
        self.published.append(effects)
        self.replied_before.append(set(self.results) - {"gate"})
        self.committed_at.append(stored_tags(self.path))


async def record(actor: StoreActor, name: str, fn: Callable[[sqlite3.Connection], Any], results: Results) -> None:
    try:
        results[name] = await actor.execute_effects(fn)
    except Exception as exc:
        results[name] = exc


async def queue_in_order(tg: TaskGroup, actor: StoreActor, commands: dict[str, Any], results: Results) -> None:
    for name, fn in commands.items():
        depth = actor.queue_depth()
        tg.start_soon(record, actor, name, fn, results)
        await wait_until(lambda d=depth: actor.queue_depth() == d + 1, f"{name} to be queued")  # type: ignore[misc]


def new_actor(tmp_path: Path, sink: Sink) -> StoreActor:
    return StoreActor(tmp_path / "store.db", setup=setup, publish=sink)


async def test_a_batch_publishes_after_its_commit_in_order_and_before_any_reply(tmp_path: Path) -> None:
    results: Results = {}
    sink = Sink(tmp_path / "store.db", results)
    commands = {
        "a": insert_noting("a"),
        "bad": failing_after_noting("bad"),
        "b": insert_noting("b"),
        "c": insert_noting("c"),
    }
    async with running(new_actor(tmp_path, sink)) as actor, anyio.create_task_group() as tg:
        gate: Gate = await hold_writer(tg, actor, results)
        await queue_in_order(tg, actor, commands, results)
        gate.open()
    # The callers get the result alone; the failed command got its error and published nothing.
    assert [results[n] for n in ("a", "b", "c")] == [2, 3, 4]
    assert isinstance(results["bad"], ValueError)
    assert sink.published == ["effect of a", "effect of b", "effect of c"]
    # Every effect went out with its rows already committed, and before anyone of the batch was told.
    assert all(rows == ["gate", "a", "b", "c"] for rows in sink.committed_at)
    assert sink.replied_before == [set(), set(), set()]


async def test_a_batch_whose_commit_fails_publishes_nothing(tmp_path: Path) -> None:
    def orphan(conn: sqlite3.Connection) -> tuple[None, str]:  # the deferred foreign key fails at COMMIT
        conn.execute("INSERT INTO child (parent_id) VALUES (42)")
        return None, "effect of orphan"

    results: Results = {}
    sink = Sink(tmp_path / "store.db", results)
    async with running(new_actor(tmp_path, sink)) as actor:
        async with anyio.create_task_group() as tg:
            gate = await hold_writer(tg, actor, results)
            await queue_in_order(tg, actor, {"a": insert_noting("a"), "orphan": orphan}, results)
            gate.open()
        assert await actor.execute_effects(insert_noting("later")) == 2
    assert all(isinstance(results[n], HubError) for n in ("a", "orphan"))
    assert sink.published == ["effect of later"]
    assert stored_tags(tmp_path / "store.db") == ["gate", "later"]


async def test_a_failing_publish_does_not_undo_the_reply(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    def broken(effects: Any) -> None:
        raise RuntimeError("a listener broke")

    async with running(StoreActor(tmp_path / "store.db", setup=setup, publish=broken)) as actor:
        assert await actor.execute_effects(insert_noting("a")) == 1
        assert not actor.broken
        assert await actor.execute_effects(insert_noting("b")) == 2
    assert stored_tags(tmp_path / "store.db") == ["a", "b"]
    assert "publishing the effects" in caplog.text


def test_no_service_publishes_by_hand() -> None:
    """Effects reach listeners only through the actor: no service module calls `publish(`."""
    services = Path(__file__).resolve().parents[2] / "hubcore" / "services"
    offenders = [
        p.name
        for p in sorted(services.rglob("*.py"))  # the kb package too
        if p.name != "changes.py" and "publish(" in p.read_text(encoding="utf-8")
    ]
    assert offenders == []
