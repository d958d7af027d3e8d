"""`check` on real data directories and backups, written through the services, closed, then
damaged: each damage caught with a line naming the file and what is wrong."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from hubcore.caller import Caller
from hubcore.clock import FakeClock
from hubcore.hub import Hub, lock_data_dir, supported_version
from hubcore.ops.backup import offline_backup
from hubcore.ops.check import check
from hubcore.ops.datadir import OpsRefused
from hubcore.ops.layout import part_files
from hubcore.ops.stores import quiet_connection
from hubcore.services.requests import parse
from hubcore.services.search.models import SearchRequest
from tests.backup.support import tree
from tests.ops.support import Made, make_hub_dir, problem_lines, readings

pytestmark = pytest.mark.anyio


@pytest.fixture
async def made(tmp_path: Path) -> Made:
    return await make_hub_dir(tmp_path / "data")


def backup_of(made: Made, parent: Path) -> Path:
    parent.mkdir()
    result = offline_backup(made.root, parent, moment=datetime(2026, 11, 27, 9, 0, tzinfo=UTC))
    return result.path


async def test_a_sound_directory_passes_and_a_second_check_finds_the_index_matching(made: Made) -> None:
    first = await check(made.root, made.settings)
    assert problem_lines(first) == []
    assert readings(first)["stores"] == "3 SQLite files passed the integrity check"
    assert readings(first)["search index"].startswith("matches its ")


async def test_a_truncated_brain_file_is_named(made: Made) -> None:
    size = made.brain.stat().st_size
    with made.brain.open("r+b") as handle:
        handle.truncate(size // 2)
    lines = problem_lines(await check(made.root, made.settings))
    assert lines == [
        f"brains/{made.session_id}.db: integrity check failed: SQLite cannot read it (database disk image is malformed)"
    ]


async def test_a_deleted_blob_is_named_with_its_artifact(made: Made) -> None:
    made.blob_path.unlink()
    lines = problem_lines(await check(made.root, made.settings))
    assert lines == [f"blobs/{made.blob[:2]}/{made.blob}: missing (artifact {made.artifact_id} version 1)"]


async def test_a_blob_whose_bytes_changed_is_named(made: Made) -> None:
    data = made.blob_path.read_bytes()
    made.blob_path.write_bytes(data[:-1] + b"!")  # same size, other content
    lines = problem_lines(await check(made.root, made.settings))
    assert lines == [
        f"blobs/{made.blob[:2]}/{made.blob}: content differs from its SHA-256 name "
        f"(artifact {made.artifact_id} version 1)"
    ]
    made.blob_path.write_bytes(data + b"more")
    lines = problem_lines(await check(made.root, made.settings))
    assert lines == [
        f"blobs/{made.blob[:2]}/{made.blob}: size differs: {len(data) + 4} bytes on disk, "
        f"{len(data)} recorded (artifact {made.artifact_id} version 1)"
    ]


async def test_a_flipped_byte_in_hub_db_is_named(made: Made) -> None:
    db = made.root / "hub.db"
    data = bytearray(db.read_bytes())
    data[4096] ^= 0xFF  # page 2's b-tree page type
    db.write_bytes(bytes(data))
    findings = await check(made.root, made.settings)
    assert problem_lines(findings) == [
        "hub.db: integrity check failed: SQLite cannot read it (database disk image is malformed)"
    ]
    # A damaged store is not rebuilt over: its index rows may be the last trace of what it held.
    assert readings(findings)["search index"].startswith("not compared or rebuilt")


async def test_a_missing_knowledge_file_is_named_from_the_feed(tmp_path: Path) -> None:
    made = await make_hub_dir(tmp_path / "data", searched=False)  # not in the search index either
    made.kb.unlink()
    lines = problem_lines(await check(made.root, made.settings))
    assert lines == [
        "kb/web.db: missing: project web's knowledge base file is gone (its feed records knowledge base writes)"
    ]


async def test_a_missing_brain_file_the_index_holds_is_named(made: Made) -> None:
    made.brain.unlink()
    lines = problem_lines(await check(made.root, made.settings))
    assert lines == [
        f"brains/{made.session_id}.db: missing: session {made.session_id}'s brain file is gone "
        "(the search index holds its entries)"
    ]


async def test_a_manifest_digest_that_does_not_match_is_named(made: Made, tmp_path: Path) -> None:
    backup = backup_of(made, tmp_path / "backups")
    assert problem_lines(await check(backup, made.settings)) == []
    blob = backup / "blobs" / made.blob[:2] / made.blob
    data = blob.read_bytes()
    blob.write_bytes(data[:-1] + b"!")
    lines = problem_lines(await check(backup, made.settings))
    name = f"blobs/{made.blob[:2]}/{made.blob}"
    assert lines == [
        f"{name}: SHA-256 differs from the manifest",
        f"{name}: content differs from its SHA-256 name (artifact {made.artifact_id} version 1)",
    ]


async def test_a_missing_knowledge_file_in_a_backup_is_named_by_the_manifest(made: Made, tmp_path: Path) -> None:
    backup = backup_of(made, tmp_path / "backups")
    (backup / "kb" / "web.db").unlink()
    lines = problem_lines(await check(backup, made.settings))
    assert lines[0] == "kb/web.db: missing"
    assert (
        "kb/web.db: missing: project web's knowledge base file is gone (its feed records knowledge base writes)"
        in lines
    )


async def test_a_backup_is_checked_without_a_byte_written(made: Made, tmp_path: Path) -> None:
    backup = backup_of(made, tmp_path / "backups")
    before = tree(backup)
    findings = await check(backup, made.settings)
    assert problem_lines(findings) == []
    assert readings(findings)["search index"] == "not compared: a backup is checked without writing to it"
    assert tree(backup) == before


async def test_a_garbled_manifest_is_a_problem(made: Made, tmp_path: Path) -> None:
    backup = backup_of(made, tmp_path / "backups")
    (backup / "manifest.json").write_text("{not json", encoding="utf-8")
    lines = problem_lines(await check(backup, made.settings))
    assert len(lines) == 1 and lines[0].startswith("manifest.json: ") and "garbled" in lines[0]


async def test_refused_while_a_hub_holds_the_directory_with_nothing_written(made: Made) -> None:
    before = tree(made.root)
    lock = lock_data_dir(made.root)
    try:
        after_lock = tree(made.root)
        with pytest.raises(OpsRefused, match="held by a running hub"):
            await check(made.root, made.settings)
        assert tree(made.root) == after_lock
    finally:
        lock.close()
    assert set(before) == set(after_lock)


def marks(root: Path) -> dict[str, str]:
    with quiet_connection(root / "hub.db") as conn:
        return {str(s): str(m) for s, m in conn.execute("SELECT source, mark FROM search_marks")}


async def test_search_drift_is_reported_and_the_index_rebuilt(made: Made) -> None:
    indexed = marks(made.root)
    assert indexed  # the populating search indexed every source
    conn = sqlite3.connect(made.root / "hub.db")
    conn.execute("DELETE FROM search_marks WHERE source LIKE 'kb:%'")
    conn.execute("UPDATE search_marks SET mark = 'stale' WHERE source = 'feed'")
    conn.execute("INSERT INTO search_marks (source, mark) VALUES ('brain:ses_gone', 'x')")
    conn.commit()
    conn.close()
    findings = await check(made.root, made.settings)
    assert problem_lines(findings) == []
    said = readings(findings)["search index"]
    assert said.startswith(
        "differed from its sources (2 behind or never indexed: feed, kb:web; "
        "1 indexed but gone: brain:ses_gone); rebuilt from the "
    )
    assert marks(made.root) == indexed
    async with Hub.open(made.settings, clock=FakeClock()) as hub:
        found = await hub.search.search(Caller.admin(), parse(SearchRequest, {"q": "Web"}))
    assert found["count"] >= 1
    again = await check(made.root, made.settings)
    assert readings(again)["search index"].startswith("matches its ")


async def test_a_store_older_than_the_binary_is_checked_but_its_index_left_alone(made: Made) -> None:
    conn = sqlite3.connect(made.root / "hub.db")
    conn.execute("DELETE FROM schema_migrations WHERE version = ?", (supported_version(),))
    conn.commit()
    conn.close()
    findings = await check(made.root, made.settings)
    assert problem_lines(findings) == []
    assert "start the hub once" in readings(findings)["search index"]


async def test_no_such_directory(tmp_path: Path, made: Made) -> None:
    missing = tmp_path / "nope"
    assert problem_lines(await check(missing, made.settings)) == [f"{missing}: no such directory"]
    assert not missing.exists()


async def test_the_store_files_are_the_parts_own(made: Made) -> None:
    async with Hub.open(made.settings, clock=FakeClock()) as hub:
        assert hub.engine_files()[1:] == part_files(made.root)


async def test_a_restored_directory_is_checked_but_not_opened_before_its_first_start(
    made: Made, tmp_path: Path
) -> None:
    from hubcore.ops.restore import restore

    backup = backup_of(made, tmp_path / "backups")
    target = tmp_path / "restored"
    restore(backup, target, force=False, supported_version=supported_version())
    before = tree(target)
    findings = await check(target, made.settings)
    assert problem_lines(findings) == []
    assert readings(findings)["search index"].startswith("not compared: the directory was restored")
    assert tree(target) == before


async def test_a_row_naming_no_digest_never_sends_the_check_outside_blobs(made: Made, tmp_path: Path) -> None:
    outside = tmp_path / "secret"
    outside.write_bytes(b"not the hub's")
    conn = sqlite3.connect(made.root / "hub.db")
    conn.execute("UPDATE artifact_versions SET sha256 = ?", (f"../../../{outside.name}",))
    conn.commit()
    conn.close()
    lines = problem_lines(await check(made.root, made.settings))
    assert lines == [
        f"hub.db: artifact {made.artifact_id} version 1 names its blob by '../../../secret', not a SHA-256 digest"
    ]


async def test_a_file_is_not_a_directory(made: Made) -> None:
    assert problem_lines(await check(made.blob_path, made.settings)) == [f"{made.blob_path}: not a directory"]


async def test_a_damaged_payload_does_not_hide_a_missing_knowledge_file(tmp_path: Path) -> None:
    made = await make_hub_dir(tmp_path / "data", searched=False)
    conn = sqlite3.connect(made.root / "hub.db")
    conn.execute("UPDATE events SET payload = '{not json' WHERE rowid = (SELECT MIN(rowid) FROM events)")
    conn.commit()
    conn.close()
    made.kb.unlink()
    lines = problem_lines(await check(made.root, made.settings))
    assert lines == [
        "kb/web.db: missing: project web's knowledge base file is gone (its feed records knowledge base writes)"
    ]
