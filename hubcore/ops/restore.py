"""`hub-cli restore`: a backup put back as a data directory, verified first, swapped in whole.

Order, so that a refusal changes nothing on disk:
1. the backup's manifest is read and every file checked against it (presence, size, SHA-256); a
   directory without one (a pre-migration copy, or no backup at all) is refused;
2. the target is refused while a hub holds it, and when it is not empty unless `force`;
3. the files are copied into `.hub-restore-<token>` beside the target (each hashed again as it is
   copied, so a backup that changed since the check is refused too), with the `RESTORED_MARK`;
4. two renames swap it in: the old tree to `.hub-replaced-<token>` (kept: nothing is deleted), the
   staged one to the target's name. Both stay on one filesystem, so each rename is atomic.

The first hub start on the restored directory sees the mark and has each part remove its files
`hub.db` does not reference (`tidy_restored`, through `Part.sweep_restored`: the blobs, the brain
files): the backup copied them after `hub.db`, so it may hold some that a later delete had dropped,
or that a write after the `hub.db` copy added.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import secrets
import shutil
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Final

from hubcore.ops.datadir import LOCK_NAME, OpsRefused, fsync_all, held_by_hub, hold
from hubcore.ops.layout import Parts, spoken
from hubcore.ops.manifest import Manifest, ManifestError, ManifestFile, read_manifest, verify_manifest
from hubcore.parts.catalog import PART_TYPES
from hubcore.store.fsync import fsync_dir

log = logging.getLogger("hubcore.ops.restore")

RESTORED_MARK: Final = ".hub-restored"
STAGING_PREFIX: Final = ".hub-restore-"
REPLACED_PREFIX: Final = ".hub-replaced-"
_CHUNK: Final = 1 << 20


@dataclass(frozen=True, slots=True)
class Restored:
    target: Path
    replaced: Path | None  # where the old tree went, when there was one
    manifest: Manifest
    ignored: tuple[str, ...] = ()  # files in the backup directory its manifest does not list


def restore(source: Path, target: Path, *, force: bool, supported_version: int) -> Restored:
    """Restore the backup at `source` into `target` (see the module docstring); `OpsRefused` when
    it will not, having changed nothing."""
    manifest, ignored = _checked_backup(source, supported_version)
    target = Path(os.path.abspath(target))
    if target.is_symlink():
        raise OpsRefused(f"{target} is a symlink: name the data directory itself")
    if target.exists() and not target.is_dir():
        raise OpsRefused(f"{target} exists and is not a directory")
    if held_by_hub(target):
        raise OpsRefused(f"data directory {target} is held by a running hub: stop it before restoring")
    if _has_content(target) and not force:
        raise OpsRefused(
            f"data directory {target} is not empty: restoring would replace it; pass --force "
            f"(the current tree is kept beside it as {REPLACED_PREFIX}<token>)"
        )
    if not target.parent.is_dir():
        raise OpsRefused(f"{target.parent} does not exist")
    token = secrets.token_hex(6)
    # The old tree's own lock, held from here to the swap: a hub cannot start on it meanwhile.
    old_lock = hold(target) if (target / LOCK_NAME).is_file() else None
    try:
        staging = target.parent / f"{STAGING_PREFIX}{token}"
        staging.mkdir(mode=0o700)
        try:
            lock = _stage(source, staging, manifest)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        try:
            replaced = _swap(staging, target, target.parent / f"{REPLACED_PREFIX}{token}")
        finally:
            lock.close()
    finally:
        if old_lock is not None:
            old_lock.close()
    log.info("restored %s into %s (%d files)", source, target, len(manifest.files))
    return Restored(target, replaced, manifest, ignored)


def _checked_backup(source: Path, supported_version: int) -> tuple[Manifest, tuple[str, ...]]:
    """The backup's manifest once every listed file matches it, with the unlisted files (never
    copied, so they cannot change what is restored: reported, not refused)."""
    if source.is_file():
        raise OpsRefused(
            f"{source} is a single file (a pre-migration copy has no manifest): restore takes a "
            "backup directory; to roll back a migration, see the spec's Versioning item 4"
        )
    if not source.is_dir():
        raise OpsRefused(f"{source} is not a directory")
    try:
        problems = verify_manifest(source)
        manifest = read_manifest(source)
    except ManifestError as exc:
        raise OpsRefused(f"{exc}; restore takes only a backup with its manifest") from None
    ignored = tuple(p.path for p in problems if p.kind == "extra")
    problems = [p for p in problems if p.kind != "extra"]
    if problems:
        listed = "; ".join(str(p) for p in problems[:20])
        more = f" (and {len(problems) - 20} more)" if len(problems) > 20 else ""
        raise OpsRefused(f"backup {source} does not match its manifest: {listed}{more}")
    if "hub.db" not in {f.path for f in manifest.files}:
        raise OpsRefused(f"backup {source} holds no hub.db")
    if manifest.schema_version > supported_version:
        raise OpsRefused(
            f"backup {source} is at schema version {manifest.schema_version}, newer than this "
            f"binary supports ({supported_version}): restore it with a newer agent-hub"
        )
    return manifest, ignored


def _has_content(target: Path) -> bool:
    """A directory holding anything but a stopped hub's lock file (or one that `data_dir_in_use`
    probes leave behind) is not empty."""
    if not target.is_dir():
        return False
    with os.scandir(target) as entries:  # closed even when any() stops at the first entry
        return any(entry.name != LOCK_NAME for entry in entries)


def _stage(source: Path, staging: Path, manifest: Manifest) -> IO[str]:
    """Copy every listed file into `staging` and mark it; returns the staged tree's lock, held so
    that a hub starting the moment the tree takes the target's name waits for the swap to end."""
    for entry in manifest.files:
        _copy_checked(source, staging, entry)
    mark = {
        "restored_from": str(source.resolve()),
        "backup_created_at": manifest.created_at,
        "schema_version": manifest.schema_version,
    }
    (staging / RESTORED_MARK).write_text(json.dumps(mark) + "\n", encoding="utf-8")
    fsync_all([staging / RESTORED_MARK, *(staging / e.path for e in manifest.files)])
    lock = open(staging / LOCK_NAME, "a+", encoding="utf-8")  # noqa: SIM115 (held until the swap is over)
    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    fsync_all({staging, *((staging / e.path).parent for e in manifest.files)})
    return lock


