"""One writer per store file.

A `StoreActor` owns the single write connection of one SQLite file. Callers send commands (plain
functions of a `sqlite3.Connection`) and await their replies. The actor task takes commands in
arrival order; every command already queued (up to `max_batch`) runs inside its own SAVEPOINT within
one transaction, the transaction commits once, and only then does each caller get its reply. A
failing command rolls back its own savepoint and gets its own exception; the others commit. Reads do
not queue: they run on read-only connections in worker threads (WAL mode).

The mailbox is a queue of batches: a command joins the newest batch until it holds `max_batch`
commands, and every caller of a batch waits on the batch's one event. Only `mailbox_size` commands
may be queued; further callers wait for room in arrival order (back-pressure).

Modelled on datasette's `Database` (one writer per file, per-command errors, a tested shutdown),
with an anyio task and group commit instead of a bare thread.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

import anyio
from anyio.abc import TaskStatus
from anyio.lowlevel import checkpoint_if_cancelled

from hubcore.errors import HubError, StoreBroken, StoreClosed

log = logging.getLogger("hubcore.store")

T = TypeVar("T")
Setup = Callable[[sqlite3.Connection], None]
BatchHook = Callable[[int, float], None]
"""Called on the event loop after each batch: (commands in the batch, seconds spent writing it)."""


class _Command(Generic[T]):
    __slots__ = ("error", "fn", "reply", "result")

    def __init__(self, fn: Callable[[sqlite3.Connection], T], reply: asyncio.Future[None] | None) -> None:
        self.fn = fn
        self.reply = reply
        self.result: Any = None
        self.error: BaseException | None = None


class _Batch:
    """Commands that share one transaction, answered together once it is over.

    On asyncio each caller awaits its own future (a cancelled caller cancels only its own); on
    trio they share the batch's event. A future per caller costs a third of what waiting on a
    shared `anyio.Event` does, and the caller's wake-up is most of an actor's cost per command.
    """

    __slots__ = ("commands", "done")

    def __init__(self, shared_event: bool) -> None:
        self.commands: list[_Command[Any]] = []
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

    def __init__(self, command: _Command[Any]) -> None:
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


def connect(path: Path, *, readonly: bool = False, synchronous: str = "normal") -> sqlite3.Connection:
    """A connection in WAL mode with the hub's pragmas. Autocommit: the actor manages transactions."""
    if readonly:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False, isolation_level=None)
    else:
        conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute(f"PRAGMA synchronous={synchronous.upper()}")
    conn.execute("PRAGMA busy_timeout=5000")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.row_factory = sqlite3.Row
    return conn


class _ReaderPool:
    """Idle read-only connections, handed to worker threads one at a time."""

    def __init__(self, path: Path, size: int) -> None:
        self._path = path
        self._idle: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._size = size
        self._closed = False
        self.limiter = anyio.CapacityLimiter(size)

    def run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        conn = self._checkout()
        try:
            conn.execute("BEGIN")
        except BaseException:
            conn.close()
            raise
        try:
            return fn(conn)
        finally:
            self._end(conn)

    def _end(self, conn: sqlite3.Connection) -> None:
        """End the read transaction; a connection left in an unknown state is closed, not reused."""
        try:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
        except sqlite3.Error:
            conn.close()
            return
        self._checkin(conn)

    def _checkout(self) -> sqlite3.Connection:
        with self._lock:
            conn = self._idle.pop() if self._idle else None
        return conn if conn is not None else connect(self._path, readonly=True)

    def _checkin(self, conn: sqlite3.Connection) -> None:
        with self._lock:
            if not self._closed and len(self._idle) < self._size:
                self._idle.append(conn)
                return
        conn.close()

    def close(self) -> None:
        with self._lock:
            idle, self._idle, self._closed = self._idle, [], True
        for conn in idle:
            conn.close()


class _ProtocolError(RuntimeError):
    """A command ended the actor's transaction itself: the batch's outcome is unknown."""


def _fail_pending(commands: Sequence[_Command[Any]], message: str, cause: BaseException | None) -> None:
    """Give every command not already failed its own retryable `unavailable` error."""
    for cmd in commands:
        if cmd.error is None:
            cmd.error, cmd.result = HubError("unavailable", message, retryable=True), None
            cmd.error.__cause__ = cause


