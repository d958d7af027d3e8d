"""hub.db migrations: forward only, one transaction each, copies before, newer stores refused."""

from __future__ import annotations

import functools
import sqlite3
from pathlib import Path

import pytest

from hubcore.config import HubSettings
from hubcore.errors import HubError
from hubcore.hub import Hub, hub_migrations, supported_version
from hubcore.store import migrations as store_migrations
from hubcore.store.migrations import Migration, StoreTooNew, read_version, statements

MIGRATIONS = hub_migrations()  # hub.db's chain, gathered from the parts
migrate = functools.partial(store_migrations.migrate, migrations=MIGRATIONS)

NOW = 1_800_000_000.0


def version_of(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return read_version(conn)


def test_fresh_store_reaches_the_newest_version_without_a_copy(tmp_path: Path) -> None:
    db = tmp_path / "hub.db"
    assert migrate(db, now=NOW) == supported_version()
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT version FROM schema_migrations ORDER BY version").fetchall()
    assert [r[0] for r in rows] == [m.version for m in MIGRATIONS]
    assert not (tmp_path / "backups").exists()


def test_migrating_an_existing_store_copies_it_first(tmp_path: Path) -> None:
    db = tmp_path / "hub.db"
    migrate(db, now=NOW)
    with sqlite3.connect(db) as conn:
        conn.execute("INSERT INTO hub_meta (key, value) VALUES ('marker', 'before')")
    extra = (*MIGRATIONS, Migration(supported_version() + 1, "extra", statements("CREATE TABLE extra (x)")))
    assert migrate(db, now=NOW + 1, migrations=extra) == supported_version() + 1
    copies = list((tmp_path / "backups").glob("pre-migration-v*.db"))
    assert len(copies) == 1 and copies[0].name.startswith(f"pre-migration-v{supported_version()}-")
    with sqlite3.connect(copies[0]) as conn:
        assert read_version(conn) == supported_version()
        assert conn.execute("SELECT value FROM hub_meta WHERE key = 'marker'").fetchone()[0] == "before"


def test_only_the_three_newest_copies_are_kept(tmp_path: Path) -> None:
    db = tmp_path / "hub.db"
    migrations = list(MIGRATIONS)
    migrate(db, now=NOW, migrations=migrations)
    for i in range(5):
        v = supported_version() + 1 + i
        migrations.append(Migration(v, f"m{v}", statements(f"CREATE TABLE t{v} (x)")))
        migrate(db, now=NOW + i + 1, migrations=migrations)
    # By version number: v10 sorts before v8 as text.
    copies = sorted(
        (p.name for p in (tmp_path / "backups").glob("pre-migration-v*.db")),
        key=lambda name: int(name.split("-")[2][1:]),
    )
    base = supported_version()
    assert [c.split("-")[2] for c in copies] == [f"v{base + 2}", f"v{base + 3}", f"v{base + 4}"]


def test_a_failing_migration_leaves_the_store_at_its_version(tmp_path: Path) -> None:
    db = tmp_path / "hub.db"
    migrate(db, now=NOW)
    broken = Migration(supported_version() + 1, "broken", statements("CREATE TABLE half (x)", "THIS IS NOT SQL"))
    with pytest.raises(sqlite3.OperationalError):
        migrate(db, now=NOW, migrations=(*MIGRATIONS, broken))
    assert version_of(db) == supported_version()
    with sqlite3.connect(db) as conn:
        assert not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'half'").fetchone()


def test_a_newer_store_is_refused_naming_both_versions(tmp_path: Path) -> None:
    db = tmp_path / "hub.db"
    migrate(db, now=NOW)
    with sqlite3.connect(db) as conn:
        conn.execute("INSERT INTO schema_migrations (version, name, applied_at) VALUES (42, 'future', 0)")
    with pytest.raises(StoreTooNew) as caught:
        migrate(db, now=NOW)
    assert "42" in str(caught.value) and str(supported_version()) in str(caught.value)
    assert version_of(db) == 42


@pytest.mark.anyio
async def test_hub_open_refuses_a_newer_store(settings: HubSettings) -> None:
    async with Hub.open(settings):
        pass
    db = settings.data_path / "hub.db"
    with sqlite3.connect(db) as conn:
        conn.execute("INSERT INTO schema_migrations (version, name, applied_at) VALUES (42, 'future', 0)")
    with pytest.raises(HubError) as caught:
        async with Hub.open(settings):
            pass
    assert "42" in caught.value.message
