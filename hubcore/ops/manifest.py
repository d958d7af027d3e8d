"""`manifest.json`: what a backup holds, file by file, so a copy can be verified before it is trusted.

The shape (format 1)::

    {"format": 1, "schema_version": 7, "created_at": "2026-11-27T09:20:00.123Z",
     "files": [{"path": "hub.db", "size": 4096, "sha256": "<hex>"}, ...], "bytes": 4096}

`path` is a POSIX path relative to the backup root; `bytes` is the sum of the sizes. A manifest
whose paths leave the root (absolute, `..`, backslashes, empty parts) is garbled: reading it refuses
rather than letting a restore or a check look outside the directory.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any, Final, Literal

MANIFEST_NAME: Final = "manifest.json"
FORMAT: Final = 1
_CHUNK: Final = 1 << 20

ProblemKind = Literal["missing", "size", "digest", "extra", "not_a_file"]


class ManifestError(Exception):
    """The manifest is missing or garbled; the message says which and where."""


@dataclass(frozen=True, slots=True)
class ManifestFile:
    path: str
    size: int
    sha256: str


@dataclass(frozen=True, slots=True)
class Manifest:
    format: int
    schema_version: int
    created_at: str
    files: tuple[ManifestFile, ...]
    bytes: int

    def to_json(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "schema_version": self.schema_version,
            "created_at": self.created_at,
            "files": [{"path": f.path, "size": f.size, "sha256": f.sha256} for f in self.files],
            "bytes": self.bytes,
        }


@dataclass(frozen=True, slots=True)
class Problem:
    """One file that does not match its manifest: `path` is relative to the root."""

    path: str
    kind: ProblemKind
    detail: str

    def __str__(self) -> str:
        return f"{self.path}: {self.detail}"


def format_created_at(moment: datetime) -> str:
    """UTC ISO-8601 to the millisecond with a `Z`, the manifest's and the directory names' clock."""
    if moment.tzinfo is None:
        raise ValueError("created_at must be timezone-aware")
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def file_digest(path: Path) -> tuple[int, str]:
    """(size, sha256 hex) of a regular file, read in chunks."""
    digest = hashlib.sha256()
    size = 0
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
            size += len(chunk)
    return size, digest.hexdigest()


def describe(root: Path, relative: str) -> ManifestFile:
    """The manifest entry of `root/relative` as it is on disk now."""
    check_relative(relative)
    size, sha = file_digest(root / relative)
    return ManifestFile(path=relative, size=size, sha256=sha)


def write_manifest(
    root: Path,
    files: Iterable[str | ManifestFile],
    schema_version: int,
    created_at: datetime | str,
) -> Manifest:
    """Write `root/manifest.json` (temp file, fsync, rename) and return it.

    A `str` in `files` is a relative path measured and hashed from disk now; a `ManifestFile` is
    taken as given (the backup hashes while it copies, so nothing is read twice).
    """
    entries = [f if isinstance(f, ManifestFile) else describe(root, f) for f in files]
    for entry in entries:
        check_relative(entry.path)
    entries.sort(key=lambda e: e.path)
    stamp = created_at if isinstance(created_at, str) else format_created_at(created_at)
    manifest = Manifest(
        format=FORMAT,
        schema_version=schema_version,
        created_at=stamp,
        files=tuple(entries),
        bytes=sum(e.size for e in entries),
    )
    target = root / MANIFEST_NAME
    temp = root / f".{MANIFEST_NAME}.tmp"
    with temp.open("w", encoding="utf-8") as handle:
        json.dump(manifest.to_json(), handle, indent=1)
        handle.write("\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temp, target)
    return manifest


def read_manifest(root: Path) -> Manifest:
    """Parse `root/manifest.json`; `ManifestError` names what is missing or garbled."""
    target = root / MANIFEST_NAME
    try:
        raw = target.read_bytes()
    except FileNotFoundError:
        raise ManifestError(f"{target}: no manifest (not a backup, or a pre-migration copy)") from None
    except OSError as exc:
        raise ManifestError(f"{target}: cannot be read: {exc.strerror}") from None
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ManifestError(f"{target}: garbled: not JSON ({exc})") from None
    try:
        return _parse(data)
    except ManifestError as exc:
        raise ManifestError(f"{target}: garbled: {exc}") from None


def verify_manifest(root: Path) -> list[Problem]:
    """Every way the files under `root` differ from its manifest (empty: they match).

    Raises `ManifestError` when the manifest itself is missing or garbled. Symlinks are never
    followed: a listed path that is a symlink or not a regular file is a problem.
    """
    manifest = read_manifest(root)
    problems = [p for entry in manifest.files if (p := _check_entry(root, entry)) is not None]
    listed = {entry.path for entry in manifest.files}
    for relative in sorted(_files_under(root)):
        if relative not in listed and relative != MANIFEST_NAME:
            problems.append(Problem(relative, "extra", "not listed in the manifest"))
    return problems


def check_relative(relative: str) -> None:
    """Refuse a path that could leave the root or is spelled two ways."""
    pure = PurePosixPath(relative)
    if (
        not relative
        or "\\" in relative
        or "\x00" in relative
        or pure.is_absolute()
        or any(part in ("", ".", "..") for part in relative.split("/"))
    ):
        raise ManifestError(f"path {relative!r} is not a plain relative POSIX path")


def _check_entry(root: Path, entry: ManifestFile) -> Problem | None:
    path = root / entry.path
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return Problem(entry.path, "missing", "missing")
    except NotADirectoryError:
        return Problem(entry.path, "missing", "missing (a parent is not a directory)")
    if not stat.S_ISREG(mode):
        return Problem(entry.path, "not_a_file", "not a regular file (a symlink or a directory)")
    size, sha = file_digest(path)
    if size != entry.size:
        return Problem(entry.path, "size", f"size differs: manifest {entry.size}, on disk {size}")
    if sha != entry.sha256:
        return Problem(entry.path, "digest", "SHA-256 differs from the manifest")
    return None


def _files_under(root: Path) -> Iterable[str]:
    """Every non-directory under `root` as a relative POSIX path, without following symlinks."""
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        base = Path(dirpath).relative_to(root)
        # A symlinked directory shows up in dirnames; report it as an entry, never walk into it.
        for name in [*filenames, *(d for d in dirnames if (Path(dirpath) / d).is_symlink())]:
            yield (base / name).as_posix()


def _parse(data: object) -> Manifest:
    if not isinstance(data, dict):
        raise ManifestError("the top level is not an object")
    if data.get("format") != FORMAT:
        raise ManifestError(f"format {data.get('format')!r} is not {FORMAT}")
    schema_version = _int(data, "schema_version")
    created_at = data.get("created_at")
    if not isinstance(created_at, str) or not created_at:
        raise ManifestError("created_at is not a timestamp")
    raw_files = data.get("files")
    if not isinstance(raw_files, list):
        raise ManifestError("files is not a list")
    files = tuple(_parse_file(item) for item in raw_files)
    if len({f.path for f in files}) != len(files):
        raise ManifestError("a path is listed twice")
    total = _int(data, "bytes")
    if total != sum(f.size for f in files):
        raise ManifestError("bytes is not the sum of the files' sizes")
    return Manifest(FORMAT, schema_version, created_at, files, total)


def _parse_file(item: object) -> ManifestFile:
    if not isinstance(item, dict):
        raise ManifestError("a files entry is not an object")
    path = item.get("path")
    if not isinstance(path, str):
        raise ManifestError("a files entry has no path")
    check_relative(path)
    sha = item.get("sha256")
    if not isinstance(sha, str) or len(sha) != 64 or any(c not in "0123456789abcdef" for c in sha):
        raise ManifestError(f"{path}: sha256 is not 64 lowercase hex digits")
    return ManifestFile(path=path, size=_int(item, "size"), sha256=sha)


def _int(data: dict[str, Any], key: str) -> int:
    value = data.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ManifestError(f"{key} is not a non-negative integer")
    return value
