"""Committed changes, published in process (the `Notifier`): what waiters and streams wake on.

Services publish `Change` records only after `store.execute` returned (the write is durable), so a
woken waiter that re-reads the store always finds what woke it. Nothing here polls SQLite.

A write's cost must not grow with the number of listeners, so publishing does a fixed amount of
work per change whoever listens:
- `waiter(match, keys)`: a one-shot flag for `inbox_wait` and `notify_wait`. It is filed under the
  keys of the changes it may care about (`owner_key`, `feed_key`), and a change is offered only to
  the waiters filed under its own keys. Register it *before* reading the store and wait on it
  after, so a change that lands between the read and the wait is not lost.
- `open_stream(holder, limit)`: a `Reader` for one `GET /api/v1/stream`. Every change goes once
  into a shared ring (`ChangeLog`) and one shared event is set per published batch; a reader holds
  only its position in the ring, and when it runs it takes everything past that position at once.
  A reader that fell further behind than the ring holds is told to refresh instead of replaying.

`close()` (shutdown) ends every reader and answers every waiter, present and future, at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Hashable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal, cast
from weakref import WeakSet

import anyio
import orjson
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from hubcore.errors import HubError
from hubcore.metrics import HubMetrics

Topic = Literal["feed", "inbox", "artifact-live"]
LOG_CAPACITY = 4096
STREAM_RETRY_AFTER_SECS = 5
ANY_PROJECT = "*"


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
    # An `artifact-live` change (a live artifact version moved): `event_id` holds the artifact id,
    # these its version and live revision.
    version: int = 0
    live_rev: int = 0

    @property
    def ids(self) -> bytes:
        """`{"project_id", "event_id"}` as JSON (for `artifact-live`, `{"artifact_id", "version",
        "live_rev"}`): what a stream hands on."""
        if self.topic == "artifact-live":
            live = {"artifact_id": self.event_id, "version": self.version, "live_rev": self.live_rev}
            return orjson.dumps(live)
        return orjson.dumps({"project_id": self.project_id, "event_id": self.event_id})

    @property
    def frame(self) -> bytes:
        """This change as one Server-Sent Events message (`event: <topic>`, `data: <ids>`). The
        change log encodes it once, when it takes the change, and keeps only those bytes (in
        its byte buffer, not on the change), so that 500 streams handing it on copy bytes
        instead of each rendering it again (docs/benchmarks.md, "Third session: stream fan-out")."""
        return b"event: " + self.topic.encode() + b"\ndata: " + self.ids + b"\n\n"


def owner_key(actor: str) -> Hashable:
    """The key of a waiter that cares about inbox changes to `actor`'s own items."""
    return ("inbox", actor)


def feed_key(project_id: str | None) -> Hashable:
    """The key of a waiter that cares about feed events in one project (None: in every project)."""
    return ("feed", project_id or ANY_PROJECT)


def _keys(change: Change) -> tuple[Hashable, ...]:
    if change.topic == "inbox":
        return (owner_key(change.owner),)
    if change.topic != "feed":
        return ()  # only streams hear of a live artifact's moves; no wait does
    if change.owner:  # an event addressed to one agent (a comment on its artifact): its waits too
        return (feed_key(change.project_id), feed_key(None), owner_key(change.owner))
    return (feed_key(change.project_id), feed_key(None))


class Waiter:
    """A flag one listener waits on; set by the first matching change after `reset`, and for good
    by shutdown (`shutdown` then says why it woke)."""

    def __init__(self, match: Callable[[Change], bool]) -> None:
        self.match = match
        self._event = anyio.Event()
        self.shutdown = False

    def close(self) -> None:
        self.shutdown = True
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
        if self._event.is_set() and not self.shutdown:
            self._event = anyio.Event()


@dataclass(frozen=True)
class Span:
    """The changes numbered `start` to `end` (exclusive) as one stream's turn takes them: their
    SSE frames end to end (`data`) and the projects they name, both read at once so a later
    append that wraps the ring cannot change them. The changes themselves are read only for a
    stream that may see some of those projects and not others (`ChangeLog.changes`)."""

    start: int
    end: int
    data: bytes
    projects: frozenset[str]

    @property
    def count(self) -> int:
        return self.end - self.start


