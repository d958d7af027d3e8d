"""A data directory's SQLite files seen from outside a running hub: which they are, and reading
them without writing a byte.

`check` and `doctor` read directories no hub has open (a stopped hub's, a restored one, a backup).
SQLite's own read-only mode still writes there: opening a WAL-mode file with `mode=ro` creates its
`-wal` and `-shm` sidecars when they are absent, and leaves them behind. `quiet_connection` never
does: a file with no write-ahead log holds everything in its main file and is opened `immutable`
(SQLite reads it without locks or sidecars); one with a log is opened read-only through the
existing `-shm` (the wal-index, which holds no data), or, when that is missing, from a copy of the
file and its log in a temporary directory.
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

HUB_DB = "hub.db"


def relative(root: Path, path: Path) -> str:
    """`path` as the directory's own POSIX name for it (what a problem line names)."""
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def _uri(path: Path, params: str) -> str:
    return f"file:{quote(str(path.resolve()))}?{params}"


def _has_log(path: Path) -> bool:
    try:
        return Path(f"{path}-wal").stat().st_size > 0
    except FileNotFoundError:
        return False


@contextmanager
def _connected(uri: str) -> Iterator[sqlite3.Connection]:
    conn = sqlite3.connect(uri, uri=True, isolation_level=None)
    try:
        yield conn
    finally:
        conn.close()


@contextmanager
def quiet_connection(path: Path) -> Iterator[sqlite3.Connection]:
    """A read-only connection to the SQLite file at `path` that writes nothing beside it (see the
    module docstring). Raises `sqlite3.Error` for a file SQLite cannot read."""
    if not path.is_file():
        raise sqlite3.OperationalError(f"{path.name} is missing")
    if not _has_log(path):
        with _connected(_uri(path, "mode=ro&immutable=1")) as conn:
            yield conn
    elif Path(f"{path}-shm").is_file():
        with _connected(_uri(path, "mode=ro")) as conn:
            yield conn
    else:
        with tempfile.TemporaryDirectory(prefix="hub-check-") as scratch:
            copy = Path(scratch) / path.name
            shutil.copyfile(path, copy)
            shutil.copyfile(f"{path}-wal", f"{copy}-wal")
            with _connected(_uri(copy, "mode=ro")) as conn:
                yield conn


def has_table(conn: sqlite3.Connection, name: str) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)).fetchone() is not None


def is_digest(value: object) -> bool:
    """Whether `value` names a blob (64 lowercase hex digits): what a row says is never a path before this."""
    return isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value)
