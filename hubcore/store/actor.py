"""One writer per store file.

A `StoreActor` owns the single write connection of one SQLite file. Callers send commands (plain
functions of a `sqlite3.Connection`) and await their replies. The actor task drains its bounded
mailbox in arrival order; every command already queued (up to `max_batch`) runs inside its own
SAVEPOINT within one transaction, the transaction commits once, and only then does each caller get
its reply. A failing command rolls back its own savepoint and gets its own exception; the others
commit. Reads do not queue: they run on read-only connections in worker threads (WAL mode).

Modelled on datasette's `Database` (one writer per file, per-command errors, sentinel shutdown),
with an anyio task and group commit instead of a bare thread.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

import anyio
from anyio.abc import TaskStatus
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from hubcore.errors import HubError, StoreBroken, StoreClosed

log = logging.getLogger("hubcore.store")

T = TypeVar("T")
Setup = Callable[[sqlite3.Connection], None]


@dataclass
class _Command(Generic[T]):
    fn: Callable[[sqlite3.Connection], T]
    done: anyio.Event = field(default_factory=anyio.Event)
    result: Any = None
    error: BaseException | None = None
    queued_at: float = field(default_factory=time.perf_counter)


@dataclass
class ActorStats:
    """What an operator (or a benchmark) wants to know about a mailbox."""

    depth: int = 0
    peak_depth: int = 0
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
        conn = sqlite3.connect(
            f"file:{path}?mode=ro", uri=True, check_same_thread=False, isolation_level=None
        )
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
        self.limiter = anyio.CapacityLimiter(size)

    def run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        with self._lock:
            conn = self._idle.pop() if self._idle else None
        if conn is None:
            conn = connect(self._path, readonly=True)
        try:
            conn.execute("BEGIN")
            try:
                return fn(conn)
            finally:
                conn.execute("COMMIT")
        except BaseException:
            conn.close()
            conn = None
            raise
        finally:
            if conn is not None:
                with self._lock:
                    if len(self._idle) < self._size:
                        self._idle.append(conn)
                    else:
                        conn.close()

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()


class StoreActor:
    """The one writer of one SQLite file. Start it with `run` in a task group (`tg.start`)."""

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
    ) -> None:
        self.path = path
        self.name = name or path.name
        self._setup = setup
        self._max_batch = max_batch
        self._synchronous = synchronous
        send: MemoryObjectSendStream[_Command[Any]]
        recv: MemoryObjectReceiveStream[_Command[Any]]
        send, recv = anyio.create_memory_object_stream(mailbox_size)
        self._send, self._recv = send, recv
        self._conn: sqlite3.Connection | None = None
        self._writer_limiter = anyio.CapacityLimiter(1)
        self._readers = _ReaderPool(path, readers)
        self._closing = False
        self._broken: BaseException | None = None
        self._stopped = anyio.Event()
        self.stats = ActorStats()
        self.last_used = time.monotonic()

    # -- lifecycle -------------------------------------------------------------------------------

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Open the file, report started, then serve commands until closed (or broken)."""
        try:
            self._conn = await anyio.to_thread.run_sync(self._open, limiter=self._writer_limiter)
        except BaseException as exc:
            self._broken = exc
            self._stopped.set()
            raise
        task_status.started()
        try:
            await self._serve()
        except anyio.get_cancelled_exc_class():
            self._closing = True
            self._fail_queued(StoreClosed(f"store {self.name} was cancelled"))
            raise
        except BaseException as exc:  # a bug or a dead connection: nobody may wait forever
            self._broken = exc
            self._fail_queued(self._broken_error())
            log.exception("store actor %s died", self.name)
            raise
        finally:
            await self._shutdown()

    def _open(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = connect(self.path, synchronous=self._synchronous)
        if self._setup is not None:
            self._setup(conn)
        return conn

    async def _serve(self) -> None:
        async for first in self._recv:
            batch = [first]
            while len(batch) < self._max_batch:
                try:
                    batch.append(self._recv.receive_nowait())
                except (anyio.WouldBlock, anyio.EndOfStream):
                    break
            self.stats.depth = self._recv.statistics().current_buffer_used
            try:
                await anyio.to_thread.run_sync(self._run_batch, batch, limiter=self._writer_limiter)
            except BaseException as exc:
                self._broken = exc
                for cmd in batch:
                    cmd.error, cmd.result = self._broken_error(), None
                raise
            finally:
                for cmd in batch:
                    cmd.done.set()

    def _run_batch(self, batch: list[_Command[Any]]) -> None:
        conn = self._conn
        assert conn is not None
        conn.execute("BEGIN IMMEDIATE")
        for cmd in batch:
            conn.execute("SAVEPOINT command")
            try:
                cmd.result = cmd.fn(conn)
            except BaseException as exc:
                cmd.error = exc
                self.stats.failed_commands += 1
                conn.execute("ROLLBACK TO command")
            conn.execute("RELEASE command")
        try:
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            # Nothing of the batch is durable: every caller learns it, none is told success.
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            failure = HubError("unavailable", f"commit failed: {exc}", retryable=True)
            failure.__cause__ = exc
            for cmd in batch:
                cmd.error, cmd.result = failure, None
        self.stats.batches += 1
        self.stats.commands += len(batch)
        self.stats.last_batch = len(batch)
        self.stats.max_batch = max(self.stats.max_batch, len(batch))

    def _fail_queued(self, exc: BaseException) -> None:
        while True:
            try:
                cmd = self._recv.receive_nowait()
            except (anyio.WouldBlock, anyio.EndOfStream, anyio.ClosedResourceError):
                return
            cmd.error = exc
            cmd.done.set()

    async def _shutdown(self) -> None:
        conn, self._conn = self._conn, None
        with anyio.CancelScope(shield=True):
            if conn is not None:
                await anyio.to_thread.run_sync(_checkpoint_and_close, conn, limiter=self._writer_limiter)
            self._readers.close()
            self._recv.close()
            self._stopped.set()

    async def aclose(self) -> None:
        """Stop taking commands, answer every queued one, checkpoint and close the file."""
        self._closing = True
        self._send.close()
        await self._stopped.wait()

    @property
    def closed(self) -> bool:
        return self._closing or self._stopped.is_set()

    # -- calls -----------------------------------------------------------------------------------

    def _broken_error(self) -> StoreBroken:
        err = StoreBroken(f"store {self.name} is broken")
        err.__cause__ = self._broken
        return err

    def _check_usable(self) -> None:
        if self._broken is not None:
            raise self._broken_error()
        if self._closing or self._stopped.is_set():
            raise StoreClosed(f"store {self.name} is closed")

    async def execute(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run `fn` on the write connection in its own savepoint; return after the commit.

        Blocks while the mailbox is full (back-pressure). Raises what `fn` raised (the savepoint
        rolled back), `StoreClosed`, or `StoreBroken`.
        """
        self._check_usable()
        cmd: _Command[T] = _Command(fn)
        self.last_used = time.monotonic()
        try:
            await self._send.send(cmd)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._check_usable()
            raise StoreClosed(f"store {self.name} is closed") from None
        depth = self._send.statistics().current_buffer_used
        self.stats.peak_depth = max(self.stats.peak_depth, depth)
        await cmd.done.wait()
        if cmd.error is not None:
            raise cmd.error
        return cmd.result

    async def read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run `fn` on a read-only connection in a worker thread, in one read transaction."""
        self._check_usable()
        self.last_used = time.monotonic()
        return await anyio.to_thread.run_sync(self._readers.run, fn, limiter=self._readers.limiter)

    def queue_depth(self) -> int:
        return self._send.statistics().current_buffer_used


def _checkpoint_and_close(conn: sqlite3.Connection) -> None:
    try:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    except sqlite3.Error:
        log.warning("checkpoint at close failed", exc_info=True)
    finally:
        conn.close()
