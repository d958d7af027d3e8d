"""Schemathesis hooks for tests/adversarial/test_openapi_fuzz.py (loaded by the CLI through
`SCHEMATHESIS_HOOKS`): a check that a refused request left hub.db as it was.

The run is one worker, so the fingerprint taken before the latest call is the one before the
response being checked. `HUB_FUZZ_DB` names the hub's database (opened read-only).

Reading every row of hub.db twice a request was a fifth of the run's CPU, and grew with the
database. SQLite says, through `PRAGMA data_version` on a connection kept open, whether any other
connection has committed since the connection last asked: when none has, the rows are the ones last
read, and their fingerprint is reused; when one has, every row is read again. The verdict is the one
reading every row every time would give.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import sqlite3
from pathlib import Path
from typing import Any

import schemathesis

_before: dict[str, str] = {}


def fingerprint(conn: sqlite3.Connection) -> str:
    """Every row of every table of hub.db but the search index's.

    The index (`search_*`) is derived from the other tables by a background pass that follows each
    write after its reply (issue 28 part 5), so an earlier accepted write's pass may land while a
    refusal is being answered; what a refusal could write itself shows in the source tables."""
    digest = hashlib.sha256()
    names = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
    tables = [name for (name,) in names if not name.startswith("search_")]
    for table in tables:
        for row in conn.execute(f'SELECT * FROM "{table}" ORDER BY 1'):
            digest.update(repr(row).encode())
    return digest.hexdigest()


class Watch:
    """A read-only connection to hub.db and the fingerprint of the rows it last read."""

    def __init__(self, db: Path) -> None:
        self.conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, isolation_level=None, check_same_thread=False)
        atexit.register(self.conn.close)
        self.version: int | None = None
        self.print = ""

    def data_version(self) -> int:
        return int(self.conn.execute("PRAGMA data_version").fetchone()[0])

    def current(self) -> str:
        """The fingerprint of hub.db as it is now: read again only when a commit has landed."""
        version = self.data_version()
        while version != self.version:
            found = fingerprint(self.conn)
            after = self.data_version()
            if after == version:  # no commit while reading: the rows read are the ones of `version`
                self.version, self.print = version, found
            version = after
        return self.print


_watch: list[Watch] = []


def _current() -> str:
    if not _watch:
        _watch.append(Watch(Path(os.environ["HUB_FUZZ_DB"])))
    return _watch[0].current()


@schemathesis.hook
def before_call(ctx: Any, case: Any, **kwargs: Any) -> None:
    _before["db"] = _current()


@schemathesis.check
def refusal_writes_nothing(ctx: Any, response: Any, case: Any) -> bool | None:
    """A request the hub refused (any 4xx) changed nothing it stores."""
    if not 400 <= response.status_code < 500 or "db" not in _before:
        return None
    if _current() != _before["db"]:
        raise AssertionError(f"refused with {response.status_code}, yet hub.db changed")
    return True
