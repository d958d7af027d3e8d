"""Backups: every engine file copied through SQLite's backup API, every blob verbatim, a manifest.

One backup is one new directory named for the UTC time to the millisecond
(`2026-11-27T09-20-01.123Z`), written first as `.partial-<name>` beside it and renamed once its
manifest is on disk, so a directory with that name is always a whole backup. Nothing here ever
deletes an old backup.

The set (an allow-list, so a stray file, a temp file, a sidecar or a file a delete moved aside is
never taken): `hub.db`, the parts' store files (`Part.files`: `brains/*.db`, `kb/*.db`), the files
they copy byte for byte (`Part.copied_files`: `blobs/<aa>/<sha256>`) and their key files
(`Part.key_files`), and `manifest.json`. Each is asked of the part classes
(`hubcore.ops.layout`): this module names no feature. `hub.db` is copied first; the stores' files
and the blobs after, so the set is not one instant across files (the spec allows it; the first
start on a restored directory removes what `hub.db` does not reference). Each SQLite file is
copied in one step (`Connection.backup()` with the default `pages=-1`): a stepped backup restarts
whenever another connection writes and never finishes under a busy writer (DESIGN section 9).

`BackupService` is the online backup (`POST /api/v1/backups`): one at a time, only under
`backup_dir`, the hub's `hold` held (the blob store's gate, shut so no blob is deleted or
overwritten while it runs), the copying on a worker thread so the hub keeps serving.
`offline_backup` is `hub-cli backup --out`.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Final
from urllib.parse import quote

import anyio

from hubcore.caller import Caller
from hubcore.clock import Clock
from hubcore.errors import HubError
from hubcore.ops.datadir import OpsRefused, fsync_all, held_by_hub, hold, is_inside
from hubcore.ops.layout import Parts, copied_files, part_files
from hubcore.ops.manifest import MANIFEST_NAME, Manifest, ManifestFile, file_digest, format_created_at, write_manifest
from hubcore.parts.catalog import PART_TYPES
from hubcore.services.access import require_admin
from hubcore.services.requests import NoArguments
from hubcore.store.fsync import fsync_dir
from hubcore.store.migrations import read_version

log = logging.getLogger("hubcore.ops.backup")

PARTIAL_PREFIX: Final = ".partial-"
_CHUNK: Final = 1 << 20


@dataclass(frozen=True, slots=True)
class BackupResult:
    directory: str
    path: Path
    manifest: Manifest
    duration_ms: int

    def to_json(self) -> dict[str, Any]:
        """The reply DESIGN section 7 fixes: `{directory, path, manifest: {schema_version,
        created_at, files, bytes}, duration_ms}` (`files` is the count)."""
        return {
            "directory": self.directory,
            "path": str(self.path),
            "manifest": {
                "schema_version": self.manifest.schema_version,
                "created_at": self.manifest.created_at,
                "files": len(self.manifest.files),
                "bytes": self.manifest.bytes,
            },
            "duration_ms": self.duration_ms,
        }


def backup_name(moment: datetime) -> str:
    """The directory name for `moment`: ISO-8601 UTC to the millisecond, colons as hyphens."""
    return format_created_at(moment).replace(":", "-")


def resolve_backup_dir(backup_dir: str | None, data_dir: Path) -> Path:
    """The configured backup directory, checked now with symlinks resolved (`HubError`: 404 when
    online backup is off, 503 when the directory is missing or lies inside the data directory)."""
    if not backup_dir:
        raise HubError(
            "not_found",
            "online backup is off: set backup_dir (HUB_BACKUP_DIR) to a directory outside the data directory",
        )
    target = Path(backup_dir).expanduser()
    if not target.is_dir():
        raise HubError("unavailable", f"backup directory {target} is missing (or not a directory)", retryable=True)
    if is_inside(target, data_dir):
        raise HubError(
            "unavailable",
            f"backup directory {target} resolves to {target.resolve()}, inside the "
            f"data directory {data_dir}: backups must live outside it",
        )
    return target.resolve()


class BackupCreate(NoArguments):
    """`POST /api/v1/backups`: no member at all (the directory comes from `backup_dir` alone, never
    from a request), so any query parameter or body member is refused naming it."""


class BackupService:
    """The online backup (see the module docstring)."""

    def __init__(
        self,
        *,
        data_dir: Path,
        backup_dir: str | None,
        clock: Clock,
        hold: Callable[[], AbstractAsyncContextManager[None]],
        schema_version: int,
        engine_files: Callable[[], Sequence[Path]],
        parts: Parts = PART_TYPES,
    ) -> None:
        self.data_dir = data_dir
        self.backup_dir = backup_dir
        self.clock = clock
        self.hold = hold
        self.schema_version = schema_version
        self.engine_files = engine_files
        self.parts = parts
        self.running = False

    async def create(self, caller: Caller, req: BackupCreate) -> dict[str, Any]:
        """Take one backup: the reply `BackupResult.to_json` states."""
        del req  # it carries nothing: parsing it refused every member
        require_admin(caller, "a backup")
        parent = resolve_backup_dir(self.backup_dir, self.data_dir)
        if self.running:
            raise HubError("conflict", "a backup is already running; try again when it has finished", retryable=True)
        self.running = True
        try:
            # The hub's hold (the blob store's gate: deletes and overwrites wait) lasts from before
            # hub.db is copied until every file is: each file hub.db's copy references is still
            # there when it is copied.
            async with self.hold():
                result = await self._in_thread(parent)
        finally:
            self.running = False
        log.info(
            "backup %s: %d files, %d bytes in %d ms",
            result.path,
            len(result.manifest.files),
            result.manifest.bytes,
            result.duration_ms,
        )
        return result.to_json()

    async def _in_thread(self, parent: Path) -> BackupResult:
        """Copy on a worker thread. Cancelled (the hub shutting down, the client gone), the request
        returns at once and the worker stops before its next file, removing its partial directory."""
        stop = threading.Event()
        try:
            return await anyio.to_thread.run_sync(self._write, parent, stop, abandon_on_cancel=True)
        except anyio.get_cancelled_exc_class():
            stop.set()
            raise
        except OSError as exc:  # a full or failing disk under backup_dir: nothing of it is left
            log.warning("backup under %s failed: %s", parent, exc)
            raise HubError(
                "unavailable", f"the backup could not be written under {parent}: {exc.strerror or exc}", retryable=True
            ) from None

    def _write(self, parent: Path, stop: threading.Event) -> BackupResult:
        # Re-checked on the worker too: the directory may have been swapped for a symlink since.
        parent = resolve_backup_dir(self.backup_dir, self.data_dir)
        when = datetime.fromtimestamp(self.clock.now(), tz=UTC)
        return write_backup(
            self.data_dir,
            parent,
            schema_version=self.schema_version,
            moment=when,
            engine=self.engine_files(),
            parts=self.parts,
            stop=stop,
        )


def offline_backup(data_dir: Path, out: Path, *, moment: datetime, parts: Parts = PART_TYPES) -> BackupResult:
    """`hub-cli backup --out`: the same backup from a data directory no hub holds.

    `OpsRefused` when a hub holds it (naming the ways that work while it runs), when it is not a
    data directory, or when `out` lies inside it."""
    held = OpsRefused(
        f"data directory {data_dir} is held by a running hub: take an online backup with "
        "`hub-cli backup --url URL`, stop the hub first, or take a volume snapshot"
    )
    if held_by_hub(data_dir):
        raise held
    if not (data_dir / "hub.db").is_file():
        raise OpsRefused(f"{data_dir} is not a hub data directory (no hub.db)")
    if is_inside(out, data_dir):
        raise OpsRefused(f"{out} is inside the data directory {data_dir}: write backups outside it")
    schema_version = _schema_version(data_dir / "hub.db")
    out.mkdir(mode=0o700, exist_ok=True)
    try:
        lock = hold(data_dir)  # a hub started from now on is refused until the copy is done
    except OpsRefused:
        raise held from None
    with lock:
        engine = [data_dir / "hub.db", *part_files(data_dir, parts)]
        return write_backup(
            data_dir, out.resolve(), schema_version=schema_version, moment=moment, engine=engine, parts=parts
        )


def _schema_version(db: Path) -> int:
    """hub.db's schema version (`OpsRefused` when the file is no SQLite store)."""
    try:
        conn = sqlite3.connect(f"file:{quote(str(db))}?mode=ro", uri=True)
        try:
            return read_version(conn)
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        raise OpsRefused(f"{db} cannot be read as a hub store: {exc}") from None


