"""`hub-cli backup` and `hub-cli restore`: the round trip compared file by file, every refusal
changing nothing on disk, the exit codes, and the restored directory's first start.

The commands run in this process (`tests.cli.here`) but in these tests, which run real `hub-cli`
processes: the round trip (`test_restore_round_trip_matches_the_source_file_by_file`, its backup
made in-process), the exit statuses over the URL, and a store or target held by a running hub."""

from __future__ import annotations

import json
import socket
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from hubcore.caller import Caller
from hubcore.config import HubSettings
from hubcore.hub import Hub
from hubcore.ops.manifest import MANIFEST_NAME, read_manifest, verify_manifest
from hubcore.ops.restore import RESTORED_MARK
from hubcore.services.artifacts.models import ArtifactGet
from hubcore.services.kb.models import KbRead
from hubcore.services.requests import parse
from tests.backup.support import populate, tree
from tests.cli.conftest import cli, cli_env
from tests.cli.here import cli_here
from tests.harness import ADMIN_TOKEN
from tests.harness import test_settings as settings_for
from tests.mcp.live import free_port, live_hub

pytestmark = pytest.mark.anyio


@pytest.fixture
async def filled(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    """A stopped hub's data directory holding one file of each kind."""
    settings = settings_for(tmp_path / "data")
    async with Hub.open(settings) as hub:
        made = await populate(hub)
    return settings.data_path, made


async def offline_backup(tmp_path: Path, data: Path) -> Path:
    run = await cli_here(cli_env(tmp_path), "backup", "--out", str(tmp_path / "bk"), "--data-dir", str(data))
    assert run.code == 0, run.err
    (made,) = [p for p in (tmp_path / "bk").iterdir()]
    assert run.out.startswith(f"backup {made}: 5 files")  # hub.db, a brain, a knowledge base, a blob, the push keys
    return made


async def at_rest(hub: Hub) -> None:
    """The start's reconcile of the search index has landed, and a read after it has taken its read
    mark in hub.db's wal-index (later reads of the same log write nothing there): the files stay as
    they are while the hub holds them."""
    await hub.search_index.settled()
    await hub.core.store.read(lambda conn: conn.execute("SELECT COUNT(*) FROM search_marks").fetchone())


def dump(path: Path) -> list[str]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return list(conn.iterdump())
    finally:
        conn.close()


async def test_restore_round_trip_matches_the_source_file_by_file(
    tmp_path: Path, filled: tuple[Path, dict[str, Any]]
) -> None:
    data, made = filled
    backup = await offline_backup(tmp_path, data)
    assert verify_manifest(backup) == []
    (backup / "NOTES.txt").write_text("kept on the shelf since May")  # not listed: reported, never copied
    target = tmp_path / "restored"
    run = await cli(cli_env(tmp_path), "restore", "--from", str(backup), "--data-dir", str(target))
    assert run.code == 0, run.err
    assert f"into {target}" in run.out and "NOTES.txt" in run.err
    manifest = read_manifest(backup)
    listed = {f.path for f in manifest.files}
    on_disk = {p.relative_to(target).as_posix() for p in target.rglob("*") if p.is_file()}
    assert on_disk == listed | {RESTORED_MARK, ".hub.lock"}
    for entry in manifest.files:
        assert (target / entry.path).read_bytes() == (backup / entry.path).read_bytes(), entry.path
        if entry.path.endswith(".db"):
            assert dump(target / entry.path) == dump(data / entry.path), entry.path  # same rows as the source
        else:
            assert (target / entry.path).read_bytes() == (data / entry.path).read_bytes()
    # And the hub runs on it: the first start drops the mark and reads everything back.
    async with Hub.open(settings_for(target)) as hub:
        got = await hub.artifacts.get(Caller.admin(), parse(ArtifactGet, {"artifact_id": made["artifact_id"]}))
        page = await hub.kb.read(Caller.admin(), parse(KbRead, {"project_id": "web", "path": "/fs/index.md"}))
    assert got["content"] == "<p>kept</p>" and page["content"] == "# Web\n"
    assert not (target / RESTORED_MARK).exists()


async def test_the_first_start_on_a_restored_directory_drops_what_hub_db_does_not_name(
    tmp_path: Path, filled: tuple[Path, dict[str, Any]]
) -> None:
    data, made = filled
    backup = await offline_backup(tmp_path, data)
    target = tmp_path / "restored"
    assert (await cli_here(cli_env(tmp_path), "restore", "--from", str(backup), "--data-dir", str(target))).code == 0
    # What a backup copies after hub.db may hold a session and a blob that hub.db's copy never saw.
    for directory in (target, data):
        sqlite3.connect(directory / "brains" / "late-session.db").close()
    late = "ab" * 32
    (target / "blobs" / "ab").mkdir()
    (target / "blobs" / "ab" / late).write_bytes(b"late")
    async with Hub.open(settings_for(target)):
        pass
    assert not (target / "brains" / "late-session.db").exists() and not (target / "blobs" / "ab" / late).exists()
    assert (target / "brains" / f"{made['session_id']}.db").exists()
    assert (target / "blobs" / made["blob"][:2] / made["blob"]).exists()
    assert not (target / RESTORED_MARK).exists()
    # A directory that was never restored keeps its files: only the mark makes the start tidy.
    async with Hub.open(settings_for(data)):
        pass
    assert (data / "brains" / "late-session.db").exists()


async def test_offline_backup_is_refused_while_a_hub_holds_the_store(
    tmp_path: Path, filled: tuple[Path, dict[str, Any]]
) -> None:
    data, _ = filled
    async with Hub.open(settings_for(data)) as hub:
        await at_rest(hub)
        before = tree(tmp_path)
        run = await cli(cli_env(tmp_path), "backup", "--out", str(tmp_path / "bk"), "--data-dir", str(data))
        assert tree(tmp_path) == before
    assert run.code == 1
    for words in ("--url", "stop the hub", "volume snapshot"):
        assert words in run.err


@pytest.mark.parametrize("args", [["--out", "{data}/inner"], ["--url", "http://x", "--out", "{tmp}/bk"], []])
async def test_offline_backup_usage_and_places(
    tmp_path: Path, filled: tuple[Path, dict[str, Any]], args: list[str]
) -> None:
    data, _ = filled
    before = tree(tmp_path)
    run = await cli_here(
        cli_env(tmp_path), "backup", *[a.format(data=data, tmp=tmp_path) for a in args], "--data-dir", str(data)
    )
    assert run.code == (1 if args and args[0] == "--out" else 2), run.err
    assert tree(tmp_path) == before


async def test_backup_of_a_directory_that_is_no_hub_is_refused(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    before = tree(tmp_path)
    empty = str(tmp_path / "empty")
    run = await cli_here(cli_env(tmp_path), "backup", "--out", str(tmp_path / "bk"), "--data-dir", empty)
    assert run.code == 1 and "no hub.db" in run.err
    assert tree(tmp_path) == before


def corrupt(backup: Path, how: str) -> str:
    """Damage a backup one way; returns words the refusal names."""
    manifest = read_manifest(backup)
    kb = backup / "kb" / "web.db"
    if how == "digest":
        raw = bytearray(kb.read_bytes())
        raw[200] ^= 0xFF
        kb.write_bytes(bytes(raw))
        return "kb/web.db: SHA-256 differs"
    if how == "missing":
        kb.unlink()
        return "kb/web.db: missing"
    if how == "no-manifest":
        (backup / MANIFEST_NAME).unlink()
        return "no manifest"
    if how == "newer":
        data = json.loads((backup / MANIFEST_NAME).read_text())
        data["schema_version"] = manifest.schema_version + 100
        (backup / MANIFEST_NAME).write_text(json.dumps(data))
        return "newer than this binary supports"
    raise AssertionError(how)


@pytest.mark.parametrize("how", ["digest", "missing", "no-manifest", "newer"])
async def test_a_damaged_or_foreign_backup_is_refused_with_nothing_changed(
    tmp_path: Path, filled: tuple[Path, dict[str, Any]], how: str
) -> None:
    data, _ = filled
    backup = await offline_backup(tmp_path, data)
    words = corrupt(backup, how)
    before = tree(tmp_path)
    run = await cli_here(cli_env(tmp_path), "restore", "--from", str(backup), "--data-dir", str(tmp_path / "new"))
    assert run.code == 1 and words in run.err, run.err
    assert tree(tmp_path) == before


async def test_a_pre_migration_copy_is_refused(tmp_path: Path, filled: tuple[Path, dict[str, Any]]) -> None:
    data, _ = filled
    copy = tmp_path / "pre-migration-v7-20261127T000000000000Z.db"
    copy.write_bytes((data / "hub.db").read_bytes())
    before = tree(tmp_path)
    run = await cli_here(cli_env(tmp_path), "restore", "--from", str(copy), "--data-dir", str(tmp_path / "new"))
    assert run.code == 1 and "pre-migration copy has no manifest" in run.err
    assert tree(tmp_path) == before


async def test_restore_into_a_held_or_non_empty_target(tmp_path: Path, filled: tuple[Path, dict[str, Any]]) -> None:
    data, _ = filled
    backup = await offline_backup(tmp_path, data)
    env = cli_env(tmp_path)
    async with Hub.open(settings_for(data)) as hub:  # held, even with --force
        await at_rest(hub)
        before = tree(tmp_path)
        run = await cli(env, "restore", "--from", str(backup), "--data-dir", str(data), "--force")
        assert run.code == 1 and "held by a running hub" in run.err
        assert tree(tmp_path) == before
    before = tree(tmp_path)
    run = await cli_here(env, "restore", "--from", str(backup), "--data-dir", str(data))  # not empty, no --force
    assert run.code == 1 and "--force" in run.err
    assert tree(tmp_path) == before
    old = tree(data)
    run = await cli_here(env, "restore", "--from", str(backup), "--data-dir", str(data), "--force")
    assert run.code == 0, run.err
    (kept,) = [p for p in tmp_path.iterdir() if p.name.startswith(".hub-replaced-")]
    assert f"kept at {kept}" in run.out
    assert tree(kept) == old  # the old tree, untouched, beside the target
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".hub-restore-")]
    assert (data / RESTORED_MARK).exists() and verify_manifest(backup) == []


