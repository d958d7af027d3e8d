"""The online backup in the hub itself, on asyncio and trio: blob deletes wait for it, agents keep
writing through it, and it refuses (changing nothing) when it has nowhere to write."""

from __future__ import annotations

import errno
import sqlite3
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import pytest

from hubcore.caller import Caller
from hubcore.errors import HubError
from hubcore.hub import DataDirLocked, Hub
from hubcore.ops import backup as backup_mod
from hubcore.ops.backup import BackupCreate, offline_backup
from hubcore.ops.datadir import held_by_hub
from hubcore.ops.manifest import verify_manifest
from hubcore.services.artifacts.models import ArtifactRef
from hubcore.services.requests import parse
from tests.backup.support import ADMIN as ADMIN_CALLER
from tests.backup.support import ALICE, Blocked, populate, tree
from tests.harness import test_settings as settings_for
from tests.requests import a_signal

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def hub(tmp_path: Path) -> AsyncIterator[Hub]:
    (tmp_path / "backups").mkdir()
    async with Hub.open(settings_for(tmp_path / "data", backup_dir=str(tmp_path / "backups"))) as opened:
        yield opened


@pytest.mark.parametrize(
    ("backup_dir", "code"), [(None, "not_found"), ("missing", "unavailable"), ("data/kb", "unavailable")]
)
async def test_nowhere_to_write_is_refused_before_anything_is_written(
    tmp_path: Path, backup_dir: str | None, code: str
) -> None:
    settings = settings_for(tmp_path / "data", backup_dir=backup_dir and str(tmp_path / backup_dir))
    async with Hub.open(settings) as opened:
        (tmp_path / "data" / "kb").mkdir(exist_ok=True)
        before = tree(tmp_path)
        with pytest.raises(HubError) as caught:
            await opened.backups.create(ADMIN_CALLER, BackupCreate())
        assert caught.value.code == code and tree(tmp_path) == before
        with pytest.raises(HubError) as caught:
            await opened.backups.create(Caller.agent("alice"), BackupCreate())
        assert caught.value.code == "forbidden" and tree(tmp_path) == before


async def test_a_blob_delete_waits_while_a_backup_runs(hub: Hub, monkeypatch: pytest.MonkeyPatch) -> None:
    made = await populate(hub)
    blob = hub.settings.data_path / "blobs" / made["blob"][:2] / made["blob"]
    blocked = Blocked(monkeypatch)
    done: dict[str, Any] = {}
    async with anyio.create_task_group() as tg:

        async def take() -> None:
            done["backup"] = await hub.backups.create(ADMIN_CALLER, BackupCreate())

        async def delete() -> None:
            done["delete"] = await hub.artifacts.delete(
                ADMIN_CALLER, parse(ArtifactRef, {"artifact_id": made["artifact_id"]})
            )

        tg.start_soon(take)
        await blocked.entered()
        tg.start_soon(delete)
        await anyio.sleep(0.2)
        assert "delete" not in done and blob.exists()  # the delete waits at the gate
        blocked.release.set()
    assert not blob.exists() and done["delete"] == {"ok": True}
    root = Path(done["backup"]["path"])
    assert (root / "blobs" / made["blob"][:2] / made["blob"]).read_bytes() == b"<p>kept</p>"
    copy = sqlite3.connect(root / "hub.db")
    try:
        assert copy.execute("SELECT COUNT(*) FROM artifacts").fetchone()[0] == 1  # the copy predates the delete
    finally:
        copy.close()


async def test_a_backup_while_agents_keep_writing(hub: Hub) -> None:
    made = await populate(hub)
    written = {"n": 0}
    stop, warmed = anyio.Event(), anyio.Event()

    async def writer(i: int) -> None:
        while not stop.is_set():
            req = a_signal(project_id="web", summary=f"w{i}", payload={"n": written["n"]})
            await hub.posts.signal_append(ALICE, req)
            written["n"] += 1
            if written["n"] >= 20:
                warmed.set()

    async with anyio.create_task_group() as tg:
        for i in range(4):
            tg.start_soon(writer, i)
        await warmed.wait()
        result = await hub.backups.create(ADMIN_CALLER, BackupCreate())
        during = written["n"]
        stop.set()
    root = Path(result["path"])
    assert verify_manifest(root) == []
    copy = sqlite3.connect(root / "hub.db")
    try:
        assert copy.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        copied = copy.execute("SELECT COUNT(*) FROM events WHERE summary LIKE 'w%'").fetchone()[0]
    finally:
        copy.close()
    assert 20 <= copied <= during + 4  # a consistent snapshot taken while the writers ran
    brain = sqlite3.connect(root / "brains" / f"{made['session_id']}.db")
    try:
        assert brain.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        brain.close()


async def test_a_cancelled_backup_stops_and_leaves_no_directory(
    hub: Hub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await populate(hub)
    blocked = Blocked(monkeypatch)
    with anyio.CancelScope() as scope:

        async def take() -> None:
            await hub.backups.create(ADMIN_CALLER, BackupCreate())

        async with anyio.create_task_group() as tg:
            tg.start_soon(take)
            await blocked.entered()
            scope.cancel()  # the hub shutting down, or the client gone
    assert not hub.backups.running and not hub.blobs.gate.is_held  # the request let go at once
    blocked.release.set()
    for _ in range(200):  # the worker notices before its next file and removes its partial directory
        if not list((tmp_path / "backups").iterdir()):
            break
        await anyio.sleep(0.05)
    assert list((tmp_path / "backups").iterdir()) == []


async def test_an_offline_backup_holds_the_directory_while_it_copies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"
    async with Hub.open(settings_for(data)) as opened:
        await populate(opened)
    blocked = Blocked(monkeypatch)
    moment = datetime.now(UTC)
    async with anyio.create_task_group() as tg:

        async def copy() -> None:
            await anyio.to_thread.run_sync(lambda: offline_backup(data, tmp_path / "out", moment=moment))

        tg.start_soon(copy)
        await blocked.entered()
        assert held_by_hub(data)  # a hub starting now is refused
        with pytest.raises(DataDirLocked):
            async with Hub.open(settings_for(data)):
                pass
        blocked.release.set()
    assert not held_by_hub(data)
    (made,) = list((tmp_path / "out").iterdir())
    assert verify_manifest(made) == []


async def test_a_disk_failing_under_backup_dir_is_503_and_leaves_nothing(
    hub: Hub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await populate(hub)

    def full(*_: Any) -> Any:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(backup_mod, "_copy_verbatim", full)
    with pytest.raises(HubError) as caught:
        await hub.backups.create(ADMIN_CALLER, BackupCreate())
    assert caught.value.code == "unavailable" and "No space left" in caught.value.message
    assert list((tmp_path / "backups").iterdir()) == [] and not hub.backups.running