class BackupStopped(Exception):
    """The backup was told to stop (its request cancelled); its partial directory is gone."""


def write_backup(
    data_dir: Path,
    parent: Path,
    *,
    schema_version: int,
    moment: datetime,
    engine: Sequence[Path],
    parts: Parts = PART_TYPES,
    stop: threading.Event | None = None,
) -> BackupResult:
    """Write one backup of `data_dir` into a new directory under `parent` (blocking). `stop` is
    looked at before each file: once set, the partial directory is removed and `BackupStopped`
    raised."""
    started = time.monotonic()
    name, moment = _free_name(parent, moment)
    staging = parent / f"{PARTIAL_PREFIX}{name}"
    staging.mkdir(mode=0o700)

    def go_on(src: Path) -> Path:
        if stop is not None and stop.is_set():
            raise BackupStopped(f"backup {name} stopped before {src.name}")
        return src

    try:
        entries = [e for src in engine if (e := _copy_sqlite(data_dir, go_on(src), staging)) is not None]
        entries += [
            e
            for src in copied_files(data_dir, parts)
            if (e := _copy_verbatim(data_dir, go_on(src), staging)) is not None
        ]
        go_on(staging / MANIFEST_NAME)
        # Every copy reaches the disk before the manifest vouches for it (the directories too).
        fsync_all([staging / e.path for e in entries])
        fsync_all({(staging / e.path).parent for e in entries})
        manifest = write_manifest(staging, entries, schema_version, moment)
        fsync_dir(staging)
        final = parent / name
        os.rename(staging, final)
        fsync_dir(parent)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return BackupResult(name, final, manifest, int((time.monotonic() - started) * 1000))


