"""`POST /api/v1/backups`: where it may write, one at a time, the set it copies while agents write,
and blob deletes waiting for it."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from hubcore import config as cfg
from hubcore.caller import Caller
from hubcore.clock import FakeClock
from hubcore.errors import HubError
from hubcore.ops.backup import BackupCreate
from hubcore.ops.layout import part_files
from hubcore.ops.manifest import read_manifest, verify_manifest
from tests.backup.support import Blocked, populate, tree
from tests.foundation.test_gate import assert_problem
from tests.harness import ADMIN, HubClient, hub_client
from tests.harness import test_settings as settings_for

pytestmark = pytest.mark.anyio

NAME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}Z$")


@pytest.fixture
def backups(tmp_path: Path) -> Path:
    target = tmp_path / "backups"
    target.mkdir()
    return target


@pytest.fixture
async def live(tmp_path: Path, backups: Path, clock: FakeClock) -> AsyncIterator[HubClient]:
    async with hub_client(settings_for(tmp_path / "data", backup_dir=str(backups)), clock) as c:
        yield c


async def post_backup(client: HubClient, **kwargs: Any) -> Any:
    return await client.post("/api/v1/backups", headers=kwargs.pop("headers", ADMIN), **kwargs)


async def test_a_backup_holds_every_store_file_and_blob_with_a_manifest(live: HubClient, backups: Path) -> None:
    hub = live.app.hub
    made = await populate(hub)
    r = await post_backup(live)
    assert r.status_code == 201, r.text
    body = r.json()
    assert NAME.match(body["directory"]) and body["path"] == str(backups / body["directory"])
    assert isinstance(body["duration_ms"], int) and body["duration_ms"] >= 0
    root = Path(body["path"])
    manifest = read_manifest(root)
    paths = {f.path for f in manifest.files}
    assert paths == {
        "hub.db",
        f"brains/{made['session_id']}.db",
        "kb/web.db",
        f"blobs/{made['blob'][:2]}/{made['blob']}",
        "push/keys.json",
    }  # the push keys: a secret file
    assert body["manifest"] == {
        "schema_version": hub.schema_version,
        "created_at": manifest.created_at,
        "files": 5,
        "bytes": manifest.bytes,
    }
    assert manifest.bytes == sum(f.size for f in manifest.files)
    assert verify_manifest(root) == []
    assert sorted(p.name for p in backups.iterdir()) == [body["directory"]]  # no partial left behind
    copy = sqlite3.connect(root / "hub.db")
    try:
        assert copy.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert copy.execute("SELECT sha256 FROM artifact_versions").fetchall() == [(made["blob"],)]
    finally:
        copy.close()
    assert (root / "blobs" / made["blob"][:2] / made["blob"]).read_bytes() == b"<p>kept</p>"


async def test_the_hub_lists_the_same_store_files_as_the_offline_backup(live: HubClient) -> None:
    hub = live.app.hub
    await populate(hub)
    data = hub.settings.data_path
    assert hub.engine_files() == [data / "hub.db", *part_files(data)]
    assert len(hub.engine_files()) == 3


async def test_two_backups_get_two_directories_and_none_is_deleted(live: HubClient, backups: Path) -> None:
    first = (await post_backup(live)).json()["directory"]
    second = (await post_backup(live)).json()["directory"]  # the fake clock has not moved
    assert first != second and sorted(p.name for p in backups.iterdir()) == sorted([first, second])


async def test_backup_off_is_404_and_writes_nothing(client: HubClient, tmp_path: Path) -> None:
    before = tree(tmp_path)
    assert_problem(await post_backup(client), 404, "not_found")
    assert tree(tmp_path) == before


@pytest.mark.parametrize("member", [{"json": {"path": "/tmp/elsewhere"}}, {"params": {"dir": "x"}}])
async def test_no_path_comes_from_the_request(live: HubClient, backups: Path, member: dict[str, Any]) -> None:
    doc = assert_problem(await post_backup(live, **member), 400, "invalid_argument")
    assert "path" in doc["detail"] or "dir" in doc["detail"]
    assert list(backups.iterdir()) == []


async def test_only_the_admin_takes_a_backup(live: HubClient, backups: Path) -> None:
    token = await live.make_agent("mallory")
    r = await post_backup(live, headers=live.agent(token))
    assert r.status_code == 401
    with pytest.raises(HubError) as caught:
        await live.app.hub.backups.create(Caller.agent("mallory"), BackupCreate())
    assert caught.value.code == "forbidden"
    assert list(backups.iterdir()) == []


async def test_a_missing_backup_dir_is_503_and_writes_nothing(tmp_path: Path, clock: FakeClock) -> None:
    gone = tmp_path / "not-there"
    async with hub_client(settings_for(tmp_path / "data", backup_dir=str(gone)), clock) as c:
        before = tree(tmp_path)
        doc = assert_problem(await post_backup(c), 503, "unavailable")
        assert str(gone) in doc["detail"]
        assert tree(tmp_path) == before and not gone.exists()


async def test_a_backup_dir_inside_the_data_dir_is_refused(tmp_path: Path, clock: FakeClock) -> None:
    data = tmp_path / "data"
    (data / "inner").mkdir(parents=True)
    link = tmp_path / "link"
    link.symlink_to(data / "inner", target_is_directory=True)
    for place in (data / "inner", link):
        # At start: the configuration is refused (config.load validates it).
        with pytest.raises(cfg.ConfigError, match="inside the data directory"):
            cfg.load({"HUB_DATA_DIR": str(data), "HUB_BACKUP_DIR": str(place)}, path=tmp_path / "none.toml")
        # And before each backup, should it get past the start (settings made in code).
        async with hub_client(settings_for(data, backup_dir=str(place)), clock) as c:
            before = tree(tmp_path)
            doc = assert_problem(await post_backup(c), 503, "unavailable")
            assert "inside the data directory" in doc["detail"]
            assert tree(tmp_path) == before


async def test_a_backup_dir_swapped_for_a_symlink_into_the_data_dir_is_refused(
    tmp_path: Path, live: HubClient, backups: Path
) -> None:
    backups.rmdir()
    backups.symlink_to(live.app.hub.settings.data_path / "kb", target_is_directory=True)
    (live.app.hub.settings.data_path / "kb").mkdir(exist_ok=True)
    before = tree(tmp_path)
    assert_problem(await post_backup(live), 503, "unavailable")
    assert tree(tmp_path) == before


async def test_one_backup_at_a_time_and_the_hub_keeps_serving(
    live: HubClient, backups: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await populate(live.app.hub)
    blocked = Blocked(monkeypatch)
    replies: list[Any] = []
    async with anyio.create_task_group() as tg:

        async def first() -> None:
            replies.append(await post_backup(live))

        tg.start_soon(first)
        await blocked.entered()
        assert_problem(await post_backup(live), 409, "conflict")
        assert (await live.get("/api/v1/projects", headers=ADMIN)).status_code == 200  # not blocked
        assert [p.name.startswith(".partial-") for p in backups.iterdir()] == [True]  # the 409 wrote nothing
        blocked.release.set()
    assert replies[0].status_code == 201
    assert [p.name for p in backups.iterdir()] == [replies[0].json()["directory"]]
