"""Schemathesis hooks for tests/adversarial/test_openapi_fuzz.py (loaded by the CLI through
`SCHEMATHESIS_HOOKS`): a check that a refused request left hub.db as it was.

The run is one worker, so the fingerprint taken before the latest call is the one before the
response being checked. `HUB_FUZZ_DB` names the hub's database (opened read-only).
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from pathlib import Path
from typing import Any

import schemathesis

_before: dict[str, str] = {}


def fingerprint(db: Path) -> str:
    """Every row of every table of hub.db but the search index's, read through a read-only connection.

    The index (`search_*`) is derived from the other tables by a background pass that follows each
    write after its reply (issue 28 part 5), so an earlier accepted write's pass may land while a
    refusal is being answered; what a refusal could write itself shows in the source tables."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        digest = hashlib.sha256()
        names = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        tables = [name for (name,) in names if not name.startswith("search_")]
        for table in tables:
            for row in conn.execute(f'SELECT * FROM "{table}" ORDER BY 1'):
                digest.update(repr(row).encode())
        return digest.hexdigest()
    finally:
        conn.close()


def _db() -> Path:
    return Path(os.environ["HUB_FUZZ_DB"])


@schemathesis.hook
def before_call(ctx: Any, case: Any, **kwargs: Any) -> None:
    _before["db"] = fingerprint(_db())


@schemathesis.check
def refusal_writes_nothing(ctx: Any, response: Any, case: Any) -> bool | None:
    """A request the hub refused (any 4xx) changed nothing it stores."""
    if not 400 <= response.status_code < 500 or "db" not in _before:
        return None
    if fingerprint(_db()) != _before["db"]:
        raise AssertionError(f"refused with {response.status_code}, yet hub.db changed")
    return True
