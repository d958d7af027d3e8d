"""A knowledge base bundle in a folder (spec: Command line, Folder sync): the manifest, the checks
that keep every file inside the folder, and file writes that never follow a symlink.

A page `/fs/a/b.md` lives at `<folder>/a/b.md`; the manifest `.hub-kb.json` holds `format` (1),
`project` and `pages` (page path to `sha256:` version). Every file is reached component by
component from a descriptor of the folder with `O_NOFOLLOW`, so a symlink swapped in after the
checks still is not followed.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import unicodedata
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import orjson

from hubcli import exits
from hubcli.client import CliFailure

MANIFEST = ".hub-kb.json"
FORMAT = 1
PAGES_MAX = 10_000
BYTES_MAX = 256 * 1024 * 1024
ROOT = "/fs/"


def refuse(message: str) -> CliFailure:
    return CliFailure(exits.REFUSED, message)


def parts_of(page: str) -> list[str]:
    """`/fs/a/b.md` -> `["a", "b.md"]` (canonical page paths only)."""
    return page[len(ROOT) :].split("/")


def dot_named(page: str) -> bool:
    """A page with a component starting with a dot is not synced (the folder's own files are)."""
    return any(part.startswith(".") for part in parts_of(page))


def twin_key(text: str) -> str:
    """Two names a case-insensitive or normalising filesystem would confuse share this key."""
    return unicodedata.normalize("NFC", text).lower()


def find_twins(pages: Iterable[str]) -> list[tuple[str, str]]:
    """Pairs of distinct paths (pages, or the directories on their way) differing only in case or
    Unicode normalisation, in the order met."""
    seen: dict[str, str] = {}
    twins: list[tuple[str, str]] = []
    for page in pages:
        parts = parts_of(page)
        for depth in range(1, len(parts) + 1):
            name = ROOT + "/".join(parts[:depth])
            other = seen.setdefault(twin_key(name), name)
            if other != name and (other, name) not in twins:
                twins.append((other, name))
    return twins


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return path.lstat()
    except FileNotFoundError:
        return None
    except NotADirectoryError:  # a file on the way: reported by the caller's walk
        return None


def check_target(folder: Path, page: str) -> None:
    """Refuse a page whose file would leave the folder, meet a symlink or a non-directory on the
    way, or land on a directory or a symlink."""
    parts = parts_of(page)
    if any(part in ("", ".", "..") for part in parts):
        raise refuse(f"{page} would leave the folder")
    here = folder
    for i, part in enumerate(parts):
        here = here / part
        st = _lstat(here)
        if st is None:
            return  # nothing there yet: the rest is created
        last = i == len(parts) - 1
        if stat.S_ISLNK(st.st_mode):
            raise refuse(f"{page}: {here} is a symlink; symlinks are never followed")
        if last and stat.S_ISDIR(st.st_mode):
            raise refuse(f"{page}: {here} is a directory, not a page's file")
        if last and not stat.S_ISREG(st.st_mode):
            raise refuse(f"{page}: {here} is not a regular file")
        if not last and not stat.S_ISDIR(st.st_mode):
            raise refuse(f"{page}: {here} is not a directory")


def is_empty_dir(folder: Path) -> bool:
    return not any(folder.iterdir())


def check_folder(folder: Path) -> None:
    """The folder itself must be a real directory (or absent with its parent present)."""
    st = _lstat(folder)
    if st is None:
        if not folder.parent.is_dir():
            raise refuse(f"{folder.parent} is not a directory")
        return
    if stat.S_ISLNK(st.st_mode):
        raise refuse(f"{folder} is a symlink; give the directory itself")
    if not stat.S_ISDIR(st.st_mode):
        raise refuse(f"{folder} is not a directory")


@contextmanager
def folder_fd(folder: Path, *, create: bool = False) -> Iterator[int]:
    if create:
        with suppress(FileExistsError):
            folder.mkdir()
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        yield fd
    finally:
        os.close(fd)


def _enter(dir_fd: int, name: str, *, create: bool) -> int:
    if create:
        with suppress(FileExistsError):
            os.mkdir(name, 0o755, dir_fd=dir_fd)
    try:
        return os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise refuse(f"{name} is not a directory (or is a symlink); symlinks are never followed") from None
        raise


@contextmanager
def parent_fd(root_fd: int, parts: list[str], *, create: bool) -> Iterator[int]:
    """A descriptor of the directory holding `parts[-1]`, reached without following symlinks."""
    fds: list[int] = []
    try:
        fd = root_fd
        for part in parts[:-1]:
            fd = _enter(fd, part, create=create)
            fds.append(fd)
        yield fd
    finally:
        for opened in reversed(fds):
            os.close(opened)


def write_file(root_fd: int, parts: list[str], data: bytes) -> None:
    """Write `data` at `parts` under the folder, creating directories, following no symlink."""
    with parent_fd(root_fd, parts, create=True) as fd:
        try:
            out = os.open(parts[-1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644, dir_fd=fd)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.EISDIR):
                raise refuse(f"{'/'.join(parts)} is a symlink or a directory; not written") from None
            raise
        with os.fdopen(out, "wb") as fh:
            fh.write(data)


def remove_file(root_fd: int, parts: list[str]) -> bool:
    """Remove the regular file at `parts` (never through a symlink); False when it is not there."""
    try:
        with parent_fd(root_fd, parts, create=False) as fd:
            st = os.stat(parts[-1], dir_fd=fd, follow_symlinks=False)
            if not stat.S_ISREG(st.st_mode):
                raise refuse(f"{'/'.join(parts)} is not a regular file; not removed")
            os.unlink(parts[-1], dir_fd=fd)
            return True
    except FileNotFoundError:
        return False


class RepeatedKey(Exception):
    """A JSON object naming one member twice (a manifest naming a page twice)."""


def _no_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    body: dict[str, Any] = {}
    for key, value in pairs:
        if key in body:
            raise RepeatedKey(f"names {key!r} twice")
        body[key] = value
    return body


def manifest_bytes(project: str, pages: dict[str, str]) -> bytes:
    body = {"format": FORMAT, "project": project, "pages": dict(sorted(pages.items()))}
    return orjson.dumps(body, option=orjson.OPT_INDENT_2) + b"\n"


def read_manifest(folder: Path) -> dict[str, Any] | None:
    """The folder's manifest as it stands (None when there is none), checked for shape: `format`
    1, a `project` string, `pages` an object of canonical page path to version."""
    from hubcli.kb_backend import page_arg

    target = folder / MANIFEST
    st = _lstat(target)
    if st is None:
        return None
    if not stat.S_ISREG(st.st_mode):
        raise refuse(f"{target} is not a regular file (a symlink?); not read")
    fd = os.open(target, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as fh:
        raw = fh.read()
    try:
        body = json.loads(raw, object_pairs_hook=_no_repeats)
    except (ValueError, RepeatedKey) as exc:
        raise refuse(f"{target}: {exc}" if isinstance(exc, RepeatedKey) else f"{target} is not JSON") from None
    if (
        not isinstance(body, dict)
        or body.get("format") != FORMAT
        or not isinstance(body.get("project"), str)
        or not isinstance(body.get("pages"), dict)
    ):
        raise refuse(f"{target} is not a format {FORMAT} manifest (format, project, pages)")
    for page, version in body["pages"].items():
        try:
            canonical = page_arg(page)
        except CliFailure:
            canonical = None
        if canonical != page or not page.startswith(ROOT) or not isinstance(version, str):
            raise refuse(f"{target} names {page!r}, which is not a canonical page path with a version")
    return body