@pytest.fixture
def online_settings(tmp_path: Path) -> HubSettings:
    (tmp_path / "bk").mkdir()
    return settings_for(tmp_path / "data", backup_dir=str(tmp_path / "bk"))


async def test_backup_over_the_url_and_its_exit_codes(tmp_path: Path, online_settings: HubSettings) -> None:
    async with live_hub(online_settings) as live:
        good = cli_env(tmp_path, HUB_ADMIN_TOKEN=ADMIN_TOKEN)
        run = await cli(good, "backup", "--url", live.base)
        assert run.code == 0, run.err
        (made,) = list((tmp_path / "bk").iterdir())
        assert run.out.startswith(f"backup {made}: ") and verify_manifest(made) == []
        run = await cli(
            cli_env(tmp_path, HUB_ADMIN_TOKEN="hub_wrong-token-000000000000000000000000"), "backup", "--url", live.base
        )
        assert run.code == 77
        run = await cli(cli_env(tmp_path), "backup", "--url", live.base)
        assert run.code == 78 and "HUB_ADMIN_TOKEN" in run.err
    async with live_hub(settings_for(tmp_path / "data2")) as off:  # backup_dir unset: the hub refuses
        run = await cli(good, "backup", "--url", off.base)
        assert run.code == 1 and "not_found" in run.err
    run = await cli(good, "backup", "--url", f"http://127.0.0.1:{free_port()}")
    assert run.code == 69
    assert len(list((tmp_path / "bk").iterdir())) == 1


async def test_hub_timeout_bounds_the_wait(tmp_path: Path) -> None:
    with socket.socket() as silent:  # accepts connections (the backlog) and never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        port = silent.getsockname()[1]
        env = cli_env(tmp_path, HUB_ADMIN_TOKEN=ADMIN_TOKEN, HUB_TIMEOUT="0.5")
        run = await cli_here(env, "backup", "--url", f"http://127.0.0.1:{port}")
    assert run.code == 69 and "cannot reach" in run.err
