"""The writer side of a store actor: the batch protocol and the thread it runs on.

A `Command` is a function of the write connection plus its outcome. `Writer.run_batch` runs a
batch of them in one transaction, each after the first in its own SAVEPOINT, and commits once.
`WriterThread` is the actor's own thread: every use of the write connection happens on it.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import sqlite3
import threading
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar, cast

import anyio
from anyio.lowlevel import checkpoint_if_cancelled

from hubcore.errors import HubError, is_volume_full, refusal_of, volume_full

log = logging.getLogger("hubcore.store")

T = TypeVar("T")


class Command(Generic[T]):
    """A function of the write connection, and what came of it: set on the writer thread, read
    by the caller once `reply` (its own future on asyncio; None on trio) says the batch is over.

    With `effects` set, `fn` returns `(result, effects)`: the actor publishes the effects once the
    batch committed, and the caller gets only the result."""

    __slots__ = ("effects", "error", "fn", "reply", "result")

    def __init__(
        self, fn: Callable[[sqlite3.Connection], T], reply: asyncio.Future[None] | None, effects: bool = False
    ) -> None:
        self.fn = fn
        self.reply = reply
        self.effects = effects
        self.result: Any = None
        self.error: BaseException | None = None


class ProtocolError(RuntimeError):
    """A command ended the actor's transaction itself: the batch's outcome is unknown."""


def _fail_pending(commands: Sequence[Command[Any]], message: str, cause: BaseException | None) -> None:
    """Give every command not already failed its own retryable `unavailable` error."""
    for cmd in commands:
        if cmd.error is None:
            if is_volume_full(cause):
                cmd.error, cmd.result = volume_full(cause), None
                continue
            cmd.error, cmd.result = HubError("unavailable", message, retryable=True), None
            cmd.error.__cause__ = cause


class Writer:
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
        self._dead: BaseException | None = None  # what a batch raised: the writer runs no more

    def run_batch(self, commands: Sequence[Command[Any]]) -> None:
        """Run the batch; raises only when the connection or the protocol broke, and from then on
        raises that again for every batch without running it (its actor may have handed on more
        before it heard: `StoreActor(gather=False)`)."""
        if self._dead is not None:
            raise self._dead
        start = 0
        try:
            while start < len(commands):
                start = self._run_transaction(commands, start)
        except BaseException as exc:
            self._dead = exc
            raise

    def _run_transaction(self, commands: Sequence[Command[Any]], start: int) -> int:
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

    def _run_first(self, cmd: Command[Any]) -> bool:
        """Run the transaction's first command; False if it failed (the transaction is gone)."""
        try:
            cmd.result = cmd.fn(self.conn)
        except BaseException as exc:
            cmd.error = refusal_of(exc)  # a full volume is the spec's retryable `unavailable`
            if self.conn.in_transaction:
                self._sql("ROLLBACK")
            return False
        if not self.conn.in_transaction:
            raise ProtocolError("a command ended the write transaction")
        return True

    def _run_in_savepoint(self, cmd: Command[Any]) -> bool:
        """Run a later command in its own savepoint; False if the whole transaction is gone."""
        sql = self._sql
        sql("SAVEPOINT hub_command")
        try:
            cmd.result = cmd.fn(self.conn)
        except BaseException as exc:
            cmd.error = refusal_of(exc)
            if not self.conn.in_transaction:
                return False
            sql("ROLLBACK TO hub_command")
        sql("RELEASE hub_command")
        return True

    def _commit(self, commands: Sequence[Command[Any]]) -> None:
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
    __slots__ = ("done", "error", "result")

    def __init__(self) -> None:
        self.done = anyio.Event()
        self.result: Any = None
        self.error: BaseException | None = None

    def finish(self, result: T | None, error: BaseException | None) -> None:
        self.result, self.error = result, error
        self.done.set()


Then = Callable[[Any, BaseException | None], None]
"""What runs on the event loop once a submitted function ended: (its result, or what it raised)."""


