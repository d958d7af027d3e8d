"""Helpers for the store actor tests: a small schema, commands, and a running actor."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio

from hubcore.store.actor import StoreActor

SCHEMA = """
CREATE TABLE IF NOT EXISTS item (id INTEGER PRIMARY KEY, tag TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS parent (id INTEGER PRIMARY KEY);
CREATE TABLE IF NOT EXISTS child (
    id INTEGER PRIMARY KEY,
    parent_id INTEGER NOT NULL REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED
);
"""

Command = Callable[[sqlite3.Connection], object]


def setup(conn: sqlite3.Connection) -> None:
    conn.executescript(SCHEMA)


def insert(tag: str) -> Callable[[sqlite3.Connection], int]:
    def write(conn: sqlite3.Connection) -> int:
        cur = conn.execute("INSERT INTO item (tag) VALUES (?)", (tag,))
        assert cur.lastrowid is not None
        return cur.lastrowid

    return write


def insert_then_fail(tag: str, exc: Exception) -> Command:
    """Writes a row, then raises: the row must not survive."""

    def write(conn: sqlite3.Connection) -> None:
        conn.execute("INSERT INTO item (tag) VALUES (?)", (tag,))
        raise exc

    return write


def stored_tags(path: Path) -> list[str]:
    """The committed rows, in id order, seen through a connection of our own."""
    conn = sqlite3.connect(path)
    try:
        return [row[0] for row in conn.execute("SELECT tag FROM item ORDER BY id")]
    finally:
        conn.close()


class Gate:
    """A command that holds the write thread until the test opens the gate."""

    def __init__(self, tag: str = "gate") -> None:
        self.tag = tag
        self.entered = threading.Event()
        self.opened = threading.Event()

    def __call__(self, conn: sqlite3.Connection) -> str:
        conn.execute("INSERT INTO item (tag) VALUES (?)", (self.tag,))
        self.entered.set()
        if not self.opened.wait(10):
            raise TimeoutError("the test never opened the gate")
        return self.tag

    async def wait_entered(self) -> None:
        await anyio.to_thread.run_sync(self.entered.wait, 10)
        assert self.entered.is_set()

    def open(self) -> None:
        self.opened.set()


async def wait_until(condition: Callable[[], bool], what: str) -> None:
    """Let other tasks run until `condition()` holds (a few seconds at most)."""
    try:
        with anyio.fail_after(5):
            # Polls a gauge the code under test exposes (queue depth, a closed flag): there is no
            # event to wait on, and the loop ends on the very condition asserted, never on a delay.
            while not condition():  # noqa: ASYNC110
                await anyio.sleep(0.001)
    except TimeoutError:
        raise AssertionError(f"timed out waiting for {what}") from None


@asynccontextmanager
async def running(actor: StoreActor) -> AsyncIterator[StoreActor]:
    async with anyio.create_task_group() as tg:
        await tg.start(actor.run)
        try:
            yield actor
        finally:
            await actor.aclose()


def new_actor(tmp_path: Path, **options: Any) -> StoreActor:
    return StoreActor(tmp_path / "store.db", setup=setup, **options)


Results = dict[str, Any]


async def record(actor: StoreActor, name: str, fn: Callable[[sqlite3.Connection], Any], results: Results) -> None:
    """Send `fn`, keeping its reply or its exception under `name`."""
    try:
        results[name] = await actor.execute(fn)
    except Exception as exc:
        results[name] = exc