class ChangeLog:
    """The last `capacity` changes in a fixed ring, numbered from 0 in the order published, with
    their SSE frames end to end in one byte buffer and, per project, the number of its latest
    change: a stream's turn then costs one copy of bytes and a walk over the projects it names,
    never a step per change it carries. (Joining a turn's frames one by one touched every
    change's bytes object: with 500 streams, each turn carried some 2,000 changes, and the slices
    and the join were most of what a turn cost; docs/benchmarks.md, thirteenth session.)"""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._slots: list[Change | None] = [None] * capacity
        # The frames of the changes held, oldest first, from the byte offset `_base` on (offsets
        # count every byte ever appended): the bytes of changes that left the ring are cut off
        # the front once they are an eighth of the buffer.
        self._bytes = bytearray()
        self._base = 0
        self._starts: list[int] = [0] * capacity  # where each slot's frame begins (an offset)
        # project id -> number of its latest change, oldest first (re-inserted on every change);
        # entries that fell out of the ring are dropped as new changes come, so it stays small.
        self._latest: dict[str, int] = {}
        self.head = 0  # how many changes were ever appended: the next one's number

    def append(self, change: Change) -> None:
        slot = self.head % self.capacity
        self._slots[slot] = change
        self._starts[slot] = self._base + len(self._bytes)
        self._bytes += change.frame
        self._latest.pop(change.project_id, None)
        self._latest[change.project_id] = self.head
        self.head += 1
        oldest = next(iter(self._latest))
        if self._latest[oldest] < self.head - self.capacity:
            del self._latest[oldest]
        if self.head >= self.capacity:
            # The oldest change held is the one the next append overwrites.
            dead = self._starts[self.head % self.capacity] - self._base
            if 8 * dead > len(self._bytes):
                del self._bytes[:dead]  # CPython moves the buffer's start; no bytes are copied
                self._base += dead

    def since(self, position: int) -> list[Change] | None:
        """The changes numbered `position` and later, oldest first; None when some of them were
        already overwritten."""
        return self.changes(position, self.head)

    def changes(self, start: int, end: int) -> list[Change] | None:
        """The changes numbered `start` to `end` (exclusive, at most the head), oldest first;
        None when some of them were already overwritten."""
        if self.head - start > self.capacity:
            return None
        if end <= start:
            return []
        first, stop = start % self.capacity, end % self.capacity
        slots = self._slots[first:stop] if first < stop else self._slots[first:] + self._slots[:stop]
        return cast("list[Change]", slots)

    def filtered(self, start: int, end: int, allowed: frozenset[str]) -> bytes | None:
        """The frames of the changes numbered `start` to `end` (exclusive) that name a project in
        `allowed`, end to end; None when some of those changes were already overwritten."""
        changes = self.changes(start, end)
        if changes is None:
            return None
        kept = [self._frame(n) for n, change in enumerate(changes, start) if change.project_id in allowed]
        return b"".join(kept)

    def _frame(self, number: int) -> bytearray:
        """The frame of the change numbered `number` (held in the ring)."""
        begin = self._starts[number % self.capacity] - self._base
        if number + 1 == self.head:
            return self._bytes[begin:]
        return self._bytes[begin : self._starts[(number + 1) % self.capacity] - self._base]

    def span(self, position: int) -> Span | None:
        """Everything from `position` to the head as a `Span`; None when some of it was already
        overwritten."""
        count = self.head - position
        if count > self.capacity:
            return None
        if count <= 0:
            return Span(position, position, b"", frozenset())
        projects: list[str] = []
        for project_id, latest in reversed(self._latest.items()):
            if latest < position:
                break
            projects.append(project_id)
        begin = self._starts[position % self.capacity] - self._base
        with memoryview(self._bytes) as held:  # one copy, and no export left behind to block appends
            data = bytes(held[begin:])
        return Span(position, self.head, data, frozenset(projects))


