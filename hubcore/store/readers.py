"""Read-only connections for reads that must not queue behind writes (WAL mode)."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import anyio

from hubcore.store.connection import READ_MMAP_BYTES, connect, end_read

T = TypeVar("T")


class ReaderPool:
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
        if end_read(conn):
            self._checkin(conn)

    def _checkout(self) -> sqlite3.Connection:
        with self._lock:
            conn = self._idle.pop() if self._idle else None
        return conn if conn is not None else connect(self._path, readonly=True, mmap_bytes=READ_MMAP_BYTES)

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
