"""Reads that share a worker-thread hop.

Handing one read to a worker thread and its answer back costs the event loop about as much as the
read itself (a queue put, a condition notify, a wake-up of the loop), and a read paid that per
call where a write, batched by its store's actor, pays it per batch. Here, reads that arrive while
`hops` hand-overs are already under way wait, and the next hand-over runs all of them one after
the other on one worker thread: under load, one hop per batch; alone, a read still hops at once.

One read leads each hop: it takes every read waiting (its own among them), runs them, wakes their
callers, and hands the lead to the first read that arrived meanwhile. A read whose caller is
cancelled while it waits is withdrawn; one cancelled while leading still has its batch run (the
hop is not abandoned) and still hands the lead on, so no read is left without a hop.

A hop runs on a thread of its own (one per hop under way, kept for the next), handed over like a
store's writer thread (`WriterThread.call`: a queue put and one call-soon back), which costs the
event loop about a third less than `anyio.to_thread.run_sync` (docs/benchmarks.md, "Fifth
session: the store actor's hand-over"); the caller's limiter still bounds the reads at once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

import anyio

from hubcore.store.writer import WriterThread

T = TypeVar("T")


class _Read(Generic[T]):
    __slots__ = ("error", "job", "lead", "ran", "value", "woken")

    def __init__(self, job: Callable[[], T]) -> None:
        self.job = job
        self.ran = False
        self.value: Any = None
        self.error: BaseException | None = None
        # Made only for a read that waits (a hop's leader never does): an event costs the loop
        # about as much as the rest of a lone read's bookkeeping.
        self.woken: anyio.Event | None = None
        self.lead = False  # woken to lead the next hop, not with an answer

    def run(self) -> None:
        try:
            self.value = self.job()
        except BaseException as exc:  # the caller's to raise, on its own task
            self.error = exc
        self.ran = True

    def answer(self) -> T:
        if self.error is not None:
            raise self.error
        result: T = self.value
        return result


def _wake(read: _Read[Any]) -> None:
    """Wake a read that waits; one that never waited (its hop's leader) has nothing to wake."""
    if read.woken is not None:
        read.woken.set()


class ReadHops:
    def __init__(self, hops: int, max_batch: int = 64) -> None:
        self._free = hops
        self._max_batch = max_batch
        self._waiting: list[_Read[Any]] = []
        self._idle: list[WriterThread] = []  # hop threads between hops (at most `hops` exist)
        self._closed = False

    async def run(self, job: Callable[[], T], limiter: anyio.CapacityLimiter) -> T:
        """`job()` on a worker thread (under `limiter`), in a hop shared with the reads waiting."""
        read: _Read[T] = _Read(job)
        self._waiting.append(read)
        if self._free:
            self._free -= 1
        else:
            read.woken = anyio.Event()
            try:
                await read.woken.wait()
            except BaseException:
                self._withdraw(read)
                raise
            if read.ran and not read.lead:  # another hop answered it
                return read.answer()
        try:
            while not read.ran:
                await self._hop(limiter)
        except BaseException:
            if read in self._waiting:  # cancelled before its batch reached the thread
                self._waiting.remove(read)
            raise
        finally:
            self._hand_on()
        return read.answer()

    def _withdraw(self, read: _Read[Any]) -> None:
        if read in self._waiting:
            self._waiting.remove(read)
        if read.lead:
            self._hand_on()  # it was given the lead and will not take it

    def _hand_on(self) -> None:
        if self._waiting:
            nxt = self._waiting[0]
            nxt.lead = True
            _wake(nxt)
        else:
            self._free += 1

    async def _hop(self, limiter: anyio.CapacityLimiter) -> None:
        batch = self._waiting[: self._max_batch]
        del self._waiting[: len(batch)]

        def work() -> None:
            for read in batch:
                read.run()

        thread = self._idle.pop() if self._idle else WriterThread("read hop")
        try:
            async with limiter:
                await thread.call(work)
        finally:
            if self._closed:
                thread.stop()
            else:
                self._idle.append(thread)
            unran = [read for read in batch if not read.ran]  # cancelled before the thread started
            self._waiting[:0] = unran
            for read in batch:
                if read.ran:
                    _wake(read)

    def close(self) -> None:
        """Let the hop threads end (a hop under way ends its thread when it is over)."""
        self._closed = True
        idle, self._idle = self._idle, []
        for thread in idle:
            thread.stop()