class Reader:
    """One stream's place in the shared change log. It holds a position, never its own copy of
    the changes, so its memory is bounded however far behind it falls."""

    def __init__(self, notifier: Notifier, holder: str) -> None:
        self._notifier = notifier
        self.holder = holder
        self.position = notifier.log.head  # a new stream hears of changes from now on

    @property
    def closed(self) -> bool:
        """The hub is shutting down: the stream should end its response."""
        return self._notifier.closed

    async def wait(self, timeout: float) -> None:
        """Return once a change lies past this reader's position, at shutdown, or after `timeout`."""
        await self._notifier.changed_after(self.position, timeout)

    def take(self) -> Span | None:
        """Everything published since the last take, oldest first (with its frames and the
        projects it names), and move past it; None when the reader fell behind further than the
        log holds (it skips to the present)."""
        span = self._notifier.log.span(self.position)
        self.position = self._notifier.log.head
        return span

    @property
    def pending(self) -> bool:
        """Whether changes lie past this reader's position."""
        return self._notifier.log.head != self.position

    async def pause(self, seconds: float) -> None:
        """Sleep `seconds`, cut short by shutdown."""
        await self._notifier.until_closed(seconds)

    def close(self) -> None:
        self._notifier.release(self)

    def __enter__(self) -> Reader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _wake(woken: asyncio.Future[None]) -> None:
    if not woken.done():
        woken.set_result(None)


class Notifier:
    """Hands committed changes to waiters and stream readers. No module-level state."""

    def __init__(self, capacity: int = LOG_CAPACITY) -> None:
        self.log = ChangeLog(capacity)
        self._waiters: dict[Hashable, set[Waiter]] = {}
        self._waiting = 0
        self._readers: dict[str, WeakSet[Reader]] = {}  # holder -> its open streams
        self._all_readers: WeakSet[Reader] = WeakSet()
        # Set once per published batch, then replaced; created only when a reader waits on it.
        self._changed: anyio.Event | None = None
        self._closing: anyio.Event | None = None
        self._sleepers: set[asyncio.Future[None]] = set()  # pauses in progress on asyncio
        self.published = 0
        self.closed = False

    def close(self) -> None:
        """Shutdown: every stream ends its response and every wait, present or future, answers at
        once, so in-flight requests finish now instead of holding the server's grace window."""
        self.closed = True
        for waiters in self._waiters.values():
            for waiter in waiters:
                waiter.close()
        for event in (self._changed, self._closing):
            if event is not None:
                event.set()
        for woken in self._sleepers:
            _wake(woken)
        self._changed = self._closing = None

    def publish(self, changes: Iterable[Change]) -> None:
        """Hand committed changes on. Call from the event loop, after the commit. The work is per
        change, never per listener: a change is offered only to the waiters filed under its keys,
        and the readers share one wake-up per batch."""
        batch = list(changes)
        if not batch:
            return
        self.published += len(batch)
        for change in batch:
            self.log.append(change)
            for key in _keys(change):
                for waiter in self._waiters.get(key, ()):
                    waiter.offer(change)
        if self._changed is not None:
            self._changed.set()
            self._changed = None

    @contextmanager
    def waiter(self, match: Callable[[Change], bool], keys: Iterable[Hashable]) -> Iterator[Waiter]:
        """A waiter offered the changes filed under `keys` (`owner_key`, `feed_key`) that `match`
        accepts; already fired for good when the hub is shutting down."""
        w = Waiter(match)
        if self.closed:
            w.close()
        filed = set(keys)
        for key in filed:
            self._waiters.setdefault(key, set()).add(w)
        self._waiting += 1
        try:
            yield w
        finally:
            self._waiting -= 1
            for key in filed:
                waiters = self._waiters.get(key)
                if waiters is not None:
                    waiters.discard(w)
                    if not waiters:
                        del self._waiters[key]

    def open_stream(self, holder: str, limit: int) -> Reader:
        """A reader for one more stream of `holder` (one token); close it when the stream ends.
        Past `limit` open streams (0: no limit) it is `rate_limited`. The slot frees when the
        reader closes or, should its stream never run, when the reader is collected."""
        open_now = self._readers.setdefault(holder, WeakSet())
        if limit and len(open_now) >= limit:
            raise HubError(
                "rate_limited",
                f"at most {limit} open streams per token; close one first",
                retryable=True,
                headers={"Retry-After": str(STREAM_RETRY_AFTER_SECS)},
            )
        reader = Reader(self, holder)
        open_now.add(reader)
        self._all_readers.add(reader)
        return reader

    def release(self, reader: Reader) -> None:
        self._all_readers.discard(reader)
        open_now = self._readers.get(reader.holder)
        if open_now is not None:
            open_now.discard(reader)
            if not open_now:
                del self._readers[reader.holder]

    def streams_of(self, holder: str) -> int:
        return len(self._readers.get(holder, ()))

    async def changed_after(self, position: int, timeout: float) -> None:
        if self.closed or self.log.head > position:
            return
        if self._changed is None:
            self._changed = anyio.Event()
        with anyio.move_on_after(timeout):
            await self._changed.wait()

    async def until_closed(self, timeout: float) -> None:
        """Sleep `timeout` seconds, cut short by shutdown. On asyncio (what `hub-cli serve` runs)
        a bare future and timer: every open stream pauses once a turn, and anyio's cancel scope
        and event cost four times as much (docs/benchmarks.md, "Third session: stream fan-out")."""
        if self.closed:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # trio: anyio's own way
            await self._until_closed_anyio(timeout)
            return
        woken = loop.create_future()
        timer = loop.call_later(timeout, _wake, woken)
        self._sleepers.add(woken)
        try:
            await woken
        finally:
            timer.cancel()
            self._sleepers.discard(woken)

    async def _until_closed_anyio(self, timeout: float) -> None:
        if self._closing is None:
            self._closing = anyio.Event()
        with anyio.move_on_after(timeout):
            await self._closing.wait()

    @property
    def waits_open(self) -> int:
        return self._waiting

    @property
    def streams_open(self) -> int:
        return len(self._all_readers)

    @property
    def listeners(self) -> int:
        return self.waits_open + self.streams_open


