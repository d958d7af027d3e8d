"""The knowledge base files: one SQLite file per project (`kb/<project_id>.db`), each written by
its own actor, opened on demand by an `ActorPool` and closed when idle.

A read of a project whose file was never written finds nothing and creates no file; the file
comes into being on the first write. Every write bumps the hub-wide write count (the data
directory's memoised measurements key on it) and the project's generation (the derived views'
walk is renewed when it moves).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import anyio

from hubcore.metrics import store_bytes
from hubcore.store import kb
from hubcore.store.actor import StoreActor
from hubcore.store.pool import ActorPool

T = TypeVar("T")


def kb_factory(directory: Path, synchronous: str) -> Callable[[str], StoreActor]:
    """How the pool opens a project's file: its actor, with the knowledge base's tables."""

    def make(project_id: str) -> StoreActor:
        return StoreActor(directory / f"{project_id}.db", setup=kb.setup, synchronous=synchronous,
                          readers=2, mailbox_size=256, name=f"kb {project_id}")

    return make


class KbFiles:
    def __init__(self, pool: ActorPool, directory: Path) -> None:
        self.pool = pool
        self.directory = directory
        self.writes = 0
        self._generations: dict[str, int] = {}
        self.touched: set[str] = set()  # projects whose file changed, for the search index

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

    async def read(self, project_id: str, fn: Callable[[sqlite3.Connection], T], default: T) -> T:
        """`fn` on a read-only connection of the project's file, or `default` when there is none."""
        if not self.exists(project_id):
            return default
        async with self.pool.use(project_id) as actor:
            return await actor.read(fn)

    async def execute(self, project_id: str, fn: Callable[[sqlite3.Connection], T]) -> T:
        """`fn` as one command of the project's actor (compare and write inside it)."""
        async with self.pool.use(project_id) as actor:
            result = await actor.execute(fn)
        self.wrote(project_id)
        return result

    def wrote(self, project_id: str) -> None:
        self.writes += 1
        self._generations[project_id] = self._generations.get(project_id, 0) + 1
        self.touched.add(project_id)

    async def remove(self, project_id: str) -> None:
        """Close the project's actor and remove its file (project deletion)."""
        await self.pool.close(project_id)
        await anyio.to_thread.run_sync(_unlink, self.path_of(project_id))
        self.wrote(project_id)

    def files(self) -> list[Path]:
        return sorted(self.directory.glob("*.db"))


def _unlink(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
