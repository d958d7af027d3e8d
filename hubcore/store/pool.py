"""Per-file actors opened on first use and closed when idle.

Brain and knowledge base files are many; a hub with thousands of sessions keeps only the busy ones
open. `ActorPool.use(key)` opens the file's actor if needed and leases it for the duration of the
block; an actor with a lease is never closed under its user (except by `aclose` of the whole pool).
Beyond `max_open`, the least recently used idle actors are closed; `sweep()` closes those idle for
longer than `idle_secs` (`run_sweeper` calls it periodically).

One file never has two writers: an actor being closed is finished (drained, checkpointed, closed)
before a new actor for the same key is opened. Closing happens outside the pool's lock, so a slow
close does not hold up users of other files.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import anyio
from anyio.abc import TaskGroup

from hubcore.errors import StoreClosed
from hubcore.store.actor import StoreActor
from hubcore.store.writer import WriterThread

Victims = list[tuple[str, StoreActor]]


class ActorPool:
    """Actors by key, started in `task_group` (which must outlive the pool) by `factory(key)`.

    With `writer_threads`, the pool's actors share that many writer threads, the files in turn
    (each file's connection still used on its one thread only), which the pool stops at `aclose`;
    without, each actor has a thread of its own."""

    def __init__(
        self,
        task_group: TaskGroup,
        factory: Callable[[str], StoreActor],
        *,
        max_open: int = 64,
        idle_secs: float = 60.0,
        monotonic: Callable[[], float] = time.monotonic,
        writer_threads: int = 0,
        name: str = "pool",
    ) -> None:
        self._tg = task_group
        self._factory = factory
        self._max_open = max_open
        self._idle_secs = idle_secs
        self._monotonic = monotonic
        self._open: OrderedDict[str, StoreActor] = OrderedDict()  # least recently used first
        self._leases: dict[str, int] = {}
        self._last_used: dict[str, float] = {}
        self._closing: dict[str, StoreActor] = {}
        self._lock = anyio.Lock()
        self._closed = False
        self._writer_threads = writer_threads
        self._threads: list[WriterThread] = []  # started on first use, stopped by `aclose`
        self._name = name
        self.opened_total = 0
        self.closed_total = 0

    @asynccontextmanager
    async def use(self, key: str) -> AsyncIterator[StoreActor]:
        """The open actor for `key`, held open until the block ends."""
        actor = await self._acquire(key)
        try:
            yield actor
        finally:
            self._release(key)

    def _release(self, key: str) -> None:
        self._leases[key] -= 1
        if not self._leases[key]:
            del self._leases[key]
        self._last_used[key] = self._monotonic()
        if key in self._open:
            self._open.move_to_end(key)

    async def _acquire(self, key: str) -> StoreActor:
        actor = self._open.get(key)
        if actor is not None and not actor.closed and not self._closed:
            # Already open: lease it without the lock, whose acquire costs two event-loop turns
            # (nothing awaits between the look and the lease, so no other task runs in between).
            self._take_lease(key)
            return actor
        while True:
            if await self._wait_for_previous(key):
                continue
            async with self._lock:
                if self._previous(key) is not None:
                    continue
                actor = await self._lease(key)
                if actor is None:
                    continue
                victims = self._pick_over_cap()
            for victim in victims:
                self._tg.start_soon(self._close_victim, *victim)
            return actor

    def _previous(self, key: str) -> StoreActor | None:
        """An actor of `key` still closing (its file may not be opened again until it stopped)."""
        actor = self._closing.get(key)
        return actor if actor is not None and not actor.stopped else None

    async def _wait_for_previous(self, key: str) -> bool:
        previous = self._previous(key)
        if previous is None:
            return False
        await previous.aclose()
        return True

    async def _lease(self, key: str) -> StoreActor | None:
        """Lease `key`'s actor, opening it if needed (under the lock); None means: try again."""
        if self._closed:
            raise StoreClosed("actor pool is closed")
        actor = self._open.get(key)
        if actor is not None and actor.closed:
            del self._open[key]  # closed or broken behind our back: replace it once it stopped
            if not actor.stopped:
                self._closing[key] = actor
                self._tg.start_soon(self._close_victim, key, actor)
                return None
            actor = None
        if actor is None:
            actor = self._factory(key)
            if self._writer_threads:
                actor.share_thread(self._thread_for_next())
            await self._tg.start(actor.run)
            self._open[key] = actor
            self.opened_total += 1
        self._take_lease(key)
        return actor

    def _thread_for_next(self) -> WriterThread:
        """The shared writer thread of the next actor opened: the threads in turn."""
        if len(self._threads) < self._writer_threads:
            self._threads.append(WriterThread(f"store {self._name} {len(self._threads) + 1}"))
            return self._threads[-1]
        return self._threads[self.opened_total % len(self._threads)]

    def _take_lease(self, key: str) -> None:
        self._open.move_to_end(key)
        self._leases[key] = self._leases.get(key, 0) + 1
        self._last_used[key] = self._monotonic()

    def _pick_over_cap(self) -> Victims:
        excess = len(self._open) - self._max_open
        if excess <= 0:
            return []
        keys = [key for key in self._open if key not in self._leases][: max(excess, 0)]
        return [self._retire(key) for key in keys]

    def _retire(self, key: str) -> tuple[str, StoreActor]:
        """Move `key` from open to closing (under the lock); its actor is closed outside it."""
        actor = self._open.pop(key)
        self._last_used.pop(key, None)
        self._closing[key] = actor
        return key, actor

    async def _close_victim(self, key: str, actor: StoreActor) -> None:
        try:
            with anyio.CancelScope(shield=True):
                await actor.aclose()
        finally:
            if self._closing.get(key) is actor:
                del self._closing[key]
            self.closed_total += 1

    async def close(self, key: str) -> None:
        """Close `key`'s actor now and wait until its file is closed, e.g. before removing the file.

        The caller must make sure no lease is held; a leased actor is left open.
        """
        async with self._lock:
            victim = self._retire(key) if key in self._open and key not in self._leases else None
        if victim is not None:
            await self._close_victim(*victim)
        await self._wait_for_previous(key)

    async def sweep(self) -> int:
        """Close actors idle for at least `idle_secs`; returns how many were closed."""
        async with self._lock:
            now = self._monotonic()
            stale = [
                self._retire(key)
                for key in list(self._open)
                if key not in self._leases and now - self._last_used.get(key, now) >= self._idle_secs
            ]
        for victim in stale:
            await self._close_victim(*victim)
        return len(stale)

    async def run_sweeper(self, every: float | None = None) -> None:
        """Sweep every `every` seconds (default: a quarter of `idle_secs`) until cancelled or closed."""
        interval = every if every is not None else self._idle_secs / 4
        while not self._closed:
            await anyio.sleep(interval)
            await self.sweep()

    def is_open(self, key: str) -> bool:
        return key in self._open

    @property
    def open_count(self) -> int:
        return len(self._open)

    async def aclose(self) -> None:
        """Close every actor, leased or not (their queued commands are answered); refuse new uses."""
        async with self._lock:
            self._closed = True
            victims = [self._retire(key) for key in list(self._open)]
        async with anyio.create_task_group() as tg:
            for victim in victims:
                tg.start_soon(self._close_victim, *victim)
            for actor in list(self._closing.values()):
                tg.start_soon(actor.aclose)
        threads, self._threads = self._threads, []
        for thread in threads:  # every actor on them has stopped
            thread.stop()
