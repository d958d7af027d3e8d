"""`hub-cli kb export`: the folder layout and manifest, --force, and every refusal, each leaving the
folder (and everything outside it) as it was.

The local commands run in this process (`tests.cli.here`); `test_export_over_rest` runs a real
`hub-cli` process."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import anyio
import pytest

from hubcli.client import CliFailure
from hubcli.kb_export import export
from hubcore.caller import Caller
from hubcore.config import HubSettings
from hubcore.hub import Hub
from hubcore.services.kb.models import KbDelete, KbWrite
from hubcore.services.requests import parse
from tests.cli.conftest import Run, cli, cli_env
from tests.cli.here import cli_here
from tests.harness import ADMIN_TOKEN
from tests.mcp.live import live_hub
from tests.requests import a_project

pytestmark = pytest.mark.anyio
ADMIN_CALLER = Caller.admin()


async def seed(settings: HubSettings, pages: dict[str, str], *, project: str = "demo") -> dict[str, str]:
    """Write the pages (creating the project); their versions."""
    versions = {}
    async with Hub.open(settings) as hub:
        if project not in {p["id"] for p in await hub.projects.list(ADMIN_CALLER)}:
            await hub.projects.create(ADMIN_CALLER, a_project(id=project))
        for path, content in pages.items():
            req = parse(KbWrite, {"project_id": project, "path": path, "content": content})
            versions[path] = (await hub.kb.write(ADMIN_CALLER, req))["version"]
    return versions


def tree(root: Path) -> dict[str, Any]:
    """Every entry under `root` (not following symlinks): file bytes, `dir`, or `-> target`."""
    found: dict[str, Any] = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in dirnames + filenames:
            full = Path(dirpath) / name
            rel = str(full.relative_to(root))
            if full.is_symlink():
                found[rel] = f"-> {os.readlink(full)}"
            elif full.is_dir():
                found[rel] = "dir"
            else:
                found[rel] = full.read_bytes()
    return found


async def run_export(tmp_path: Path, settings: HubSettings, folder: Path, *flags: str) -> Run:
    env = cli_env(tmp_path, HUB_DATA_DIR=settings.data_dir, HUB_PROJECT="demo")
    return await cli_here(env, "kb", "export", "--dir", str(folder), *flags)


PAGES = {
    "/fs/index.md": "---\ntype: Reference\nokf_version: 1\n---\n# Home\n",
    "/fs/notes/a.md": "caf\u00e9",
    "/fs/notes/deep/b.md": "no newline",
    "/fs/.hidden/x.md": "secret",
    "/fs/notes/.draft.md": "draft",
}


async def test_export_writes_each_page_and_the_manifest(tmp_path: Path, settings: HubSettings) -> None:
    versions = await seed(settings, PAGES)
    folder = tmp_path / "bundle"
    run = await run_export(tmp_path, settings, folder)
    assert run.code == 0 and run.out == f"exported 3 pages (61 bytes) to {folder}\n"
    assert run.err.splitlines() == [
        "hub-cli kb: skipped /fs/.hidden/x.md: a dot-named component is not exported",
        "hub-cli kb: skipped /fs/notes/.draft.md: a dot-named component is not exported",
    ]
    files = tree(folder)
    manifest = json.loads(files.pop(".hub-kb.json"))
    assert files == {
        "index.md": PAGES["/fs/index.md"].encode(),
        "notes": "dir",
        "notes/a.md": "caf\u00e9".encode(),
        "notes/deep": "dir",
        "notes/deep/b.md": b"no newline",
    }
    assert manifest == {
        "format": 1,
        "project": "demo",
        "pages": {p: versions[p] for p in ("/fs/index.md", "/fs/notes/a.md", "/fs/notes/deep/b.md")},
    }


async def test_force_overwrites_and_removes_what_the_hub_no_longer_has(tmp_path: Path, settings: HubSettings) -> None:
    await seed(settings, {"/fs/a.md": "a", "/fs/gone/b.md": "b", "/fs/c.md": "c"})
    folder = tmp_path / "bundle"
    assert (await run_export(tmp_path, settings, folder)).code == 0
    (folder / "mine.txt").write_text("the user's own file")
    (folder / "a.md").write_text("edited in the folder")
    async with Hub.open(settings) as hub:
        await hub.kb.delete(ADMIN_CALLER, parse(KbDelete, {"project_id": "demo", "path": "/fs/gone/b.md"}))
        await hub.kb.write(ADMIN_CALLER, parse(KbWrite, {"project_id": "demo", "path": "/fs/c.md", "content": "C"}))
    refused = await run_export(tmp_path, settings, folder)
    assert refused.code == 1 and refused.out == ""
    assert refused.err == f"hub-cli kb: {folder} is not empty; --force overwrites it\n"
    run = await run_export(tmp_path, settings, folder, "--force")
    assert run.code == 0 and run.out == f"removed /fs/gone/b.md\nexported 2 pages (2 bytes) to {folder}\n"
    files = tree(folder)
    assert {k: v for k, v in files.items() if k != ".hub-kb.json"} == {
        "a.md": b"a",
        "c.md": b"C",
        "gone": "dir",
        "mine.txt": b"the user's own file",
    }
    assert set(json.loads(files[".hub-kb.json"])["pages"]) == {"/fs/a.md", "/fs/c.md"}


def hostile_cases(tmp_path: Path) -> dict[str, tuple[dict[str, str], Any, str]]:
    """name -> (pages in the hub, how to prepare the folder, the refusal's message)."""
    outside = tmp_path / "outside"

    def link_dir(folder: Path) -> None:
        folder.mkdir()
        (folder / "notes").symlink_to(outside, target_is_directory=True)

    def link_file(folder: Path) -> None:
        folder.mkdir()
        (folder / "a.md").symlink_to(outside / "victim.md")

    def dir_at_page(folder: Path) -> None:
        (folder / "a.md").mkdir(parents=True)

    def file_on_way(folder: Path) -> None:
        folder.mkdir()
        (folder / "notes").write_text("a file where a directory goes")

    def folder_link(folder: Path) -> None:
        folder.symlink_to(outside, target_is_directory=True)

    def link_manifest(folder: Path) -> None:
        folder.mkdir()
        (folder / ".hub-kb.json").symlink_to(outside / "victim.md")

    def other_project(folder: Path) -> None:
        folder.mkdir()
        (folder / ".hub-kb.json").write_text('{"format": 1, "project": "other", "pages": {}}')

    def escaping_manifest(folder: Path) -> None:
        folder.mkdir()
        (folder / ".hub-kb.json").write_text('{"format": 1, "project": "demo", "pages": {"/fs/../../x": "sha256:0"}}')

    def twice(folder: Path) -> None:
        folder.mkdir()
        (folder / ".hub-kb.json").write_text(
            '{"format": 1, "project": "demo", "pages": {"/fs/a.md": "sha256:0", "/fs/a.md": "sha256:1"}}'
        )

    def absent(folder: Path) -> None:
        pass

    page = {"/fs/a.md": "a", "/fs/notes/b.md": "b"}
    return {
        "symlink on the way": (page, link_dir, "/fs/notes/b.md: {folder}/notes is a symlink"),
        "symlink at a page": (page, link_file, "/fs/a.md: {folder}/a.md is a symlink"),
        "directory at a page": (page, dir_at_page, "/fs/a.md: {folder}/a.md is a directory"),
        "file on the way": (page, file_on_way, "/fs/notes/b.md: {folder}/notes is not a directory"),
        "folder is a symlink": (page, folder_link, "{folder} is a symlink"),
        "manifest is a symlink": (page, link_manifest, "{folder}/.hub-kb.json is not a regular file"),
        "another project's manifest": (page, other_project, "{folder} holds project 'other'"),
        "manifest path escaping": (page, escaping_manifest, "{folder}/.hub-kb.json names '/fs/../../x'"),
        "manifest naming a page twice": (page, twice, "{folder}/.hub-kb.json: names '/fs/a.md' twice"),
        "case twins": (
            {"/fs/Readme.md": "1", "/fs/readme.md": "2"},
            absent,
            "/fs/Readme.md and /fs/readme.md differ only in case",
        ),
        "directory case twins": (
            {"/fs/Notes/a.md": "1", "/fs/notes/b.md": "2"},
            absent,
            "/fs/Notes and /fs/notes differ only in case",
        ),
        "NFC and NFD twins": (
            {"/fs/caf\u00e9.md": "1", "/fs/cafe\u0301.md": "2"},
            absent,
            "/fs/cafe\u0301.md and /fs/caf\u00e9.md differ only in case or Unicode",
        ),
    }


@pytest.mark.parametrize("case", list(hostile_cases(Path("/x"))))
async def test_hostile_folders_are_refused_before_anything_is_written(
    tmp_path: Path, settings: HubSettings, case: str
) -> None:
    pages, prepare, message = hostile_cases(tmp_path)[case]
    await seed(settings, pages)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.md").write_text("not yours")
    folder = tmp_path / "bundle"
    prepare(folder)
    before = (tree(tmp_path / "bundle") if folder.is_dir() and not folder.is_symlink() else None, tree(outside))
    run = await run_export(tmp_path, settings, folder, "--force")
    assert run.code == 1 and run.out == "", run
    assert run.err.startswith("hub-cli kb: " + message.format(folder=folder)), run.err
    after = (tree(tmp_path / "bundle") if folder.is_dir() and not folder.is_symlink() else None, tree(outside))
    assert after == before
    assert folder.is_symlink() or folder.exists() == (prepare.__name__ != "absent")


class FakeKb:
    """A knowledge base of `count` pages of `size` bytes each, in memory (the limits' tests)."""

    project = "demo"

    def __init__(self, count: int, size: int) -> None:
        self.count, self.size, self.reads = count, size, 0

    async def listing(self, prefix: str, *, meta: bool = False) -> dict[str, Any]:
        if prefix == "/fs/":
            return {
                "entries": [
                    {"path": f"/fs/d{i}", "type": "dir", "size_bytes": 0, "children": 0}
                    for i in range(self.count // 400 + 1)
                ],
                "truncated": False,
            }
        base = int(prefix[5:]) * 400
        rows = [
            {"path": f"{prefix}/p{n}.md", "type": "file", "size_bytes": self.size, "children": None}
            for n in range(base, min(base + 400, self.count))
        ]
        return {"entries": rows, "truncated": False}

    async def read(self, path: str, version: str | None = None) -> dict[str, Any]:
        self.reads += 1
        return {"path": path, "content": "x" * self.size, "version": "sha256:" + "0" * 64}


@pytest.mark.parametrize(
    ("count", "size", "message"),
    [
        (10_001, 1, "the knowledge base holds more than 10000 pages"),
        (257, 1024 * 1024, "the pages hold 269484032 bytes, over the 268435456"),
    ],
)
async def test_limits_refuse_before_reading_or_writing(tmp_path: Path, count: int, size: int, message: str) -> None:
    kb = FakeKb(count, size)
    folder = tmp_path / "bundle"
    with pytest.raises(CliFailure) as refused:
        await export(kb, "demo", folder, force=False)  # type: ignore[arg-type]
    assert refused.value.code == 1 and refused.value.message.startswith(message)
    assert kb.reads == 0 and not folder.exists()


async def test_the_limits_themselves_export(tmp_path: Path) -> None:
    kb = FakeKb(10_000, 1)
    lines = await export(kb, "demo", tmp_path / "bundle", force=False)  # type: ignore[arg-type]
    assert lines == [f"exported 10000 pages (10000 bytes) to {tmp_path / 'bundle'}"]


async def test_export_over_rest(tmp_path: Path, settings: HubSettings) -> None:
    async with live_hub(settings) as live:
        await live.make_project("demo")
        for path, content in PAGES.items():
            await live.app.hub.kb.write(
                ADMIN_CALLER, parse(KbWrite, {"project_id": "demo", "path": path, "content": content})
            )
        env = cli_env(tmp_path, HUB_URL=live.base, HUB_TOKEN=ADMIN_TOKEN, HUB_PROJECT="demo")
        run = await cli(env, "kb", "export", "--dir", str(tmp_path / "bundle"))
    assert run.code == 0 and run.out.startswith("exported 3 pages")
    assert await anyio.Path(tmp_path / "bundle" / "notes" / "a.md").read_text() == "caf\u00e9"