def _free_name(parent: Path, moment: datetime) -> tuple[str, datetime]:
    """A name no backup (finished or partial) holds yet: the clock may repeat a millisecond."""
    while (parent / backup_name(moment)).exists() or (parent / f"{PARTIAL_PREFIX}{backup_name(moment)}").exists():
        moment += timedelta(milliseconds=1)
    return backup_name(moment), moment


def _copy_sqlite(data_dir: Path, src: Path, staging: Path) -> ManifestFile | None:
    """Copy one SQLite file through the engine; None when it vanished (a delete raced the backup)."""
    relative = src.relative_to(data_dir).as_posix()
    dest = staging / relative
    dest.parent.mkdir(parents=True, exist_ok=True)
    try:
        # mode=rw: a file deleted since it was listed must not be created empty by the open.
        source = sqlite3.connect(f"file:{quote(str(src))}?mode=rw", uri=True)
    except sqlite3.OperationalError:
        if src.exists():
            raise
        log.info("backup: %s went before it was copied; left out", relative)
        return None
    try:
        target = sqlite3.connect(dest)
        try:
            # The copy is a new file fsynced once below: no rollback journal, no syncs of its own.
            target.execute("PRAGMA journal_mode=OFF")
            target.execute("PRAGMA synchronous=OFF")
            source.backup(target)  # one step (pages=-1): a stepped copy never ends under a writer
        finally:
            target.close()
    finally:
        source.close()
    size, sha = file_digest(dest)  # fsynced with the others before the manifest is written
    return ManifestFile(relative, size, sha)


def _copy_verbatim(data_dir: Path, src: Path, staging: Path) -> ManifestFile | None:
    """Copy one file (a blob, a key file) byte for byte, hashing as it goes; None when it vanished."""
    relative = src.relative_to(data_dir).as_posix()
    dest = staging / relative
    dest.parent.mkdir(parents=True, exist_ok=True)
    digest, size = hashlib.sha256(), 0
    try:
        source = os.open(src, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return None
    # 0600: a copied secret (the push keys) stays private; blobs lose nothing by it.
    with os.fdopen(source, "rb") as reader, os.fdopen(os.open(dest, _NEW_FILE, 0o600), "wb") as writer:
        while chunk := reader.read(_CHUNK):
            digest.update(chunk)
            writer.write(chunk)
            size += len(chunk)
    return ManifestFile(relative, size, digest.hexdigest())


_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL
