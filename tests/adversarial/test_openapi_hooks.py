"""The fuzz run's own check (`openapi_hooks.py`): a refusal that changed a row of hub.db fails, one
that changed nothing (or only the search index) passes, and the rows are read again exactly when
another connection has committed, never from a fingerprint older than the last commit."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.adversarial import openapi_hooks
from tests.adversarial.openapi_hooks import Watch, before_call, fingerprint, refusal_writes_nothing


@pytest.fixture
def db(tmp_path: Path) -> Iterator[tuple[Path, sqlite3.Connection]]:
    """A WAL database like hub.db, with a writer connection standing for the hub."""
    path = tmp_path / "hub.db"
    hub = sqlite3.connect(path, isolation_level=None)
    hub.execute("PRAGMA journal_mode=WAL")
    hub.execute("CREATE TABLE projects (id TEXT PRIMARY KEY, name TEXT)")
    hub.execute("CREATE TABLE search_docs (id TEXT, body TEXT)")
    hub.execute("INSERT INTO projects VALUES ('demo', 'Demo')")
    try:
        yield path, hub
    finally:
        hub.close()


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many times every row was read."""
    counted: list[int] = []
    real = openapi_hooks.fingerprint

    def counting(conn: sqlite3.Connection) -> str:
        counted.append(1)
        return real(conn)

    monkeypatch.setattr(openapi_hooks, "fingerprint", counting)
    return counted


def test_rows_are_read_again_only_after_a_commit(db: tuple[Path, sqlite3.Connection], reads: list[int]) -> None:
    path, hub = db
    watch = Watch(path)
    try:
        first = watch.current()
        assert watch.current() == first and len(reads) == 1  # nothing committed: not read again
        hub.execute("UPDATE projects SET name = 'Other' WHERE id = 'demo'")  # a change in place
        changed = watch.current()
        assert changed != first and len(reads) == 2
        hub.execute("INSERT INTO search_docs VALUES ('a', 'b')")  # the index's pass: read, same rows
        assert watch.current() == changed and len(reads) == 3
        fresh = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            assert fingerprint(fresh) == changed  # what a connection of its own reads
        finally:
            fresh.close()
    finally:
        watch.conn.close()


def test_the_check_fails_a_refusal_that_wrote(
    db: tuple[Path, sqlite3.Connection], monkeypatch: pytest.MonkeyPatch
) -> None:
    path, hub = db
    monkeypatch.setenv("HUB_FUZZ_DB", str(path))
    monkeypatch.setattr(openapi_hooks, "_watch", [])
    monkeypatch.setattr(openapi_hooks, "_before", {})
    try:
        refused, accepted = SimpleNamespace(status_code=422), SimpleNamespace(status_code=201)
        assert refusal_writes_nothing(None, refused, None) is None  # no call seen yet
        before_call(None, None)
        hub.execute("INSERT INTO search_docs VALUES ('a', 'b')")
        assert refusal_writes_nothing(None, refused, None) is True
        before_call(None, None)
        hub.execute("INSERT INTO projects VALUES ('x', 'X')")
        assert refusal_writes_nothing(None, accepted, None) is None  # an accepted write is not checked
        with pytest.raises(AssertionError, match=r"refused with 422, yet hub\.db changed"):
            refusal_writes_nothing(None, refused, None)
    finally:
        for watch in openapi_hooks._watch:
            watch.conn.close()
