"""One writer per store file.

A `StoreActor` owns the single write connection of one SQLite file. Callers send commands (plain
functions of a `sqlite3.Connection`) and await their replies. Commands run in arrival order, one
batch at a time on the actor's writer thread (its own, or one it shares with other files' actors);
every command already queued (up to `max_batch`) runs inside its own SAVEPOINT within one
transaction, the transaction commits once, and only then does each caller get its reply. A
failing command rolls back its own savepoint and gets its own exception; the others commit. Reads do
not queue: they run on read-only connections in worker threads (WAL mode).

A command sent with `execute_effects` returns `(result, effects)`: once its batch committed, the
actor hands the effects to its `publish` hook (the hub's `Publisher`), in batch order and before any
caller of the batch is answered; a failed command publishes nothing.

The mailbox is a queue of batches: a command joins the newest batch until it holds `max_batch`
commands, and the batch's callers are answered together after its commit. Only `mailbox_size`
commands may be queued; further callers wait for room in arrival order (back-pressure).

This module holds the mailbox and the lifecycle; `writer` the batch protocol and the actor's
thread; `readers` the read-only connections; `connection` the pragmas every connection gets.

Modelled on datasette's `Database` (one writer per file, per-command errors, a tested shutdown),
with group commit, and an anyio task that owns the lifecycle but is no hop on an idle actor's
path (see "the hand-over" below).
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn, TypeVar, cast

import anyio
from anyio.abc import TaskStatus

from hubcore.errors import StoreBroken, StoreClosed, refusal_of
from hubcore.store.connection import connect
from hubcore.store.hops import ReadHops
from hubcore.store.readers import ReaderPool
from hubcore.store.writer import CallSoon, Command, Writer, WriterThread, loop_call_soon_here, running_asyncio_loop

__all__ = ["ActorStats", "BatchHook", "Publish", "Setup", "StoreActor"]

log = logging.getLogger("hubcore.store")

T = TypeVar("T")
U = TypeVar("U")
READ_HOPS = 2  # hand-overs under way at once (the machine the hub targets has a core or two)
Setup = Callable[[sqlite3.Connection], None]
BatchHook = Callable[[int, float], None]
"""Called on the event loop after each batch: (commands in the batch, seconds spent writing it)."""
Publish = Callable[[Any], None]
"""Where a committed command's effects go (the hub's `Publisher.publish`). The store does not know
what effects are: it hands them on, in batch order, after the commit and before any reply."""


class _Batch:
    """Commands that share one transaction, answered together once it is over.

    On asyncio each caller awaits its own future (a cancelled caller cancels only its own, and
    its command still runs); on trio they share the batch's event. A bare future per caller skips
    anyio's and asyncio's Event machinery: about 1.8 µs less per command (docs/benchmarks.md).
    """

    __slots__ = ("commands", "done")

    def __init__(self, shared_event: bool) -> None:
        self.commands: list[Command[Any]] = []
        self.done = anyio.Event() if shared_event else None

    def answer(self) -> None:
        """Wake every caller (each reads its command's result or error)."""
        for cmd in self.commands:
            reply = cmd.reply
            if reply is not None and not reply.done():
                reply.set_result(None)
        if self.done is not None:
            self.done.set()

    def fail(self, error: Callable[[], BaseException]) -> None:
        """Answer every command with its own instance of `error()` (never one shared exception)."""
        for cmd in self.commands:
            cmd.error, cmd.result = error(), None
        self.answer()


class _RoomWaiter:
    """A command waiting for room in a full mailbox; `batch` is where the actor queued it."""

    __slots__ = ("batch", "command", "event")

    def __init__(self, command: Command[Any]) -> None:
        self.command = command
        self.event = anyio.Event()
        self.batch: _Batch | None = None


@dataclass(frozen=True)
class ActorStats:
    """What an operator (or a benchmark) wants to know about a mailbox: a snapshot."""

    depth: int = 0
    """Commands queued and not yet taken into a batch."""
    peak_depth: int = 0
    waiting_for_room: int = 0
    """Callers blocked by back-pressure right now."""
    commands: int = 0
    failed_commands: int = 0
    batches: int = 0
    max_batch: int = 0
    last_batch: int = 0

    @property
    def mean_batch(self) -> float:
        return self.commands / self.batches if self.batches else 0.0


class StoreActor:
    """The one writer of one SQLite file. Start it with `run` in a task group (`tg.start`).

    `execute` sends a command and returns its result after the commit; `read` runs a function on
    a read-only connection without queueing behind writes; `aclose` drains and closes.

    With `gather`, the default (a file many callers write, hub.db), one batch is on the writer
    thread at a time: what callers send meanwhile gathers into the next batch, which goes to the
    thread once the one before has landed and the callers it answered had their turn (so it
    commits what they send next too). Without (`gather=False`: a file written by one session at a
    time, whose batches rarely grow), each batch goes to the thread as soon as it is queued, even
    while the one before it is still there: the thread runs its jobs in order, so the file's order
    holds, and a second writer of the file does not wait for the loop to hear of the first's
    commit before its own goes to the shared thread (docs/benchmarks.md, "Twelfth session").
    """

    def __init__(
        self,
        path: Path,
        *,
        setup: Setup | None = None,
        mailbox_size: int = 1024,
        max_batch: int = 256,
        synchronous: str = "normal",
        readers: int = 4,
        name: str | None = None,
        on_batch: BatchHook | None = None,
        publish: Publish | None = None,
        gather: bool = True,
    ) -> None:
        if mailbox_size < 1 or max_batch < 1:
            raise ValueError("mailbox_size and max_batch must be at least 1")
        self.path = path
        self.name = name or path.name
        self._setup = setup
        self._capacity = mailbox_size
        self._max_batch = max_batch
        self._synchronous = synchronous
        self._on_batch = on_batch
        self._publish = publish
        self._gather = gather
        self._batches: deque[_Batch] = deque()
        self._loop: asyncio.AbstractEventLoop | None = None  # set when running on asyncio
        self._depth = 0  # commands queued, not yet taken into a batch
        self._room_waiters: deque[_RoomWaiter] = deque()
        self._call_soon: CallSoon | None = None  # the loop's own call-soon, set when running
        self._in_flight = 0  # batches handed to the writer thread and not yet landed
        self._on_thread = 0  # ... and the commands they hold
        self._kicked = False  # a dispatch is scheduled as a callback
        self._wakeup: anyio.Event | None = None  # set while the actor task waits for work
        self._finished = False  # drained and closing, or broken: the actor task may end
        self._landed: anyio.Event | None = None  # a shutdown waits for the batch in flight
        self._writer: Writer | None = None
        self._thread: WriterThread | None = None
        self._shared_thread: WriterThread | None = None  # a thread of others' too (`share_thread`)
        self._readers = ReaderPool(path, readers)
        self._hops = ReadHops(READ_HOPS)  # `read_then`'s hand-overs to worker threads, shared under load
        self._reads = 0
        self._reads_done: anyio.Event | None = None
        self._started = False
        self._accepting = True  # new calls are taken
        self._broken: BaseException | None = None
        self._stopped = anyio.Event()
        self._peak = self._commands = self._failed = self._batch_count = 0
        self._largest_batch = self._last_batch = 0

    # -- lifecycle -------------------------------------------------------------------------------

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Open the file, report started, then serve commands until closed or broken.

        Raises if the file cannot be opened (and every caller gets `StoreBroken`). A failure while
        serving (a dead connection, a bug) is logged, not raised: the actor becomes broken, every
        waiting and later caller gets `StoreBroken`, and sibling tasks are left running.
        """
        if self._started:
            raise RuntimeError(f"store actor {self.name} was already run")
        self._started = True
        if not self._accepting:
            raise StoreClosed(f"store {self.name} was closed before it started")
        self._loop = running_asyncio_loop()
        self._call_soon = loop_call_soon_here()
        self._thread = thread = self._shared_thread or WriterThread(f"store {self.name}")
        try:
            self._writer = await thread.call(self._open)
        except BaseException as exc:
            self._stop_thread()
            self._stop(exc if isinstance(exc, Exception) else None)
            self._readers.close()
            self._stopped.set()
            raise
        task_status.started()
        try:
            await self._serve()
        except Exception as exc:  # a bug or a dead connection: nobody may wait forever
            log.error("store actor %s broke", self.name, exc_info=exc)
            self._stop(exc)
        except BaseException:  # cancelled: what was not run is refused, the batch in flight ends
            self._stop(None)
            raise
        finally:
            await self._shutdown()

    def share_thread(self, thread: WriterThread) -> None:
        """Write this file on `thread`, which other actors' files share, instead of a thread of
        its own; before `run`. The file's connection is still opened, used and closed on that one
        thread only; the thread is its owner's to stop, after this actor stopped."""
        if self._started:
            raise RuntimeError(f"store actor {self.name} is already running")
        self._shared_thread = thread

    def _stop_thread(self) -> None:
        if self._thread is not None and self._shared_thread is None:
            self._thread.stop()

    def _open(self) -> Writer:
        """The write connection; a file this open created and could not set up is removed again
        (a full volume leaves no empty store behind), and a full volume is `unavailable`."""
        created = not self.path.exists()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = connect(self.path, synchronous=self._synchronous)
        except BaseException as exc:
            if created:
                _remove_store_file(self.path)
            _raise_refusal(exc)
        try:
            if self._setup is not None:
                self._setup(conn)
        except BaseException as exc:
            conn.close()
            if created:
                _remove_store_file(self.path)
            _raise_refusal(exc)
        return Writer(conn)

    # -- the hand-over -----------------------------------------------------------------------------
    #
    # The actor task is no hop on an idle actor's path: its first command schedules a dispatch (a
    # plain callback, which runs after the callers already runnable have queued theirs), the
    # dispatch hands the batch to the writer thread, and the thread's one call-soon per batch runs
    # `_completed` on the loop, which publishes, answers each caller, and is done. Commands that
    # queued up meanwhile go to the thread from `_completed` too, as a batch (a busy file's next
    # batch costs no wake-up of the task), in a callback of its own or at once (`gather`). Only
    # when the actor is closing, or its task is not waiting, does `_completed` wake the actor task,
    # which dispatches or refuses what was queued.
    # Gathering, one batch is on the thread at a time, so arrival order and group commit are as
    # they were; not gathering, every batch goes at once and the thread keeps their order.

    async def _serve(self) -> None:
        self._dispatch()  # commands sent before the file was open
        while not self._finished:
            self._wakeup = wakeup = anyio.Event()
            await wakeup.wait()
            self._dispatch()

    def _wake_actor(self) -> None:
        if self._wakeup is not None:
            self._wakeup.set()
            self._wakeup = None

    def _kick(self) -> None:
        """A command was queued: dispatch it soon if the thread is free (or the file does not
        gather) and the task not woken."""
        if (not self._in_flight or not self._gather) and self._wakeup is not None and not self._kicked:
            assert self._call_soon is not None  # the task waits: it is running
            self._kicked = True
            self._call_soon(self._dispatch_soon)

    def _dispatch_soon(self) -> None:
        self._kicked = False
        if self._wakeup is None:  # the task was woken meanwhile: it dispatches (or refuses)
            return
        try:
            self._dispatch()
        except Exception as exc:  # a callback must not raise: the actor breaks instead
            self._break(exc)

    def _dispatch(self) -> None:
        """Hand the oldest batch to the writer thread (gathering, only if none is there); or end
        once drained."""
        writer, thread = self._writer, self._thread
        if writer is None or thread is None:
            return
        if not self._batches:
            if not self._accepting and not self._in_flight:
                self._finished = True
            return
        while self._batches and not (self._in_flight and self._gather):
            self._hand_over(self._batches.popleft(), writer, thread)

    def _hand_over(self, batch: _Batch, writer: Writer, thread: WriterThread) -> None:
        self._depth -= len(batch.commands)
        self._grant_room()
        self._in_flight += 1
        self._on_thread += len(batch.commands)
        started = time.perf_counter()
        thread.submit(
            lambda: writer.run_batch(batch.commands),
            lambda _result, error: self._completed(batch, started, error),
        )

    def _completed(self, batch: _Batch, started: float, error: BaseException | None) -> None:
        """On the loop, once the thread ran `batch`: publish, answer, record; wake the task if
        there is more to do."""
        self._in_flight -= 1
        self._on_thread -= len(batch.commands)
        if not self._gather:
            self._grant_room()  # landed commands held room
        if error is not None and error is self._broken:  # handed over before the writer died: never run
            batch.fail(self._refusal)
            self._land()
            return
        try:
            try:
                if error is not None:  # the connection died or the protocol broke: outcome unknown
                    self._broken = error
                    batch.fail(self._refusal)
                    raise error
                self._publish_effects(batch)
            finally:
                batch.answer()
            self._record(batch, time.perf_counter() - started)
        except BaseException as exc:  # a bug or a dead connection: nobody may wait forever
            self._break(exc)
        finally:
            self._land()
        if self._batches and self._accepting and self._wakeup is not None:
            if self._gather:
                self._kick()  # a plain callback: the callers just answered queue theirs first
            else:
                self._dispatch_soon()
        elif self._batches or not self._accepting:
            self._wake_actor()

    def _land(self) -> None:
        if self._landed is not None and not self._in_flight:
            self._landed.set()

    def _break(self, exc: BaseException) -> None:
        log.error("store actor %s broke", self.name, exc_info=exc)
        self._stop(exc)
        self._finished = True

    def _publish_effects(self, batch: _Batch) -> None:
        """Hand on the effects of the batch's committed commands, in order. A command that failed
        (or whose transaction did not commit) carries an error and publishes nothing. Runs before
        the replies, so a caller that returns finds its effects already published."""
        for cmd in batch.commands:
            if not cmd.effects or cmd.error is not None:
                continue
            cmd.result, effects = cmd.result
            if self._publish is None:
                continue
            try:
                self._publish(effects)
            except Exception:  # the write is durable: its caller still gets its result
                log.exception("publishing the effects of a command on store %s failed", self.name)

    def _record(self, batch: _Batch, seconds: float) -> None:
        size = len(batch.commands)
        self._batch_count += 1
        self._commands += size
        self._failed += sum(1 for cmd in batch.commands if cmd.error is not None)
        self._last_batch = size
        self._largest_batch = max(self._largest_batch, size)
        if self._on_batch is not None:
            try:
                self._on_batch(size, seconds)
            except Exception:
                log.exception("on_batch hook of store %s failed", self.name)

    def _stop(self, failure: BaseException | None) -> None:
        """The loop is over: refuse everything queued or waiting for room (synchronously)."""
        self._accepting = False
        if failure is not None:
            self._broken = failure
        while self._batches:
            self._batches.popleft().fail(self._refusal)
        self._depth = 0
        waiters, self._room_waiters = self._room_waiters, deque()
        for waiter in waiters:
            waiter.event.set()

    async def _shutdown(self) -> None:
        with anyio.CancelScope(shield=True):
            try:
                if self._in_flight:  # cancelled with batches on the thread: they end first
                    self._landed = anyio.Event()
                    await self._landed.wait()
                writer, self._writer = self._writer, None
                if self._reads:  # let reads in flight end, so that the checkpoint can finish
                    self._reads_done = anyio.Event()
                    await self._reads_done.wait()
                if self._thread is not None and writer is not None:
                    await self._thread.call(writer.close)
            finally:
                self._stop_thread()
                self._hops.close()
                self._readers.close()
                self._stopped.set()

    async def aclose(self) -> None:
        """Stop taking calls, answer every command sent before, checkpoint and close the file.

        Commands already queued, or waiting for room, are run and answered; calls made after
        `aclose` began raise `StoreClosed`. Returns once the file is closed. Idempotent.
        """
        self._accepting = False
        if not self._started:
            self._stop(None)
            self._readers.close()
            self._stopped.set()
            return
        self._wake_actor()
        await self._stopped.wait()

    @property
    def closed(self) -> bool:
        """Whether calls are refused (closing, closed or broken)."""
        return not self._accepting

    @property
    def broken(self) -> bool:
        return self._broken is not None

    @property
    def stopped(self) -> bool:
        """Whether the actor is finished: its file is closed (or was never opened)."""
        return self._stopped.is_set()

    # -- calls -----------------------------------------------------------------------------------

    def _closed_error(self) -> StoreClosed:
        return StoreClosed(f"store {self.name} is closed")

    def _refusal(self) -> StoreClosed | StoreBroken:
        if self._broken is None:
            return self._closed_error()
        err = StoreBroken(f"store {self.name} is broken")
        err.__cause__ = self._broken
        return err

    async def execute(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run `fn` on the write connection in its own savepoint; return after the commit.

        Waits while the mailbox is full (back-pressure). Raises what `fn` raised (its changes rolled
        back), `HubError("unavailable")` if the batch could not commit, `StoreClosed` or
        `StoreBroken`. Cancelling the caller after the command was queued does not withdraw it.
        """
        return await self._call(Command(fn, self._reply()))

    async def execute_effects(self, fn: Callable[[sqlite3.Connection], tuple[T, Any]]) -> T:
        """Like `execute`, for a command that returns `(result, effects)`: the effects are
        published after the batch commits (in batch order, before any caller is answered) and
        only then; a command that fails publishes nothing. Returns the result alone."""
        cmd: Command[tuple[T, Any]] = Command(fn, self._reply(), effects=True)
        # The actor keeps only the result once it has published the effects (`_publish_effects`).
        return cast("T", await self._call(cmd))

    def _reply(self) -> asyncio.Future[None] | None:
        return self._loop.create_future() if self._loop is not None else None

    async def _call(self, cmd: Command[T]) -> T:
        if not self._accepting:
            raise self._refusal()
        if self._room() and not self._room_waiters:
            batch = self._enqueue(cmd)
        else:
            batch = await self._wait_for_room(cmd)
        if cmd.reply is not None:
            await cmd.reply
        else:
            assert batch.done is not None
            await batch.done.wait()
        if cmd.error is not None:
            raise cmd.error
        result: T = cmd.result  # set on the writer thread by running the command's function
        return result

    def _enqueue(self, cmd: Command[Any]) -> _Batch:
        batches = self._batches
        if not batches or len(batches[-1].commands) >= self._max_batch:
            batches.append(_Batch(shared_event=self._loop is None))
        batch = batches[-1]
        batch.commands.append(cmd)
        self._depth += 1
        if self._depth > self._peak:
            self._peak = self._depth
        self._kick()
        return batch

    async def _wait_for_room(self, cmd: Command[Any]) -> _Batch:
        """Wait in line for room; the actor queues the command for us as room frees up."""
        waiter = _RoomWaiter(cmd)
        self._room_waiters.append(waiter)
        try:
            await waiter.event.wait()
        except BaseException:
            if waiter.batch is None and waiter in self._room_waiters:
                self._room_waiters.remove(waiter)  # withdrawn before it was queued
            raise
        if waiter.batch is None:
            raise self._refusal()
        return waiter.batch

    def _room(self) -> bool:
        """Whether the mailbox takes a command: fewer than `mailbox_size` are queued, counting,
        when not gathering, those handed to the thread and not yet landed (which gathering holds
        to one batch), so back-pressure bounds a busy file's commands either way."""
        held = self._depth if self._gather else self._depth + self._on_thread
        return held < self._capacity

    def _grant_room(self) -> None:
        while self._room_waiters and self._room():
            waiter = self._room_waiters.popleft()
            waiter.batch = self._enqueue(waiter.command)
            waiter.event.set()

    async def read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run `fn` on a read-only connection in a worker thread, in one read transaction."""
        if not self._accepting:
            raise self._refusal()
        self._reads += 1
        try:
            return await anyio.to_thread.run_sync(self._readers.run, fn, limiter=self._readers.limiter)
        finally:
            self._reads -= 1
            if not self._reads and self._reads_done is not None:
                self._reads_done.set()

    async def read_then(
        self,
        fn: Callable[[sqlite3.Connection], T],
        then: Callable[[T], U],
        *,
        limiter: anyio.CapacityLimiter | None = None,
    ) -> U:
        """`read(fn)`, then `then(result)` on the same worker thread: a read of this store and
        one of another file (a session's row, then its brain) for one thread hand-over, which
        costs the event loop as much as the reads themselves. `then` runs after this store's
        read transaction ended."""
        if not self._accepting:
            raise self._refusal()
        self._reads += 1
        try:
            return await self._hops.run(lambda: then(self._readers.run(fn)), limiter or self._readers.limiter)
        finally:
            self._reads -= 1
            if not self._reads and self._reads_done is not None:
                self._reads_done.set()

    def queue_depth(self) -> int:
        return self._depth

    def unanswered(self) -> int:
        """Commands sent and not yet answered: queued, or handed to the writer thread."""
        return self._depth + self._on_thread

    def statistics(self) -> ActorStats:
        return ActorStats(
            depth=self._depth,
            peak_depth=self._peak,
            waiting_for_room=len(self._room_waiters),
            commands=self._commands,
            failed_commands=self._failed,
            batches=self._batch_count,
            max_batch=self._largest_batch,
            last_batch=self._last_batch,
        )


def _remove_store_file(path: Path) -> None:
    """Remove a store file and its WAL companions, whichever exist."""
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)


def _raise_refusal(exc: BaseException) -> NoReturn:
    """Raise `exc` as a caller sees it (a full volume as `unavailable`, from `exc`)."""
    err = refusal_of(exc)
    if err is exc:
        raise exc
    raise err from exc
