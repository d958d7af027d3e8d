"""hub.db's schema is declared by the parts that own its tables (issue 28 part 5): the hub gathers
their steps into one chain by version, and the chain makes exactly the schema the single list of
migrations made before (`schema_v15.json`: that path's `sqlite_master`, taken before the split),
so a data directory at the current version opens unchanged. Steps after the split (16: the
replay rows staged, the sessions part's) add to that schema and change nothing of it."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from hubcore.config import HubSettings
from hubcore.hub import PART_TYPES, Hub, hub_migrations, supported_version
from hubcore.ops.layout import key_files, part_files
from hubcore.parts.protocol import Part
from hubcore.store.migrations import Migration, chain, migrate, statements
from tests.harness import HubClient

pytestmark = pytest.mark.anyio

NOW = 1_800_000_000.0
BEFORE_THE_SPLIT = json.loads((Path(__file__).parent / "schema_v15.json").read_text())
# What each step after the split adds to `sqlite_master`: (type, name) in order.
# (16's AUTOINCREMENT makes SQLite's own `sqlite_sequence`, the first of hub.db's.)
AFTER_THE_SPLIT = {
    16: [("table", "call_staging"), ("table", "sqlite_sequence"), ("index", "call_staging_by_session")],
}


def schema_of(db: Path) -> dict[str, Any]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return {
            "version": int(conn.execute("SELECT MAX(version) FROM schema_migrations").fetchone()[0]),
            "sqlite_master": [
                list(r) for r in conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY rowid")
            ],
            "schema_migrations": [
                list(r) for r in conn.execute("SELECT version, name FROM schema_migrations ORDER BY version")
            ],
            "hub_meta": [list(r) for r in conn.execute("SELECT key, value FROM hub_meta ORDER BY key")],
            "search_fts_config": [list(r) for r in conn.execute("SELECT k, v FROM search_fts_config ORDER BY k")],
        }
    finally:
        conn.close()


def test_a_fresh_hub_db_is_the_schema_the_single_list_made(tmp_path: Path) -> None:
    db = tmp_path / "hub.db"
    split = BEFORE_THE_SPLIT["version"]
    assert migrate(db, now=NOW, migrations=hub_migrations()[:split]) == split
    assert schema_of(db) == BEFORE_THE_SPLIT  # every table, index, trigger and virtual table, in order
    assert migrate(db, now=NOW, migrations=hub_migrations()) == max(AFTER_THE_SPLIT) == supported_version()
    after = schema_of(db)["sqlite_master"]
    assert after[: len(BEFORE_THE_SPLIT["sqlite_master"])] == BEFORE_THE_SPLIT["sqlite_master"]
    added = [(row[0], row[1]) for row in after[len(BEFORE_THE_SPLIT["sqlite_master"]) :]]
    assert added == [entry for version in sorted(AFTER_THE_SPLIT) for entry in AFTER_THE_SPLIT[version]]


@pytest.mark.parametrize("stop", [1, 4, 7, 11, 14, 15])
def test_a_store_left_at_any_version_reaches_the_same_schema(tmp_path: Path, stop: int) -> None:
    db = tmp_path / "hub.db"
    steps = hub_migrations()
    migrate(db, now=NOW, migrations=steps[:stop])
    migrate(db, now=NOW + 1, migrations=steps)
    fresh = tmp_path / "fresh.db"
    migrate(fresh, now=NOW, migrations=steps)
    assert schema_of(db)["sqlite_master"] == schema_of(fresh)["sqlite_master"]
    assert len(list((tmp_path / "backups").glob("pre-migration-v*.db"))) == 1  # copied before the rest


async def test_a_data_directory_at_the_current_version_opens_unchanged(settings: HubSettings) -> None:
    db = settings.data_path / "hub.db"
    settings.data_path.mkdir(parents=True)
    migrate(db, now=NOW, migrations=hub_migrations())
    before = schema_of(db)
    async with Hub.open(settings) as hub:
        assert hub.schema_version == supported_version()
    assert schema_of(db) == before
    assert not (settings.data_path / "backups").exists()  # nothing was migrated, so nothing copied


def test_each_step_belongs_to_the_part_that_owns_its_tables() -> None:
    owners = {m.version: part.name for part in PART_TYPES for m in part.migrations()}
    assert owners == {
        1: "projects-and-agents",
        2: "feeds-and-inbox",
        3: "feeds-and-inbox",
        4: "sessions-and-brains",
        5: "feeds-and-inbox",
        6: "artifacts",
        7: "artifacts",
        8: "search",
        9: "search",
        10: "search",
        11: "search",
        12: "search",
        13: "artifacts",
        14: "artifacts",
        15: "push",
        16: "sessions-and-brains",
    }
    assert [m.version for m in hub_migrations()] == sorted(owners)


def test_the_chain_refuses_a_clash_or_a_gap() -> None:
    steps = list(hub_migrations())
    n = len(steps)
    with pytest.raises(ValueError, match="numbered"):
        chain([*steps, Migration(n, "clash", statements("SELECT 1"))])
    with pytest.raises(ValueError, match="numbered"):
        chain([*steps, Migration(n + 2, "gap", statements("SELECT 1"))])
    assert chain(reversed(steps)) == tuple(steps)  # the parts' order does not matter: versions do


async def test_a_new_parts_step_runs_after_the_others(tmp_path: Path) -> None:
    """A part with a table of its own declares its step with the next version; the hub's chain
    runs it after every existing step (what `hub_migrations` does with a new entry)."""

    class NotesPart(Part):
        name = "notes"

        @classmethod
        def migrations(cls) -> tuple[Migration, ...]:
            return (Migration(supported_version() + 1, "notes", statements("CREATE TABLE notes (id TEXT)")),)

    db = tmp_path / "hub.db"
    migrate(db, now=NOW, migrations=hub_migrations())
    assert migrate(db, now=NOW + 1, migrations=hub_migrations((*PART_TYPES, NotesPart))) == supported_version() + 1
    assert schema_of(db)["sqlite_master"][-1][:2] == ["table", "notes"]


async def test_the_hubs_parts_are_its_part_types_and_bring_their_files(client: HubClient) -> None:
    hub = client.app.hub
    assert tuple(type(p) for p in hub.parts) == PART_TYPES
    data = hub.settings.data_path
    assert [type(p).files(data) for p in hub.parts] == [p.files(data) for p in hub.parts]
    # What the ops tools read offline: each part's declared store directories, in part order.
    assert part_files(data) == [*sorted((data / "brains").glob("*.db")), *sorted((data / "kb").glob("*.db"))]
    assert {p.name for p in hub.parts if p.file_stores} == {"sessions-and-brains", "knowledge-base"}
    assert key_files(data) == [data / "push" / "keys.json"]  # the push part's, made at its first start