def running_asyncio_loop() -> asyncio.AbstractEventLoop | None:
    """The running asyncio loop, or None on trio."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


CallSoon = Callable[..., object]
"""`call_soon(fn, *args)`: run `fn(*args)` on the event loop's thread soon, as a plain callback."""


def loop_call_soon() -> CallSoon:
    """The running event loop's thread-safe "call this soon", which never blocks the caller."""
    try:
        return asyncio.get_running_loop().call_soon_threadsafe
    except RuntimeError:  # not asyncio: the other backend anyio runs on is trio
        import trio

        return trio.lowlevel.current_trio_token().run_sync_soon


def loop_call_soon_here() -> CallSoon:
    """The running event loop's "call this soon", for use on the loop's own thread (cheaper than
    the thread-safe form on asyncio: no wake-up of the loop)."""
    try:
        return asyncio.get_running_loop().call_soon
    except RuntimeError:  # trio: its token's call-soon is for any thread, its own included
        import trio

        return trio.lowlevel.current_trio_token().run_sync_soon


Job = tuple[Callable[[], Any], Then]
Done = tuple[Then, Any, BaseException | None]
DRAIN = 64  # jobs at most run back to back before their completions go to the loop


def _run_job(job: Job) -> Done:
    fn, then = job
    try:
        return then, fn(), None
    except BaseException as exc:  # the loop's to handle
        return then, None, exc


def _land(done: list[Done]) -> None:
    """On the loop: the completions of jobs the thread ran back to back, in their order."""
    for then, result, error in done:
        try:
            then(result, error)
        except Exception:  # one completion's failure leaves the others theirs
            log.exception("a writer thread's completion failed")


class WriterThread:
    """A thread on which store files are written: every use of a file's write connection happens
    on the one thread its actor runs on, one job at a time. Several actors may share a thread
    (an `ActorPool` of many small files does): each file keeps its own connection, used only here.

    A job is handed over with a queue put and its completion comes back through the event loop's
    thread-safe call-soon, so neither side waits for the other (cheaper, and steadier under load,
    than an `anyio.to_thread` call per batch). `submit` is the bare form: the completion is a
    plain callback on the loop, not a task to wake (the actor's batches go this way). Jobs found
    queued when one ends (other files' batches, on a shared thread) run next, and their
    completions reach the loop together: one wake-up of the loop for all of them.
    """

    def __init__(self, name: str) -> None:
        self._jobs: queue.SimpleQueue[Job | None] = queue.SimpleQueue()
        self._call_soon = loop_call_soon()
        threading.Thread(target=self._main, name=name, daemon=True).start()

    def _main(self) -> None:
        jobs = self._jobs
        running = True
        while running and (job := jobs.get()) is not None:
            done = [_run_job(job)]
            while len(done) < DRAIN and not jobs.empty():
                more = jobs.get_nowait()
                if more is None:
                    running = False
                    break
                done.append(_run_job(more))
            try:
                if len(done) == 1:
                    self._call_soon(*done[0])
                else:
                    self._call_soon(_land, done)
            except RuntimeError:  # the event loop is gone: nobody waits any more
                return

    def submit(self, fn: Callable[[], T], then: Then) -> None:
        """Run `fn` on the thread, then `then(result, error)` on the event loop (as a callback:
        it must not raise, and on trio it runs outside any task)."""
        self._jobs.put((fn, then))

    async def call(self, fn: Callable[[], T]) -> T:
        """Run `fn` on the thread. Once handed over it runs to its end, so waiting is shielded."""
        await checkpoint_if_cancelled()
        job: _Job[T] = _Job()
        self._jobs.put((fn, job.finish))
        with anyio.CancelScope(shield=True):
            await job.done.wait()
        if job.error is not None:
            raise job.error
        return cast(T, job.result)  # finish() set it: a job with no error returned fn()'s value

    def stop(self) -> None:
        """Let the thread end after the jobs already handed over."""
        self._jobs.put(None)
