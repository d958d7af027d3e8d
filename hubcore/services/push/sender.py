"""Sending pushes: an effect after commit, from a background task, never on a write's path.

`on_commit` (on the event loop, after a batch committed) only appends a job to a bounded queue;
a full queue drops its oldest job and counts it (`hub_push_sends_total{result="dropped"}`). The
`run` task takes jobs in order: it reads the item once, picks the devices whose filters want it,
and sends to each concurrently (encryption, VAPID signing and the POST run in worker threads, a
few at a time). A push service answering 404 or 410 has forgotten the subscription: the device is
removed. 429 and 5xx (and no answer) are retried with backoff, a bounded number of times. Each send
is counted by result (`delivered`, `failed`, `gone`, `retried`, `dropped`).

The encryption (http_ece), VAPID (py_vapid) and the POST run in a worker process
(`hubcore.services.push.wire`), started on the first send, so a hub without devices pays nothing.
"""

from __future__ import annotations

import logging
import sqlite3
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import anyio
import anyio.to_process
import orjson
from prometheus_client import Counter

from hubcore.services.changes import Effects
from hubcore.services.core import Core
from hubcore.services.push import message
from hubcore.services.push.devices import device_rows, filters_of
from hubcore.services.push.filters import PUSH_KINDS, wants
from hubcore.services.push.keys import PushKeys

log = logging.getLogger("hubcore.push")

QUEUE_MAX = 1000
JOBS_AT_ONCE = 16
RETRIES = 3
BACKOFF_SECS = (1.0, 4.0, 15.0)
TIMEOUT_SECS = 10.0
ITEM_TTL_SECS = 86400
REMEMBERED_ITEMS = 10_000  # items whose devices are remembered for the close update
RESULTS = ("delivered", "failed", "gone", "retried", "dropped")


@dataclass(frozen=True)
class Target:
    device_id: str
    name: str
    endpoint: str
    p256dh: str
    auth: str


@dataclass(frozen=True)
class Push:
    target: Target
    data: bytes
    urgency: Literal["very-low", "low", "normal", "high"]
    topic: str
    ttl: int


class Transport(Protocol):
    async def send(self, pushes: list[Push]) -> list[int]:
        """Deliver each push; each one's HTTP status from its push service (0: no answer)."""
        ...


class ProcessTransport:
    """Encryption, VAPID and the POSTs in a worker process (`hubcore.services.push.wire` says why),
    one at a time: a push burst takes at most one core, never the hub process's interpreter."""

    def __init__(self, keys: PushKeys, contact: str) -> None:
        self._pem = keys.private_pem.encode("ascii")
        self._contact = contact
        self._limiter = anyio.CapacityLimiter(1)

    async def send(self, pushes: list[Push]) -> list[int]:
        # Imported on the first send; `wire` loads http_ece and py_vapid only where it sends (the worker).
        from hubcore.services.push import wire

        wires = [
            wire.Wire(p.target.endpoint, p.target.p256dh, p.target.auth, p.data, p.urgency, p.topic, p.ttl)
            for p in pushes
        ]
        # Not cancellable: a cancelled call kills the worker without reaping it (a ResourceWarning);
        # at shutdown the batch in flight finishes (each push has a 10-second timeout).
        return await anyio.to_process.run_sync(wire.send_all, wires, self._pem, self._contact, limiter=self._limiter)


@dataclass(frozen=True)
class Job:
    kind: Literal["item", "close"]
    event_id: str


