"""The blob store on its own (hubcore/store/blobs.py): content-addressed layout, whole files only,
one file per body, the 50 MiB limit, staged bodies safe from removal, the backup gate, and the
hub's sweep at start of blobs no version references. Runs on asyncio and trio."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from hubcore.caller import Caller
from hubcore.config import HubSettings
from hubcore.errors import HubError
from hubcore.hub import Hub
from hubcore.parts.artifacts import ArtifactsPart
from hubcore.services.artifacts import ArtifactPublish
from hubcore.services.requests import parse
from hubcore.store.blobs import BLOB_MAX, BlobStore, digest_of
from tests.artifacts.support import blob_files

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def nothing_referenced(candidates: list[str]) -> set[str]:
    return set()


async def test_layout_dedup_and_removal(tmp_path: Path) -> None:
    store = BlobStore(tmp_path / "blobs")
    assert store.max_bytes == BLOB_MAX == 50 * 1024 * 1024
    async with store.staged(b"body") as digest:
        assert digest == digest_of(b"body")
    async with store.staged(b"body") as again:
        assert again == digest
    path = tmp_path / "blobs" / digest[:2] / digest
    assert path.read_bytes() == b"body" and store.writes == 1
    assert [p.name for p in path.parent.iterdir()] == [digest]  # no temporary file left
    assert store.digests() == [digest] and store.bytes_of([digest, digest, "0" * 64]) == 4

    async def kept(candidates: list[str]) -> set[str]:
        return set(candidates)

    assert await store.remove_unreferenced([digest], kept) == 0 and path.exists()
    assert await store.remove_unreferenced([digest, "../../etc/passwd"], nothing_referenced) == 1
    assert not path.exists() and store.digests() == []


async def test_over_the_limit_writes_nothing(tmp_path: Path) -> None:
    store = BlobStore(tmp_path / "blobs", max_bytes=10)
    async with store.staged(b"x" * 10):
        pass
    with pytest.raises(HubError) as caught:
        async with store.staged(b"x" * 11):
            pass
    assert caught.value.code == "payload_too_large" and store.digests() == [digest_of(b"x" * 10)]


async def test_a_staged_body_is_never_removed(tmp_path: Path) -> None:
    store = BlobStore(tmp_path / "blobs")
    async with store.staged(b"racing") as digest:
        assert await store.remove_unreferenced([digest], nothing_referenced) == 0
        assert store.exists(digest)
    assert await store.remove_unreferenced([digest], nothing_referenced) == 1


async def test_the_gate_holds_removals_while_a_backup_runs(tmp_path: Path) -> None:
    store = BlobStore(tmp_path / "blobs")
    async with store.staged(b"old") as digest:
        pass
    removed = anyio.Event()

    async def remove() -> None:
        await store.remove_unreferenced([digest], nothing_referenced)
        removed.set()

    async with anyio.create_task_group() as tg:
        async with store.gate.held():
            assert store.gate.is_held
            tg.start_soon(remove)
            async with store.staged(b"new bytes are written while held"):
                pass
            for _ in range(20):
                await anyio.lowlevel.checkpoint()
            assert not removed.is_set() and store.exists(digest)
        await removed.wait()
    assert not store.exists(digest) and not store.gate.is_held


async def test_the_hub_sweeps_unreferenced_blobs_at_start(settings: HubSettings) -> None:
    stray = BlobStore(settings.data_path / "blobs")
    async with stray.staged(b"left by a crash") as orphan:
        pass
    async with Hub.open(settings) as hub:
        await hub.projects.create(Caller.admin(), parse_project("web"))
        made = await hub.artifacts.publish_artifact(
            Caller.admin(),
            parse(ArtifactPublish, {"project_id": "web", "title": "T", "kind": "html", "content": "kept"}),
        )
        part = next(p for p in hub.parts if isinstance(p, ArtifactsPart))
        await part.sweep_unreferenced()  # what the part's background task runs once at start
        assert not (settings.data_path / "blobs" / orphan[:2] / orphan).exists()
        assert blob_files(hub) == [f"{digest_of(b'kept')[:2]}/{digest_of(b'kept')}"] and made["version"] == 1


def parse_project(project_id: str) -> Any:
    from hubcore.services.projects import ProjectCreate

    return parse(ProjectCreate, {"id": project_id})
