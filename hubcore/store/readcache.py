"""Read-only connections to many store files (session brains), kept open apart from their writers.

A read needs no writer: it runs on a read-only connection in WAL mode. Opening a brain file's
writer actor (its thread, its write connection, the schema check) and closing one (a checkpoint
with an fsync) costs far more than a read; measured here, a read on a connection kept open costs
about 0.06 ms of CPU, opening a read-only connection for it about 0.8 ms, and opening a writer
actor for it about 1.5 ms plus its close (docs/benchmarks.md, "Brains"). So reads use this cache
of read-only connections, one or more per file, least recently used closed first beyond
`max_open` and any idle for `idle_secs` closed by `sweep`; a read never opens a writer actor, and
the writers' pool (`ActorPool`, sized by `open_stores_max`) holds only files being written.

Each connection serves one read at a time, on a worker thread, inside one read transaction.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import anyio

from hubcore.store.connection import connect, end_read

T = TypeVar("T")
READ_THREADS = 8  # brain reads on worker threads at once (sqlite releases the GIL while it works)


class ReadCache:
    """Idle read-only connections by key (a file), at most `max_open` of them kept open."""

    def __init__(self, max_open: int, *, monotonic: Callable[[], float] = time.monotonic) -> None:
        if max_open < 1:
            raise ValueError("max_open must be at least 1")
        self.max_open = max_open
        self._monotonic = monotonic
        self._idle: OrderedDict[str, list[tuple[sqlite3.Connection, float]]] = OrderedDict()  # LRU first
        self._count = 0  # idle connections held
        self._lock = threading.Lock()
        self._closed = False
        self.limiter = anyio.CapacityLimiter(READ_THREADS)
        self.opened_total = 0

    async def read(self, key: str, path: Path, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run `fn` on a read-only connection to `path` (the file `key` names), in a worker
        thread and one read transaction."""
        return await anyio.to_thread.run_sync(self.run, key, path, fn, limiter=self.limiter)

    def run(self, key: str, path: Path, fn: Callable[[sqlite3.Connection], T]) -> T:
        """`read`'s work, on the calling (worker) thread."""
        conn = self._checkout(key, path)
        try:
            conn.execute("BEGIN")
            result = fn(conn)
        except BaseException:
            self._end(key, conn)
            raise
        self._end(key, conn)
        return result

    def _checkout(self, key: str, path: Path) -> sqlite3.Connection:
        with self._lock:
            held = self._idle.get(key)
            if held:
                conn, _ = held.pop()
                self._count -= 1
                if not held:
                    del self._idle[key]
                return conn
        conn = connect(path, readonly=True)
        self.opened_total += 1
        return conn

    def _end(self, key: str, conn: sqlite3.Connection) -> None:
        """End the read transaction and keep the connection; one in an unknown state is closed."""
        if end_read(conn):
            self._checkin(key, conn)

    def _checkin(self, key: str, conn: sqlite3.Connection) -> None:
        surplus: list[sqlite3.Connection] = []
        with self._lock:
            if self._closed:
                surplus.append(conn)
            else:
                self._idle.setdefault(key, []).append((conn, self._monotonic()))
                self._idle.move_to_end(key)
                self._count += 1
                while self._count > self.max_open:
                    surplus.extend(self._evict(next(iter(self._idle))))
        for old in surplus:
            old.close()

    def _evict(self, key: str) -> list[sqlite3.Connection]:
        """Take every idle connection of `key` out (under the lock); the caller closes them."""
        held = self._idle.pop(key, [])
        self._count -= len(held)
        return [conn for conn, _ in held]

    def forget(self, key: str) -> None:
        """Close `key`'s idle connections, e.g. before its file is removed (a read in flight
        keeps its own until it ends, then returns it here)."""
        with self._lock:
            gone = self._evict(key)
        for conn in gone:
            conn.close()

    def sweep(self, idle_secs: float) -> int:
        """Close connections idle for at least `idle_secs`; returns how many."""
        cutoff = self._monotonic() - idle_secs
        gone: list[sqlite3.Connection] = []
        with self._lock:
            for key in list(self._idle):
                held = self._idle[key]
                stale = [conn for conn, used in held if used <= cutoff]
                if stale:
                    self._idle[key] = [(conn, used) for conn, used in held if used > cutoff]
                    self._count -= len(stale)
                    gone.extend(stale)
                    if not self._idle[key]:
                        del self._idle[key]
        for conn in gone:
            conn.close()
        return len(gone)

    @property
    def open_count(self) -> int:
        """Idle connections held (reads in flight hold theirs besides)."""
        return self._count

    def is_open(self, key: str) -> bool:
        return key in self._idle

    def close(self) -> None:
        """Close every idle connection; connections in use are closed when their read ends."""
        with self._lock:
            self._closed = True
            gone = [conn for held in self._idle.values() for conn, _ in held]
            self._idle.clear()
            self._count = 0
        for conn in gone:
            conn.close()