def _copy_checked(source: Path, staging: Path, entry: ManifestFile) -> None:
    dest = staging / entry.path
    dest.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    digest, size = hashlib.sha256(), 0
    fd = os.open(source / entry.path, os.O_RDONLY | os.O_NOFOLLOW)
    # 0600 for every restored file: the push keys are a secret, and nothing else needs more.
    new = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "rb") as reader, os.fdopen(new, "wb") as writer:
        while chunk := reader.read(_CHUNK):
            digest.update(chunk)
            writer.write(chunk)
            size += len(chunk)
    if size != entry.size or digest.hexdigest() != entry.sha256:
        raise OpsRefused(f"{entry.path} changed while it was being restored (it no longer matches the manifest)")


def _swap(staging: Path, target: Path, replaced: Path) -> Path | None:
    """The two renames; the old tree (if any) is kept under `replaced`."""
    moved: Path | None = None
    if target.exists():
        os.rename(target, replaced)
        moved = replaced
    try:
        os.rename(staging, target)
    except BaseException:
        if moved is not None:
            os.rename(replaced, target)  # put the old tree back rather than leave no directory
        raise
    fsync_dir(target.parent)
    return moved


def tidy_restored(data_dir: Path, parts: Parts = PART_TYPES) -> dict[str, int] | None:
    """On a restored directory's first start (after migrations, before the stores open): each part
    removes its files no row of hub.db references (`Part.sweep_restored`), then the mark goes.
    Returns how many each part removed ({its `restore_sweeps`: count}), or None when the directory
    is not marked."""
    mark = data_dir / RESTORED_MARK
    if not mark.exists():
        return None
    conn = sqlite3.connect(data_dir / "hub.db")
    try:
        removed = {part.restore_sweeps: part.sweep_restored(conn, data_dir) for part in parts if part.restore_sweeps}
    finally:
        conn.close()
    mark.unlink()
    fsync_dir(data_dir)
    said = spoken([f"{count} unreferenced {what}" for what, count in removed.items()]) or "nothing"
    log.info("restored directory %s: removed %s", data_dir, said)
    return removed


def restore_sweeps(parts: Parts = PART_TYPES) -> str:
    """What the first start after a restore removes, as doctor says it ("the blobs and brain files")."""
    return spoken([part.restore_sweeps for part in parts if part.restore_sweeps])