class _Writer:
    """The write connection and the batch protocol. Runs on the actor's worker thread only.

    The first command of a transaction runs without a savepoint (if it fails, the transaction rolls
    back whole and the next command starts a new one); each later command runs in its own savepoint.
    If a failing command takes the whole transaction down with it (SQLite rolls back on some errors,
    e.g. SQLITE_FULL or an interrupt), the commands before it in that transaction get a retryable
    `unavailable` error, and the commands after it run in a new transaction.
    """

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self._sql = conn.cursor().execute

    def run_batch(self, commands: Sequence[_Command[Any]]) -> None:
        start = 0
        while start < len(commands):
            start = self._run_transaction(commands, start)

    def _run_transaction(self, commands: Sequence[_Command[Any]], start: int) -> int:
        """Run `commands[start:]` in one transaction; return where the next transaction starts."""
        try:
            self._sql("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            _fail_pending(commands[start:], f"could not start a write transaction: {exc}", exc)
            return len(commands)
        if not self._run_first(commands[start]):
            return start + 1
        for i in range(start + 1, len(commands)):
            if not self._run_in_savepoint(commands[i]):
                _fail_pending(commands[start:i], "the transaction was rolled back", commands[i].error)
                return i + 1
        self._commit(commands[start:])
        return len(commands)

    def _run_first(self, cmd: _Command[Any]) -> bool:
        """Run the transaction's first command; False if it failed (the transaction is gone)."""
        try:
            cmd.result = cmd.fn(self.conn)
        except BaseException as exc:
            cmd.error = exc
            if self.conn.in_transaction:
                self._sql("ROLLBACK")
            return False
        if not self.conn.in_transaction:
            raise _ProtocolError("a command ended the write transaction")
        return True

    def _run_in_savepoint(self, cmd: _Command[Any]) -> bool:
        """Run a later command in its own savepoint; False if the whole transaction is gone."""
        sql = self._sql
        sql("SAVEPOINT hub_command")
        try:
            cmd.result = cmd.fn(self.conn)
        except BaseException as exc:
            cmd.error = exc
            if not self.conn.in_transaction:
                return False
            sql("ROLLBACK TO hub_command")
        sql("RELEASE hub_command")
        return True

    def _commit(self, commands: Sequence[_Command[Any]]) -> None:
        try:
            self._sql("COMMIT")
        except sqlite3.Error as exc:
            # Nothing of the transaction is durable: every caller learns it, none is told success.
            if self.conn.in_transaction:
                self._sql("ROLLBACK")
            _fail_pending(commands, f"commit failed: {exc}", exc)

    def close(self) -> None:
        """Roll back anything left open, checkpoint the WAL into the file, close."""
        conn = self.conn
        try:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.Error:
            log.warning("checkpoint at close failed", exc_info=True)
        finally:
            conn.close()



class _Job(Generic[T]):
    __slots__ = ("done", "error", "fn", "result")

    def __init__(self, fn: Callable[[], T]) -> None:
        self.fn = fn
        self.done = anyio.Event()
        self.result: Any = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.result = self.fn()
        except BaseException as exc:
            self.error = exc


def _running_asyncio_loop() -> asyncio.AbstractEventLoop | None:
    """The running asyncio loop, or None on trio."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _loop_call_soon() -> Callable[[Callable[[], object]], object]:
    """The running event loop's thread-safe "call this soon", which never blocks the caller."""
    try:
        return asyncio.get_running_loop().call_soon_threadsafe
    except RuntimeError:  # not asyncio: the other backend anyio runs on is trio
        import trio

        return trio.lowlevel.current_trio_token().run_sync_soon


class _WriterThread:
    """The actor's own thread: every use of the write connection happens on it, one job at a time.

    A job is handed over with a queue put and its completion comes back through the event loop's
    thread-safe call-soon, so neither side waits for the other (cheaper, and steadier under load,
    than an `anyio.to_thread` call per batch).
    """

    def __init__(self, name: str) -> None:
        self._jobs: queue.SimpleQueue[_Job[Any] | None] = queue.SimpleQueue()
        self._call_soon = _loop_call_soon()
        threading.Thread(target=self._main, name=name, daemon=True).start()

    def _main(self) -> None:
        while (job := self._jobs.get()) is not None:
            job.run()
            try:
                self._call_soon(job.done.set)
            except RuntimeError:  # the event loop is gone: nobody waits any more
                return

    async def call(self, fn: Callable[[], T]) -> T:
        """Run `fn` on the thread. Once handed over it runs to its end, so waiting is shielded."""
        await checkpoint_if_cancelled()
        job = _Job(fn)
        self._jobs.put(job)
        with anyio.CancelScope(shield=True):
            await job.done.wait()
        if job.error is not None:
            raise job.error
        return job.result

    def stop(self) -> None:
        """Let the thread end after the jobs already handed over."""
        self._jobs.put(None)


class StoreActor:
    """The one writer of one SQLite file. Start it with `run` in a task group (`tg.start`).

    `execute` sends a command and returns its result after the commit; `read` runs a function on
    a read-only connection without queueing behind writes; `aclose` drains and closes.
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
        self._batches: deque[_Batch] = deque()
        self._loop: asyncio.AbstractEventLoop | None = None  # set when running on asyncio
        self._depth = 0  # commands queued, not yet taken into a batch
        self._room_waiters: deque[_RoomWaiter] = deque()
        self._wakeup: anyio.Event | None = None
        self._writer: _Writer | None = None
        self._thread: _WriterThread | None = None
        self._readers = _ReaderPool(path, readers)
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
        self._loop = _running_asyncio_loop()
        self._thread = thread = _WriterThread(f"store {self.name}")
        try:
            self._writer = await thread.call(self._open)
        except BaseException as exc:
            thread.stop()
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
        except BaseException:  # cancelled: what was not run is refused
            self._stop(None)
            raise
        finally:
            await self._shutdown()

    def _open(self) -> _Writer:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = connect(self.path, synchronous=self._synchronous)
        try:
            if self._setup is not None:
                self._setup(conn)
        except BaseException:
            conn.close()
            raise
        return _Writer(conn)

    async def _serve(self) -> None:
        while True:
            batch = self._take()
            if batch is not None:
                await self._run(batch)
            elif self._accepting:
                self._wakeup = wakeup = anyio.Event()
                await wakeup.wait()
            else:
                return

    def _take(self) -> _Batch | None:
        if not self._batches:
            return None
        batch = self._batches.popleft()
        self._depth -= len(batch.commands)
        self._grant_room()
        return batch

    async def _run(self, batch: _Batch) -> None:
        writer, thread = self._writer, self._thread
        assert writer is not None and thread is not None
        started = time.perf_counter()
        try:
            await thread.call(lambda: writer.run_batch(batch.commands))
        except Exception as exc:  # the connection died or the protocol broke: outcome unknown
            self._broken = exc
            batch.fail(self._refusal)
            raise
        except BaseException:  # cancelled before the batch was handed to the thread
            batch.fail(self._closed_error)
            raise
        finally:
            batch.answer()
        self._record(batch, time.perf_counter() - started)

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
        writer, self._writer = self._writer, None
        with anyio.CancelScope(shield=True):
            try:
                if self._reads:  # let reads in flight end, so that the checkpoint can finish
                    self._reads_done = anyio.Event()
                    await self._reads_done.wait()
                if self._thread is not None and writer is not None:
                    await self._thread.call(writer.close)
            finally:
                if self._thread is not None:
                    self._thread.stop()
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
        if not self._accepting:
            raise self._refusal()
        loop = self._loop
        cmd: _Command[T] = _Command(fn, loop.create_future() if loop is not None else None)
        if self._depth < self._capacity and not self._room_waiters:
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
        return cmd.result

    def _enqueue(self, cmd: _Command[Any]) -> _Batch:
        batches = self._batches
        if not batches or len(batches[-1].commands) >= self._max_batch:
            batches.append(_Batch(shared_event=self._loop is None))
        batch = batches[-1]
        batch.commands.append(cmd)
        self._depth += 1
        if self._depth > self._peak:
            self._peak = self._depth
        self._wake_actor()
        return batch

    def _wake_actor(self) -> None:
        if self._wakeup is not None:
            self._wakeup.set()
            self._wakeup = None

    async def _wait_for_room(self, cmd: _Command[Any]) -> _Batch:
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

    def _grant_room(self) -> None:
        while self._room_waiters and self._depth < self._capacity:
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

    def queue_depth(self) -> int:
        return self._depth

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