class PushSender:
    def __init__(
        self,
        core: Core,
        keys: PushKeys,
        counter: Counter,
        *,
        transport: Transport | None = None,
        sleep: Callable[[float], Awaitable[None]] = anyio.sleep,
    ) -> None:
        self.core = core
        self.keys = keys
        self.counter = counter
        self._transport = transport
        self.sleep = sleep
        self._queue: deque[Job] = deque()
        self._wake = anyio.Event()
        self._sent_to: OrderedDict[str, set[str]] = OrderedDict()  # item -> devices shown it
        self.idle = anyio.Event()  # set whenever the queue is empty and no job runs (tests, bench)
        self.idle.set()
        self._running = 0
        for result in RESULTS:
            counter.labels(result=result)

    @property
    def transport(self) -> Transport:
        if self._transport is None:
            self._transport = ProcessTransport(self.keys, self.core.settings.push_contact)
        return self._transport

    # -- after commit (event loop; never blocks, never raises) ---------------------------------

    def on_commit(self, effects: Effects) -> None:
        for change in effects.changes:
            if change.topic == "feed" and change.kind in PUSH_KINDS:
                self._enqueue(Job("item", change.event_id))
            elif change.topic == "inbox" and change.resolved and change.event_id in self._sent_to:
                self._enqueue(Job("close", change.event_id))

    def _enqueue(self, job: Job) -> None:
        if len(self._queue) >= QUEUE_MAX:
            self._queue.popleft()
            self.counter.labels(result="dropped").inc()
        self._queue.append(job)
        if self.idle.is_set():
            self.idle = anyio.Event()
        self._wake.set()

    # -- the background task ---------------------------------------------------------------------

    async def run(self) -> None:
        slots = anyio.Semaphore(JOBS_AT_ONCE)
        async with anyio.create_task_group() as tg:
            while True:
                await self._wake.wait()
                self._wake = anyio.Event()
                while self._queue:
                    await slots.acquire()
                    job = self._queue.popleft()
                    self._running += 1
                    tg.start_soon(self._job, job, slots)
                self._check_idle()

    def _check_idle(self) -> None:
        if not self._queue and not self._running:
            self.idle.set()

    async def _job(self, job: Job, slots: anyio.Semaphore) -> None:
        try:
            await (self._item(job) if job.kind == "item" else self._close(job))
        except Exception:  # a bug or a broken store must not stop the sender
            log.exception("push job for %s failed", job.event_id)
        finally:
            slots.release()
            self._running -= 1
            self._check_idle()

    async def _item(self, job: Job) -> None:
        now = self.core.now()
        facts, rows = await self.core.store.read(lambda conn: _read_item(conn, job.event_id))
        if facts is None:
            return
        pushes = []
        for row in rows:
            filters = filters_of(row)
            if not wants(
                filters,
                kind=facts.kind,
                project_id=facts.project_id,
                payload=facts.payload,
                expires_at=facts.expires_at,
                now=now,
            ):
                continue
            data = message.item_message(
                facts, device_id=row["id"], content=filters.content, secret=self.keys.act_secret, now=now
            )
            urgency: Literal["high", "normal"] = "high" if facts.kind in ("question", "approval") else "normal"
            left = ITEM_TTL_SECS if facts.expires_at is None else int(facts.expires_at - now)
            ttl = max(60, min(ITEM_TTL_SECS, left))
            pushes.append(Push(target_of(row), data, urgency, facts.event_id, ttl))
        if pushes:
            self._remember(facts.event_id, {p.target.device_id for p in pushes})
            await self._send_all(pushes)

    async def _close(self, job: Job) -> None:
        devices = self._sent_to.pop(job.event_id, set())
        waiting, rows = await self.core.store.read(lambda conn: (_waiting(conn), device_rows(conn)))
        data = message.close_message(job.event_id, waiting)
        await self._send_all(
            [Push(target_of(r), data, "normal", job.event_id, ITEM_TTL_SECS) for r in rows if r["id"] in devices]
        )

    def _remember(self, event_id: str, devices: set[str]) -> None:
        self._sent_to[event_id] = devices
        while len(self._sent_to) > REMEMBERED_ITEMS:
            self._sent_to.popitem(last=False)

    async def _send_all(self, pushes: list[Push]) -> None:
        results = await self.send_many(pushes)
        await self.record({push.target.device_id: result for push, result in zip(pushes, results, strict=True)})

    async def send(self, push: Push, *, retries: int = RETRIES) -> str:
        """One push with its retries -> `delivered`, `gone` or `failed` (each counted)."""
        return (await self.send_many([push], retries=retries))[0]

    async def send_many(self, pushes: list[Push], *, retries: int = RETRIES) -> list[str]:
        """Pushes with their retries: 429, 5xx and no answer are tried again after a backoff, at
        most `retries` times -> each one's `delivered`, `gone` or `failed` (each counted)."""
        results: dict[int, str] = {}
        pending = list(range(len(pushes)))
        for attempt in range(retries + 1):
            statuses = await self.transport.send([pushes[i] for i in pending])
            again = []
            for i, status in zip(pending, statuses, strict=True):
                if 200 <= status < 300:
                    results[i] = self._count("delivered")
                elif status in (404, 410):
                    results[i] = self._count("gone")
                elif (status == 0 or status == 429 or status >= 500) and attempt < retries:
                    self._count("retried")
                    again.append(i)
                else:
                    log.warning("push to device %s failed (status %s)", pushes[i].target.device_id, status or "none")
                    results[i] = self._count("failed")
            if not again:
                break
            pending = again
            await self.sleep(BACKOFF_SECS[attempt])
        return [results[i] for i in range(len(pushes))]

    def _count(self, result: str) -> str:
        self.counter.labels(result=result).inc()
        return result

    async def record(self, results: dict[str, str]) -> None:
        """Each device's last result; a device its push service forgot is removed."""
        if not results:
            return
        now = self.core.now()

        def write(conn: sqlite3.Connection) -> None:
            for device_id, result in results.items():
                if result == "gone":
                    conn.execute("DELETE FROM push_devices WHERE id = ?", (device_id,))
                elif result == "delivered":
                    conn.execute(
                        "UPDATE push_devices SET last_delivered_at = ?, last_result = ? WHERE id = ?",
                        (now, result, device_id),
                    )
                else:
                    conn.execute("UPDATE push_devices SET last_result = ? WHERE id = ?", (result, device_id))

        await self.core.store.execute(write)


def target_of(row: sqlite3.Row) -> Target:
    return Target(row["id"], row["name"], row["endpoint"], row["p256dh"], row["auth"])


def _waiting(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT COUNT(*) FROM inbox WHERE status = 'waiting'").fetchone()[0])


def _read_item(conn: sqlite3.Connection, event_id: str) -> tuple[message.ItemFacts | None, list[sqlite3.Row]]:
    row = conn.execute(
        """SELECT e.id, e.project_id, e.kind, e.actor, e.summary, e.payload, i.status, i.expires_at,
                  p.display_name FROM events e LEFT JOIN inbox i ON i.event_id = e.id
                  LEFT JOIN projects p ON p.id = e.project_id WHERE e.id = ?""",
        (event_id,),
    ).fetchone()
    if row is None or (row["status"] is not None and row["status"] == "resolved"):
        return None, []  # gone, or resolved before its push left
    payload: dict[str, Any] = orjson.loads(row["payload"])
    facts = message.ItemFacts(
        row["id"],
        row["project_id"],
        row["display_name"],
        row["kind"],
        row["actor"],
        row["summary"],
        payload,
        row["expires_at"],
        _waiting(conn),
    )
    return facts, device_rows(conn)
