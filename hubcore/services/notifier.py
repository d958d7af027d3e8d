"""The in-process notifier: what waiters and streams wake on after a commit.

Services publish `Change` records only after `store.execute` returned (the write is durable), so a
woken waiter that re-reads the store always finds what woke it. Nothing here polls SQLite.

Two ways to listen:
- `waiter(match)`: a one-shot flag set by any published change `match` accepts. Register it
  *before* reading the store and wait on it after, so a change that lands between the read and the
  wait is not lost (`inbox_wait`, `notify_wait`).
- `subscribe()`: every change, in order, into a bounded buffer (the stream). A listener too slow to
  keep up loses the oldest ids, never blocks the publisher; ids are hints, the client re-reads.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import anyio

from hubcore.metrics import HubMetrics

Topic = Literal["feed", "inbox"]
SUBSCRIPTION_BUFFER = 4096


@dataclass(frozen=True)
class Change:
    """One committed change: a new feed event, or an inbox item created or changed.

    `owner` is the actor whose item it is (the asker of a question, the author of an idea);
    `resolved` marks an inbox change that resolved a waiting item.
    """

    topic: Topic
    project_id: str
    event_id: str
    kind: str = ""
    actor: str = ""
    owner: str = ""
    resolved: bool = False


class Waiter:
    """A flag one listener waits on; set by the first matching change after `reset`."""

    def __init__(self, match: Callable[[Change], bool]) -> None:
        self.match = match
        self._event = anyio.Event()

    def wake(self) -> None:
        self._event.set()

    def offer(self, change: Change) -> None:
        if not self._event.is_set() and self.match(change):
            self._event.set()

    async def wait(self) -> None:
        await self._event.wait()

    @property
    def fired(self) -> bool:
        return self._event.is_set()

    def reset(self) -> None:
        if self._event.is_set():
            self._event = anyio.Event()


class Subscription:
    """Every change in order, buffered up to `size`; the oldest are dropped past it."""

    def __init__(self, size: int = SUBSCRIPTION_BUFFER) -> None:
        self._items: deque[Change] = deque(maxlen=size)
        self._event = anyio.Event()
        self.dropped = 0
        self.closed = False  # the hub is shutting down: the listener should finish

    def close(self) -> None:
        self.closed = True
        self._event.set()

    def push(self, change: Change) -> None:
        if len(self._items) == self._items.maxlen:
            self.dropped += 1
        self._items.append(change)
        self._event.set()

    async def wait(self) -> None:
        await self._event.wait()

    def drain(self) -> list[Change]:
        items = list(self._items)
        self._items.clear()
        self._event = anyio.Event()
        return items


class Notifier:
    """Fan-out of committed changes to waiters and subscriptions. No module-level state."""

    def __init__(self) -> None:
        self._waiters: set[Waiter] = set()
        self._subscriptions: set[Subscription] = set()
        self.published = 0
        self.closed = False
        # Parts of the hub that must see every change (not listeners: they hold no request open).
        self._observers: list[Callable[[Change], None]] = []

    def observe(self, observer: Callable[[Change], None]) -> None:
        """Call `observer` with every published change, after the listeners were handed it."""
        self._observers.append(observer)

    def close(self) -> None:
        """Shutdown: end every subscription (streams finish their response) and wake every waiter,
        so in-flight requests complete within the server's grace window instead of timing out."""
        self.closed = True
        for sub in list(self._subscriptions):
            sub.close()
        for waiter in list(self._waiters):
            waiter.wake()

    def publish(self, changes: Iterable[Change]) -> None:
        """Hand committed changes to every listener. Call from the event loop, after the commit."""
        batch = list(changes)
        if not batch:
            return
        self.published += len(batch)
        for waiter in list(self._waiters):
            for change in batch:
                waiter.offer(change)
        for sub in list(self._subscriptions):
            for change in batch:
                sub.push(change)
        for observer in self._observers:
            for change in batch:
                observer(change)

    @contextmanager
    def waiter(self, match: Callable[[Change], bool]) -> Iterator[Waiter]:
        w = Waiter(match)
        self._waiters.add(w)
        try:
            yield w
        finally:
            self._waiters.discard(w)

    @contextmanager
    def subscribe(self, size: int = SUBSCRIPTION_BUFFER) -> Iterator[Subscription]:
        sub = Subscription(size)
        if self.closed:
            sub.close()
        self._subscriptions.add(sub)
        try:
            yield sub
        finally:
            self._subscriptions.discard(sub)

    @property
    def listeners(self) -> int:
        return len(self._waiters) + len(self._subscriptions)


class Poker(Protocol):
    def poke(self) -> None: ...


@dataclass
class Effects:
    """What a write command did that others must hear of once it has committed."""

    changes: list[Change] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    started_waiting: bool = False

    def event(self, row: dict[str, Any]) -> None:
        """Note a newly appended event (rendered shape)."""
        self.kinds.append(row["kind"])
        self.changes.append(Change("feed", row["project_id"], row["id"], row["kind"], row["actor"]))

    def inbox(self, project_id: str, event_id: str, *, owner: str, kind: str = "",
              resolved: bool = False) -> None:
        self.changes.append(Change("inbox", project_id, event_id, kind, "", owner, resolved))

    def merge(self, other: Effects) -> None:
        self.changes.extend(other.changes)
        self.kinds.extend(other.kinds)
        self.started_waiting = self.started_waiting or other.started_waiting


class Publisher:
    """Publishes a committed command's effects: notifier, event metrics, the notify target."""

    def __init__(self, notifier: Notifier, metrics: HubMetrics) -> None:
        self.notifier = notifier
        self.metrics = metrics
        self.notify_target: Poker | None = None

    def publish(self, effects: Effects) -> None:
        for kind in effects.kinds:
            self.metrics.events_appended.labels(kind=kind).inc()
        self.notifier.publish(effects.changes)
        if effects.started_waiting and self.notify_target is not None:
            self.notify_target.poke()
