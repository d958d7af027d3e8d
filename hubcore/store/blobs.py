"""The blob store: artifact version bodies, content addressed, in `blobs/<aa>/<sha256>`.

One `BlobStore` owns the blob directory: every file write and removal goes through it, one at a
time (its lock), with the disk work on a worker thread so the event loop never blocks.

- `put(data)` writes a body to a temporary file in its shard, fsyncs it, renames it into place and
  fsyncs the shard, so a body is either whole under its name or absent. A name is its content's
  digest, so writing a body that is already there writes nothing. Every `put` marks its digest as
  *staged* until the caller's write of the row that references it is over (`staged()`): a removal
  never takes a staged blob, so a publish racing the removal of the same bytes cannot lose them.
- `remove_unreferenced(digests, referenced)` removes the blobs among `digests` that no row
  references (asked through `referenced`, which reads committed rows) and no write has staged. It
  runs after the commit that dropped the last reference.
- Removals (and overwrites, which a content-addressed store never does in place) pass through the
  `gate`: a running backup holds it shut (`gate.held()`) and they wait until it opens; a backup
  holding it waits for removals already under way. Writes of new bodies never wait: a backup that
  copies the directory after hub.db simply finds more blobs than rows reference.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import secrets
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import asynccontextmanager
from pathlib import Path

import anyio

from hubcore.errors import is_volume_full, too_large, volume_full
from hubcore.store.fsync import fsync_dir

log = logging.getLogger("hubcore.blobs")

BLOB_MAX = 50 * 1024 * 1024
TEMP_PREFIX = ".tmp-"


def digest_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _is_digest(name: str) -> bool:
    return len(name) == 64 and all(c in "0123456789abcdef" for c in name)


class BlobGate:
    """The seam a running backup holds shut: removals wait while it is held, and holding it waits
    for removals already under way."""

    def __init__(self) -> None:
        self._holds = 0
        self._busy = 0
        self._changed = anyio.Condition()

    @asynccontextmanager
    async def held(self) -> AsyncIterator[None]:
        """Keep deletes and overwrites out for the block (a backup copying the blobs)."""
        async with self._changed:
            self._holds += 1
            while self._busy:
                await self._changed.wait()
        try:
            yield
        finally:
            with anyio.CancelScope(shield=True):
                async with self._changed:
                    self._holds -= 1
                    self._changed.notify_all()

    @asynccontextmanager
    async def mutating(self) -> AsyncIterator[None]:
        """A delete or overwrite: waits while a backup holds the gate."""
        async with self._changed:
            while self._holds:
                await self._changed.wait()
            self._busy += 1
        try:
            yield
        finally:
            with anyio.CancelScope(shield=True):
                async with self._changed:
                    self._busy -= 1
                    self._changed.notify_all()

    @property
    def is_held(self) -> bool:
        return self._holds > 0


class BlobStore:
    """The blob directory's owner (see the module docstring)."""

    def __init__(self, root: Path, *, max_bytes: int = BLOB_MAX) -> None:
        self.root = root
        self.max_bytes = max_bytes
        self.gate = BlobGate()
        self.writes = 0  # files written or removed so far (the hub's measurements key on it)
        self._lock = anyio.Lock()
        self._staged: Counter[str] = Counter()

    def path_of(self, digest: str) -> Path:
        return self.root / digest[:2] / digest

    def read(self, digest: str) -> bytes:
        """A body's bytes (blocking: call from a worker thread or a read command)."""
        return self.path_of(digest).read_bytes()

    def exists(self, digest: str) -> bool:
        return self.path_of(digest).is_file()

    @asynccontextmanager
    async def staged(self, data: bytes) -> AsyncIterator[str]:
        """Write `data` (when absent) and keep it safe from removal for the block, which writes
        the row referencing it; yields the digest. A block that fails leaves the blob to the next
        `remove_unreferenced` of its digest, which the caller asks for when its write failed."""
        if len(data) > self.max_bytes:
            raise too_large(
                f"content is {len(data)} bytes; an artifact version holds at most {self.max_bytes}",
                field="content",
                limit=self.max_bytes,
            )
        digest = await anyio.to_thread.run_sync(digest_of, data)
        async with self._lock:
            await anyio.to_thread.run_sync(self._write, digest, data)
            self._staged[digest] += 1
        try:
            yield digest
        finally:
            self._staged[digest] -= 1
            if self._staged[digest] <= 0:
                del self._staged[digest]

    def _write(self, digest: str, data: bytes) -> None:
        """Write one body whole or not at all; a full volume is the retryable `unavailable`
        (the temporary file is gone, so the next try finds the space it freed)."""
        try:
            self._write_file(digest, data)
        except OSError as exc:
            if is_volume_full(exc):
                raise volume_full(exc) from exc
            raise

    def _write_file(self, digest: str, data: bytes) -> None:
        target = self.path_of(digest)
        if target.is_file():
            return
        shard = target.parent
        new_shard = not shard.is_dir()
        temp = shard / f"{TEMP_PREFIX}{secrets.token_hex(8)}"
        try:
            shard.mkdir(parents=True, exist_ok=True)
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as out:
                out.write(data)
                out.flush()
                os.fsync(out.fileno())
            os.replace(temp, target)
        except BaseException:
            temp.unlink(missing_ok=True)
            if new_shard:
                _remove_if_empty(shard)
            raise
        fsync_dir(shard)
        self.writes += 1

    async def remove_unreferenced(
        self, digests: Iterable[str], referenced: Callable[[list[str]], Awaitable[set[str]]]
    ) -> int:
        """Remove the blobs among `digests` that no committed row references and no write has
        staged; waits while a backup holds the gate. Returns how many files went."""
        wanted = sorted({d for d in digests if _is_digest(d)})
        if not wanted:
            return 0
        async with self.gate.mutating(), self._lock:
            candidates = [d for d in wanted if d not in self._staged]
            kept = await referenced(candidates) if candidates else set()
            doomed = [d for d in candidates if d not in kept]
            removed = await anyio.to_thread.run_sync(self._unlink, doomed)
        self.writes += removed
        return removed

    def _unlink(self, digests: list[str]) -> int:
        removed = 0
        for digest in digests:
            path = self.path_of(digest)
            try:
                path.unlink()
            except FileNotFoundError:
                continue
            removed += 1
            fsync_dir(path.parent)
        return removed

    def digests(self) -> list[str]:
        """Every stored blob's digest (blocking), temporary files aside."""
        if not self.root.is_dir():
            return []
        return sorted(p.name for p in self.root.glob("??/*") if _is_digest(p.name))

    def bytes_of(self, digests: Iterable[str]) -> int:
        """The stored size of the given blobs (blocking); a missing one counts nothing."""
        total = 0
        for digest in set(digests):
            try:
                total += self.path_of(digest).stat().st_size
            except FileNotFoundError:
                continue
        return total


def _remove_if_empty(shard: Path) -> None:
    """A shard a failed write created goes with it (nothing of the write is left behind)."""
    with contextlib.suppress(OSError):  # not empty (a racing write filled it) or already gone
        shard.rmdir()
