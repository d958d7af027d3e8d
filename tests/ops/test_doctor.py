"""`doctor`: a read-only report; every problem named; not a byte written (a digest of every file
before and after each run), with or without a hub holding the directory."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from hubcore.clock import FakeClock
from hubcore.hub import Hub, supported_version
from hubcore.ops.doctor import doctor
from hubcore.ops.stores import quiet_connection
from hubcore.services import ids
from tests.backup.support import tree
from tests.ops.support import Made, make_hub_dir, problem_lines, readings

pytestmark = pytest.mark.anyio
NOW = 1_800_000_100.0


@pytest.fixture
async def made(tmp_path: Path) -> Made:
    return await make_hub_dir(tmp_path / "data")


def run(made: Made, *, margin: int = 0) -> list[str]:
    """Doctor's problem lines, checking that it wrote nothing."""
    before = tree(made.root)
    findings = doctor(made.root, min_free_bytes=margin, now=NOW)
    assert tree(made.root) == before
    return problem_lines(findings)


def sql(path: Path, statement: str, *args: object) -> None:
    conn = sqlite3.connect(path)
    conn.execute(statement, args)
    conn.commit()
    conn.close()


async def test_a_sound_directory_reads_clean(made: Made) -> None:
    before = tree(made.root)
    findings = doctor(made.root, min_free_bytes=0, now=NOW)
    assert tree(made.root) == before
    assert problem_lines(findings) == []
    said = readings(findings)
    assert said["hub"] == "no hub holds the directory"
    assert said["directory"].startswith(f"{made.root} (device ")
    assert said["schema"] == f"hub.db v{supported_version()}, this binary v{supported_version()}"
    assert said["blobs"] == "1 referenced by artifact versions, all present"
    assert said["store files"] == "1 brain files, 1 knowledge base files"
    assert said["free space"].endswith("bytes free (margin 0)")
    assert said["write-ahead logs"].startswith("hub.db-wal 0 bytes;")
    with quiet_connection(made.root / "hub.db") as conn:
        mark = ids.high_water(conn)
        newest = conn.execute("SELECT MAX(id) FROM events").fetchone()[0]
    assert said["id high-water mark"].startswith(f"{mark} ms (") and newest in said["id high-water mark"]


async def test_a_missing_blob_is_named(made: Made) -> None:
    made.blob_path.unlink()
    assert run(made) == [f"blobs/{made.blob[:2]}/{made.blob}: missing (artifact {made.artifact_id} version 1)"]


async def test_free_space_at_or_below_the_margin(made: Made) -> None:
    lines = run(made, margin=1 << 62)
    assert len(lines) == 1 and lines[0].startswith("free space: ")
    assert lines[0].endswith(f"at or below the {1 << 62}-byte margin (min_free_bytes)")


async def test_a_store_newer_than_the_binary(made: Made) -> None:
    sql(made.root / "hub.db", "INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'future', 0)")
    assert run(made) == [
        f"schema: hub.db is at v999, newer than this binary supports (v{supported_version()}): run a newer agent-hub"
    ]


async def test_an_older_store_is_a_reading_not_a_problem(made: Made) -> None:
    sql(made.root / "hub.db", "DELETE FROM schema_migrations WHERE version = ?", supported_version())
    assert run(made) == []
    said = readings(doctor(made.root, min_free_bytes=0, now=NOW))
    assert "the next start migrates it" in said["schema"]


async def test_a_brain_file_newer_than_the_binary(made: Made) -> None:
    sql(made.brain, "PRAGMA user_version = 99")
    assert run(made) == [f"brains/{made.session_id}.db: schema v99 is newer than this binary supports (v2)"]


async def test_a_high_water_mark_behind_the_newest_event(made: Made) -> None:
    sql(made.root / "hub.db", "UPDATE hub_meta SET value = '5' WHERE key = ?", ids.MARK_KEY)
    lines = run(made)
    assert len(lines) == 1 and lines[0].startswith(
        "id high-water mark: 5 ms (1970-01-01T00:00:00.005Z) is behind the newest event id "
    )


async def test_not_a_hub_store(made: Made) -> None:
    sql(made.root / "hub.db", "UPDATE hub_meta SET value = 'other' WHERE key = 'store_kind'")
    assert run(made) == ["hub.db: does not hold a hub store (store kind differs)"]


async def test_hub_db_missing_or_unreadable(made: Made) -> None:
    (made.root / "hub.db").write_bytes(b"not a database at all" * 300)
    lines = run(made)
    assert lines == ["hub.db: cannot be read as a SQLite database (file is not a database)"]
    (made.root / "hub.db").unlink()
    assert run(made) == ["hub.db: missing: not a hub data directory, or its store is gone"]


async def test_no_such_directory(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    assert problem_lines(doctor(missing, min_free_bytes=0, now=NOW)) == [f"{missing}: no such directory"]
    assert not missing.exists()


async def test_reads_a_directory_a_running_hub_holds(made: Made) -> None:
    async with Hub.open(made.settings, clock=FakeClock()):
        findings = doctor(made.root, min_free_bytes=0, now=NOW)
    assert problem_lines(findings) == []
    assert readings(findings)["hub"].startswith("a running hub holds the directory (pid ")


async def test_a_log_left_by_a_crash_is_read_from_a_copy(tmp_path: Path) -> None:
    """A file whose write-ahead log holds commits and has no -shm beside it (a crash, a copied
    directory): read as it stands, and still not a byte created beside it."""
    live = tmp_path / "live"
    live.mkdir()
    writer = sqlite3.connect(live / "a.db")
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute("PRAGMA wal_autocheckpoint=0")
    writer.execute("CREATE TABLE t (x)")
    writer.execute("INSERT INTO t VALUES (42)")
    writer.commit()
    crashed = tmp_path / "crashed"
    crashed.mkdir()
    shutil.copyfile(live / "a.db", crashed / "a.db")
    shutil.copyfile(live / "a.db-wal", crashed / "a.db-wal")
    writer.close()
    before = tree(crashed)
    with quiet_connection(crashed / "a.db") as conn:
        assert conn.execute("SELECT x FROM t").fetchall() == [(42,)]
    assert tree(crashed) == before


async def test_a_row_naming_no_digest_is_a_missing_blob(made: Made) -> None:
    sql(made.root / "hub.db", "UPDATE artifact_versions SET sha256 = '../../x'")
    assert run(made) == [f"blob '../../x': missing (artifact {made.artifact_id} version 1)"]


async def test_a_restored_directory_says_so(made: Made, tmp_path: Path) -> None:
    from datetime import UTC, datetime

    from hubcore.ops.backup import offline_backup
    from hubcore.ops.restore import restore

    (tmp_path / "backups").mkdir()
    backup = offline_backup(made.root, tmp_path / "backups", moment=datetime(2026, 11, 27, tzinfo=UTC)).path
    restore(backup, tmp_path / "restored", force=False, supported_version=supported_version())
    before = tree(tmp_path / "restored")
    findings = doctor(tmp_path / "restored", min_free_bytes=0, now=NOW)
    assert tree(tmp_path / "restored") == before
    assert problem_lines(findings) == []
    assert readings(findings)["restored"].startswith("a restore put this directory in place")
    assert "restored" not in readings(doctor(made.root, min_free_bytes=0, now=NOW))