@dataclass
class Effects:
    """What a write command did that others must hear of once it has committed."""

    changes: list[Change] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    started_waiting: bool = False

    def event(self, row: dict[str, Any], *, owner: str = "") -> None:
        """Note a newly appended event (rendered shape); `owner`: the agent it is addressed to (a
        human's comment on that agent's artifact), whose waits it wakes."""
        self.kinds.append(row["kind"])
        self.changes.append(Change("feed", row["project_id"], row["id"], row["kind"], row["actor"], owner))

    def inbox(self, project_id: str, event_id: str, *, owner: str, kind: str = "", resolved: bool = False) -> None:
        self.changes.append(Change("inbox", project_id, event_id, kind, "", owner, resolved))

    def artifact_live(self, project_id: str, artifact_id: str, version: int, live_rev: int) -> None:
        """Note that a live artifact version moved (drafted, mutated in place, or sealed)."""
        self.changes.append(Change("artifact-live", project_id, artifact_id, version=version, live_rev=live_rev))


class ListenerCollector(Collector):
    """Gauges of what holds requests open: waits in progress and open streams, read at scrape time."""

    def __init__(self, notifier: Notifier) -> None:
        self._notifier = notifier

    def collect(self) -> Iterator[Metric]:
        yield GaugeMetricFamily(
            "hub_waits_open", "inbox_wait and notify_wait calls in progress", value=self._notifier.waits_open
        )
        yield GaugeMetricFamily(
            "hub_streams_open", "Open GET /api/v1/stream responses", value=self._notifier.streams_open
        )


Observer = Callable[[Effects], None]


class Publisher:
    """Publishes a committed command's effects: event metrics, the notifier's listeners, then the
    parts that observe commits (`Part.on_commit`). The hub store's actor calls `publish` after each
    batch commits (`StoreActor.execute_effects`); no service calls it."""

    def __init__(self, notifier: Notifier, metrics: HubMetrics) -> None:
        self.changes = notifier
        self.metrics = metrics
        self.observers: list[Observer] = []  # filled once by `Hub` from its parts
        metrics.registry.register(ListenerCollector(notifier))

    def publish(self, effects: Effects) -> None:
        for kind in effects.kinds:
            self.metrics.events_appended.labels(kind=kind).inc()
        self.changes.publish(effects.changes)
        for observer in self.observers:
            observer(effects)
