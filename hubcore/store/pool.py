"""Per-file actors opened on first use and closed when idle.

Brain and knowledge base files are many; a hub with thousands of sessions keeps only the busy ones
open. `ActorPool.use(key)` opens the file's actor if needed and leases it for the duration of the
block; an actor with a lease is never closed under its user. Beyond `max_open`, the least recently
used idle actors are closed; `sweep()` closes those idle for longer than `idle_secs`.
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


class ActorPool:
    def __init__(
        self,
        task_group: TaskGroup,
        factory: Callable[[str], StoreActor],
        *,
        max_open: int = 64,
        idle_secs: float = 60.0,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._tg = task_group
        self._factory = factory
        self._max_open = max_open
        self._idle_secs = idle_secs
        self._monotonic = monotonic
        self._open: OrderedDict[str, StoreActor] = OrderedDict()
        self._leases: dict[str, int] = {}
        self._last_used: dict[str, float] = {}
        self._lock = anyio.Lock()
        self._closed = False
        self.opened_total = 0
        self.closed_total = 0

    @asynccontextmanager
    async def use(self, key: str) -> AsyncIterator[StoreActor]:
        """The open actor for `key`, held open until the block ends."""
        actor = await self._acquire(key)
        try:
            yield actor
        finally:
            self._leases[key] -= 1
            self._last_used[key] = self._monotonic()
            if self._leases[key] == 0:
                del self._leases[key]

    async def _acquire(self, key: str) -> StoreActor:
        async with self._lock:
            if self._closed:
                raise StoreClosed("actor pool is closed")
            actor = self._open.get(key)
            if actor is None or actor.closed:
                actor = self._factory(key)
                await self._tg.start(actor.run)
                self._open[key] = actor
                self.opened_total += 1
            self._open.move_to_end(key)
            self._leases[key] = self._leases.get(key, 0) + 1
            self._last_used[key] = self._monotonic()
            await self._evict_over_cap()
            return actor

    async def _evict_over_cap(self) -> None:
        excess = len(self._open) - self._max_open
        for key in [k for k in self._open if k not in self._leases][: max(excess, 0)]:
            await self._close_key(key)

    async def _close_key(self, key: str) -> None:
        actor = self._open.pop(key)
        self._last_used.pop(key, None)
        await actor.aclose()
        self.closed_total += 1

    async def close(self, key: str) -> None:
        """Close `key`'s actor now (waiting for nothing but its queue), e.g. before removing the file.

        The caller must make sure no lease is held; a leased actor is left open.
        """
        async with self._lock:
            if key in self._open and key not in self._leases:
                await self._close_key(key)

    async def sweep(self) -> int:
        """Close actors idle for longer than `idle_secs`; returns how many were closed."""
        now = self._monotonic()
        async with self._lock:
            stale = [
                key
                for key in self._open
                if key not in self._leases and now - self._last_used.get(key, now) >= self._idle_secs
            ]
            for key in stale:
                await self._close_key(key)
        return len(stale)

    def is_open(self, key: str) -> bool:
        return key in self._open

    @property
    def open_count(self) -> int:
        return len(self._open)

    async def aclose(self) -> None:
        async with self._lock:
            self._closed = True
            for key in list(self._open):
                await self._close_key(key)
