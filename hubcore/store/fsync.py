"""fsync by path: what makes a rename, a new file or a removal survive a power cut (the directory
holding it is flushed as well as the file). One place for the stores, the push keys and the
operator's backup and restore."""

from __future__ import annotations

import os
from pathlib import Path


def fsync_path(path: Path) -> None:
    """Flush one file or directory to disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_dir(path: Path) -> None:
    """Flush a directory's entries (a name created, renamed or removed in it); refused (an
    OSError) when `path` is not a directory."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
