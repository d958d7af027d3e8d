"""The hub store's schema machinery: forward-only migrations in one linear chain per file.

hub.db's steps belong to the parts whose tables they make (`Part.migrations`, each in its
feature's `schema` module); the hub gathers them into one chain (`chain`, in
`hubcore.hub.hub_migrations`), ordered by version, and runs it here. The versions are the file's:
one number per step across every part, so a store is at one version whichever part a step came
from, and existing data directories keep theirs.

Each migration runs in one transaction that also records its version in `schema_migrations`, so a
store is always at exactly one version. Before any migration of an existing store the file is
copied (through SQLite's backup API, so the copy is consistent) to
`backups/pre-migration-v<from>-<timestamp>.db`; the three newest copies are kept. A store newer than
this binary is refused, naming both versions.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from hubcore.errors import HubError
from hubcore.store.connection import connect

log = logging.getLogger("hubcore.migrations")

KEEP_PRE_MIGRATION_COPIES = 3
STORE_KIND = "agent-hub"


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    apply: Callable[[sqlite3.Connection], None]


def statements(*sql: str) -> Callable[[sqlite3.Connection], None]:
    """A migration body made of plain statements (executescript would commit mid-migration)."""

    def apply(conn: sqlite3.Connection) -> None:
        for stmt in sql:
            conn.execute(stmt)

    return apply


class StoreTooNew(HubError):
    def __init__(self, found: int, supported: int) -> None:
        super().__init__(
            "unavailable",
            f"hub.db is at schema version {found}, newer than this binary supports ({supported}); "
            "run a newer agent-hub",
            details={"found": found, "supported": supported},
        )
        self.found, self.supported = found, supported


def chain(steps: Iterable[Migration]) -> tuple[Migration, ...]:
    """Steps from every part as one chain in version order. The versions must run 1, 2, ... with
    none twice and none missing: a gap or a clash is a programming error, refused at start."""
    ordered = tuple(sorted(steps, key=lambda m: m.version))
    versions = [m.version for m in ordered]
    if versions != list(range(1, len(ordered) + 1)):
        raise ValueError(f"hub.db's migrations must be numbered 1..{len(ordered)} once each; got {versions}")
    return ordered


def supported_version(migrations: Sequence[Migration]) -> int:
    return migrations[-1].version if migrations else 0


def read_version(conn: sqlite3.Connection) -> int:
    """The store's schema version; 0 for an empty file."""
    has_table = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
    ).fetchone()
    if not has_table:
        return 0
    row = conn.execute("SELECT MAX(version) FROM schema_migrations").fetchone()
    return int(row[0] or 0)


def _copy_before(conn: sqlite3.Connection, path: Path, version: int, now: float) -> Path:
    backups = path.parent / "backups"
    backups.mkdir(exist_ok=True)
    stamp = datetime.fromtimestamp(now, tz=UTC).strftime("%Y%m%dT%H%M%S%fZ")
    target = backups / f"pre-migration-v{version}-{stamp}.db"
    dest = sqlite3.connect(target)
    try:
        conn.backup(dest)
    finally:
        dest.close()
    copies = sorted(backups.glob("pre-migration-v*-*.db"), key=lambda p: p.stat().st_mtime_ns)
    for old in copies[:-KEEP_PRE_MIGRATION_COPIES]:
        old.unlink(missing_ok=True)
    log.info("copied hub.db at schema v%d to %s before migrating", version, target)
    return target


def migrate(
    path: Path,
    *,
    now: float,
    migrations: Sequence[Migration],
    synchronous: str = "normal",
) -> int:
    """Bring the store at `path` to the newest version; returns the version it is at after."""
    supported = supported_version(migrations)
    conn = connect(path, synchronous=synchronous)
    try:
        current = read_version(conn)
        if current > supported:
            raise StoreTooNew(current, supported)
        pending = [m for m in migrations if m.version > current]
        if pending and current > 0:
            _copy_before(conn, path, current, now)
        for migration in pending:
            conn.execute("BEGIN IMMEDIATE")
            try:
                if migration.version == 1:
                    conn.execute(
                        "CREATE TABLE IF NOT EXISTS schema_migrations "
                        "(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at REAL NOT NULL)"
                    )
                migration.apply(conn)
                conn.execute(
                    "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                    (migration.version, migration.name, now),
                )
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            log.info("migrated hub.db to schema v%d (%s)", migration.version, migration.name)
        return read_version(conn)
    finally:
        conn.close()
