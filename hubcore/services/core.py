"""What every service needs: settings, the clock, the hub store's actor, the metrics, the
publisher the actor hands committed effects to (services never call it themselves), the hub's
parts for the loops that span them (project deletion, stats, Home, the brief, storage rows), and the
data directory's measurements, which are the hub's and depend on no part."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import anyio

from hubcore.clock import Clock
from hubcore.config import HubSettings
from hubcore.metrics import HubMetrics
from hubcore.parts.protocol import Part
from hubcore.services.changes import Publisher
from hubcore.services.volume import DataDir
from hubcore.store.actor import StoreActor


class Nudge:
    """Counts the writes that background work following the stores has to catch up with (the
    search index: a part noting a changed source calls `note`), and wakes that work. One waiter."""

    def __init__(self) -> None:
        self.count = 0
        self._event = anyio.Event()

    def note(self) -> None:
        self.count += 1
        self._event.set()

    async def wait(self, seen: int) -> None:
        """Return once `count` has moved past `seen`."""
        while self.count == seen:
            await self._event.wait()
            self._event = anyio.Event()


@dataclass
class Core:
    settings: HubSettings
    clock: Clock
    store: StoreActor
    metrics: HubMetrics
    publisher: Publisher
    parts: tuple[Part, ...] = ()  # set once by `Hub` from its one list; read only by the loops
    # The binary's part types (`hubcore.parts.catalog.PART_TYPES`), set by `Hub`: their class-level
    # declarations name what a part absent from `parts` would have filled.
    part_types: tuple[type[Part], ...] = ()
    datadir: DataDir = field(init=False)  # the hub's own, whichever parts it has
    # Set once the hub answers requests (`Hub.mark_serving`): background work that would slow the
    # start (loading the semantic model) waits for it.
    serving: anyio.Event = field(init=False, default_factory=anyio.Event)
    # Moved by every change of a search source (`hubcore.parts.protocol.Touched`): the index follows.
    nudge: Nudge = field(init=False, default_factory=Nudge)
    # Moved before and after every change that can hide a project from an agent (a grant revoked, a
    # project's confidentiality or owner changed): memories of what a caller may see trust
    # themselves only while it stands (`hubcore.services.sessions.RowMemory`).
    access_changes: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        self.datadir = DataDir(self.settings, self.write_count)

    def write_count(self) -> int:
        """Writes so far to hub.db and to every part's own stores (memoised measurements key on it)."""
        return self.store.statistics().commands + sum(part.writes() for part in self.parts)

    def now(self) -> float:
        return self.clock.now()

    @asynccontextmanager
    async def access_changing(self) -> AsyncIterator[None]:
        """Around a write that can hide a project from an agent: `access_changes` moves before
        and after it, so a memory filled while it ran is not trusted."""
        self.access_changes += 1
        try:
            yield
        finally:
            self.access_changes += 1
