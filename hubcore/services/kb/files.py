"""The knowledge base files: one SQLite file per project (`kb/<project_id>.db`), each written by
its own actor, opened on demand by an `ActorPool` and closed when idle.

A read of a project whose file was never written finds nothing and creates no file; the file
comes into being on the first write. Every write bumps the hub-wide write count (the data
directory's memoised measurements key on it) and the project's generation (the derived views'
walk is renewed when it moves).

Checkpoints: SQLite's own checkpoint runs inside the commit that crosses its threshold, so one
write in a hundred or so paid for copying the write-ahead log into the file and its fsync (a write
p99 of 10 ms and a maximum past 100 ms at 10,000 pages, against 3 ms without it). Here the writer's
own checkpoint is only a safety net (`WRITER_AUTOCHECKPOINT`); every `CHECKPOINT_EVERY` commands a
project is noted, and `run_checkpointer` (a background task of the hub) checkpoints it on a worker
thread through a connection of its own (`PASSIVE`: it never waits for, nor holds up, the writer or
the readers).
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import anyio

from hubcore.errors import not_found
from hubcore.metrics import store_bytes
from hubcore.store import kb
from hubcore.store.actor import StoreActor
from hubcore.store.pool import ActorPool

T = TypeVar("T")
log = logging.getLogger("hubcore.kb")
CHECKPOINT_EVERY = 128  # commands between background checkpoints (a page write adds about 30 KiB of log)
WRITER_AUTOCHECKPOINT = 8192  # log pages (32 MiB) past which the writer checkpoints itself all the same


def kb_factory(directory: Path, synchronous: str) -> Callable[[str], StoreActor]:
    """How the pool opens a project's file: its actor, with the knowledge base's tables."""

    def make(project_id: str) -> StoreActor:
        return StoreActor(
            directory / f"{project_id}.db",
            setup=open_writer,
            synchronous=synchronous,
            readers=2,
            mailbox_size=256,
            name=f"kb {project_id}",
        )

    return make


def open_writer(conn: sqlite3.Connection) -> None:
    """The write connection of a project's file: its tables, and SQLite's own checkpoint moved
    out of the way of the writes (the background checkpointer does it)."""
    conn.execute(f"PRAGMA wal_autocheckpoint = {WRITER_AUTOCHECKPOINT}")
    kb.setup(conn)


def checkpoint(path: Path) -> tuple[int, int] | None:
    """Copy what the write-ahead log holds into the file, without waiting for the writer or the
    readers (`PASSIVE`); the log's frames and those copied, or None when the file is gone. The file
    is opened without creating it (a project deleted meanwhile stays deleted)."""
    try:
        conn = sqlite3.connect(f"file:{path}?mode=rw", uri=True, isolation_level=None)
    except sqlite3.OperationalError:
        return None
    try:
        conn.execute("PRAGMA busy_timeout = 5000")
        row = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        return int(row[1]), int(row[2])
    finally:
        conn.close()


class KbFiles:
    def __init__(self, pool: ActorPool, directory: Path) -> None:
        self.pool = pool
        self.directory = directory
        self.writes = 0
        self._generations: dict[str, int] = {}
        self.touched: set[str] = set()  # projects whose file changed, for the search index
        self._since_checkpoint: dict[str, int] = {}  # commands since the project's last checkpoint
        self._due: set[str] = set()  # projects waiting for the checkpointer
        self._wake: anyio.Event | None = None  # set when a project is due (None: no checkpointer runs)
        self.checkpoints = 0  # background checkpoints run, for tests and metrics
        self._removals: dict[str, int] = {}  # how many times each project's file was removed
        self._in_use: dict[str, int] = {}  # reads and commands of each project in flight
        self._released: anyio.Event | None = None  # set when a project's last read or command ends
        self._removing: set[str] = set()  # projects whose file is being removed: read as having none

    def path_of(self, project_id: str) -> Path:
        return self.directory / f"{project_id}.db"

    def exists(self, project_id: str) -> bool:
        return self.path_of(project_id).exists()

    def bytes_of(self, project_id: str) -> int | None:
        """The file's bytes on disk with its write-ahead log (0 when never written)."""
        return store_bytes(self.path_of(project_id))

    def generation(self, project_id: str) -> int:
        """How many writes the project's file has taken since the hub started."""
        return self._generations.get(project_id, 0)

    def epoch(self, project_id: str) -> int:
        """How many times the project's file was removed: a write takes it before checking the
        project, and its command is refused if the project's file was removed since."""
        return self._removals.get(project_id, 0)

    async def read(self, project_id: str, fn: Callable[[sqlite3.Connection], T], default: T) -> T:
        """`fn` on a read-only connection of the project's file, or `default` when there is none
        (or it is being removed: a read then would open the file again behind the removal)."""
        if project_id in self._removing or not self.exists(project_id):
            return default
        with self._using(project_id):
            async with self.pool.use(project_id) as actor:
                return await actor.read(fn)

    async def execute(self, project_id: str, fn: Callable[[sqlite3.Connection], T], *, epoch: int | None = None) -> T:
        """`fn` as one command of the project's actor (compare and write inside it). With `epoch`
        (taken before the project was checked), a project deleted since is missing: its file is
        never created again by a write that raced the delete."""
        if epoch is not None and epoch != self.epoch(project_id):
            raise not_found(f"project {project_id!r} not found")
        with self._using(project_id):
            async with self.pool.use(project_id) as actor:
                result = await actor.execute(fn)
        self.wrote(project_id)
        self._count_toward_checkpoint(project_id)
        return result

    @contextmanager
    def _using(self, project_id: str) -> Iterator[None]:
        self._in_use[project_id] = self._in_use.get(project_id, 0) + 1
        try:
            yield
        finally:
            self._in_use[project_id] -= 1
            if not self._in_use[project_id]:
                del self._in_use[project_id]
                if self._released is not None:
                    self._released.set()
                    self._released = None

    def _count_toward_checkpoint(self, project_id: str) -> None:
        done = self._since_checkpoint.get(project_id, 0) + 1
        if done < CHECKPOINT_EVERY:
            self._since_checkpoint[project_id] = done
            return
        self._since_checkpoint.pop(project_id, None)
        if self._wake is not None:
            self._due.add(project_id)
            self._wake.set()

    async def run_checkpointer(self) -> None:
        """Checkpoint the projects noted as due, one at a time on a worker thread, until cancelled."""
        while True:
            self._wake = anyio.Event()
            if not self._due:
                await self._wake.wait()
            for project_id in sorted(self._due):
                self._due.discard(project_id)
                try:
                    await anyio.to_thread.run_sync(checkpoint, self.path_of(project_id))
                except sqlite3.Error:  # busy past its timeout, or damaged: the writer's own net holds
                    log.warning("checkpoint of knowledge base %s failed", project_id, exc_info=True)
                self.checkpoints += 1

    def wrote(self, project_id: str) -> None:
        self.writes += 1
        self._generations[project_id] = self._generations.get(project_id, 0) + 1
        self.touched.add(project_id)

    async def remove(self, project_id: str) -> None:
        """Close the project's actor and remove its file (project deletion). A write that took
        its epoch before is refused from now on; reads and commands already in flight end first,
        so none writes into the removed file or recreates it."""
        self._removals[project_id] = self.epoch(project_id) + 1
        self._due.discard(project_id)
        self._since_checkpoint.pop(project_id, None)
        self._removing.add(project_id)
        try:
            while project_id in self._in_use:
                if self._released is None:
                    self._released = anyio.Event()
                await self._released.wait()
            await self.pool.close(project_id)
            await anyio.to_thread.run_sync(_unlink, self.path_of(project_id))
        finally:
            self._removing.discard(project_id)
        self.wrote(project_id)

    def files(self) -> list[Path]:
        return sorted(self.directory.glob("*.db"))


def _unlink(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
