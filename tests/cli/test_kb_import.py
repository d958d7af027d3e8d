"""`hub-cli kb import`: every refusal before writing (hostile folders included), every per-page
line, the manifest rewrite (a second import changes nothing), --dry-run, --prune, exit codes, and
the round trip export, edit, import, export.

The commands run in this process (`tests.cli.here`) but in `test_import_over_rest_and_its_exit_codes`,
where real `hub-cli` processes show the exit statuses 77, 69 and 78 and a first import's output
through a pipe."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from hubcli import kb_folder
from hubcli.client import CliFailure
from hubcli.kb_backend import LocalKb
from hubcli.kb_import import import_folder, read_folder
from hubcore.config import HubSettings
from hubcore.errors import HubError
from hubcore.hub import Hub
from hubcore.services.kb.models import KbDelete
from hubcore.services.requests import parse
from tests.cli.conftest import Run, cli, cli_env
from tests.cli.here import cli_here
from tests.cli.test_kb import ADMIN_CALLER, snapshot
from tests.cli.test_kb_export import seed, tree
from tests.harness import ADMIN_TOKEN
from tests.mcp.live import free_port, live_hub

pytestmark = pytest.mark.anyio

FM = "---\ntype: Guide\n---\n"


async def kb(tmp_path: Path, settings: HubSettings, *args: str) -> Run:
    env = cli_env(tmp_path, HUB_DATA_DIR=settings.data_dir, HUB_PROJECT="demo")
    return await cli_here(env, "kb", *args)


async def state(settings: HubSettings) -> dict[str, Any]:
    async with Hub.open(settings) as hub:
        return await snapshot(hub)


def write(folder: Path, files: dict[str, str | bytes]) -> None:
    for rel, content in files.items():
        target = folder / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content.encode() if isinstance(content, str) else content)


def counts(line: str) -> dict[str, int]:
    return {part.rsplit(" ", 1)[0]: int(part.rsplit(" ", 1)[1]) for part in line.split(", ")}


NONE = {
    "created": 0,
    "updated": 0,
    "deleted": 0,
    "conflicts": 0,
    "hub newer": 0,
    "kept": 0,
    "already gone": 0,
    "not attempted": 0,
    "failed": 0,
    "unchanged": 0,
}


async def test_round_trip_and_a_second_import_changes_nothing(tmp_path: Path, settings: HubSettings) -> None:
    await seed(settings, {"/fs/index.md": FM + "# Home\n", "/fs/a.md": FM + "a\n", "/fs/notes/b.md": FM + "b\n"})
    folder = tmp_path / "bundle"
    assert (await kb(tmp_path, settings, "export", "--dir", str(folder))).code == 0
    write(folder, {"a.md": FM + "a, edited in the folder\n", "notes/new.md": FM + "new\n"})
    (folder / "notes" / "b.md").unlink()
    run = await kb(tmp_path, settings, "import", "--dir", str(folder), "--prune")
    assert run.code == 0 and run.err == "", run
    assert run.out.splitlines()[:-1] == ["update /fs/a.md", "delete /fs/notes/b.md", "create /fs/notes/new.md"]
    assert counts(run.out.splitlines()[-1]) == {**NONE, "created": 1, "updated": 1, "deleted": 1, "unchanged": 1}
    again = await kb(tmp_path, settings, "import", "--dir", str(folder), "--prune")
    assert again.code == 0 and again.out.splitlines() == [
        "created 0, updated 0, deleted 0, conflicts 0, hub newer 0, kept 0, already gone 0, not attempted 0, "
        "failed 0, unchanged 3"
    ]
    second = tmp_path / "second"
    assert (await kb(tmp_path, settings, "export", "--dir", str(second))).code == 0
    assert tree(second) == tree(folder)  # file by file, the manifest included
    assert (await state(settings))["pages"] == {
        "/fs/index.md": FM + "# Home\n",
        "/fs/notes/new.md": FM + "new\n",
        "/fs/a.md": FM + "a, edited in the folder\n",
    }


async def test_every_page_line(tmp_path: Path, settings: HubSettings) -> None:
    pages = {
        f"/fs/{name}.md": FM + name + "\n"
        for name in ("both", "gone-hub", "hub-newer", "keep", "kept-changed", "pruned-gone", "same", "update")
    }
    await seed(settings, pages)
    folder = tmp_path / "bundle"
    assert (await kb(tmp_path, settings, "export", "--dir", str(folder))).code == 0
    # After the export: the hub changes some pages, the folder others.
    await seed(
        settings,
        {
            "/fs/both.md": FM + "hub\n",
            "/fs/hub-newer.md": FM + "hub\n",
            "/fs/kept-changed.md": FM + "hub\n",
            "/fs/other.md": FM + "hub's own\n",
        },
    )
    async with Hub.open(settings) as hub:
        for path in ("/fs/gone-hub.md", "/fs/pruned-gone.md"):
            await hub.kb.delete(ADMIN_CALLER, parse(KbDelete, {"project_id": "demo", "path": path}))
    write(
        folder,
        {
            "both.md": FM + "folder\n",
            "gone-hub.md": FM + "folder\n",
            "update.md": FM + "folder\n",
            "new.md": FM + "new\n",
            "other.md": FM + "folder's own\n",
        },
    )
    for name in ("keep", "kept-changed", "pruned-gone"):
        (folder / f"{name}.md").unlink()
    before = await state(settings)
    dry = await kb(tmp_path, settings, "import", "--dir", str(folder), "--dry-run")
    assert dry.code == 1 and await state(settings) == before
    assert dry.out.splitlines()[:-1] == [
        "conflict /fs/both.md: changed on the hub and changed in the folder since the last sync",
        "conflict /fs/gone-hub.md: deleted on the hub and changed in the folder since the last sync",
        "hub newer /fs/hub-newer.md: left as is",
        "keep /fs/keep.md: gone from the folder; --prune deletes it on the hub",
        "keep /fs/kept-changed.md: gone from the folder; --prune deletes it on the hub",
        "would create /fs/new.md",
        "conflict /fs/other.md: the hub holds a different page and the manifest names none",
        "would update /fs/update.md",
    ]
    assert dry.out.splitlines()[-1].startswith("would create 1, would update 1, would delete 0, conflicts 3")
    manifest = (folder / ".hub-kb.json").read_bytes()
    run = await kb(tmp_path, settings, "import", "--dir", str(folder), "--prune")
    assert run.code == 1, run  # conflicts
    assert run.out.splitlines()[:-1] == [
        "conflict /fs/both.md: changed on the hub and changed in the folder since the last sync",
        "conflict /fs/gone-hub.md: deleted on the hub and changed in the folder since the last sync",
        "hub newer /fs/hub-newer.md: left as is",
        "delete /fs/keep.md",
        "conflict /fs/kept-changed.md: changed on the hub since the last sync; not deleted",
        "create /fs/new.md",
        "conflict /fs/other.md: the hub holds a different page and the manifest names none",
        "delete /fs/pruned-gone.md: already gone",
        "update /fs/update.md",
    ]
    assert counts(run.out.splitlines()[-1]) == {
        **NONE,
        "created": 1,
        "updated": 1,
        "deleted": 1,
        "conflicts": 4,
        "hub newer": 1,
        "already gone": 1,
        "unchanged": 1,
    }
    after = await state(settings)
    assert after["pages"]["/fs/both.md"] == FM + "hub\n" and "/fs/keep.md" not in after["pages"]
    assert after["pages"]["/fs/update.md"] == FM + "folder\n" and after["pages"]["/fs/other.md"] == FM + "hub's own\n"
    rewritten = json.loads((folder / ".hub-kb.json").read_bytes())["pages"]
    old = json.loads(manifest)["pages"]
    # Kept as they were: conflicts and hub newer (so they stay what they are next time); gone: deletions.
    assert {
        p: rewritten.get(p) == old.get(p)
        for p in ("/fs/both.md", "/fs/gone-hub.md", "/fs/hub-newer.md", "/fs/kept-changed.md")
    } == dict.fromkeys(("/fs/both.md", "/fs/gone-hub.md", "/fs/hub-newer.md", "/fs/kept-changed.md"), True)
    assert "/fs/keep.md" not in rewritten and "/fs/pruned-gone.md" not in rewritten and "/fs/other.md" not in rewritten
    again = await kb(tmp_path, settings, "import", "--dir", str(folder), "--prune")
    assert counts(again.out.splitlines()[-1])["created"] == 0 and await state(settings) == after


def hostile(tmp_path: Path) -> dict[str, tuple[Any, str]]:
    outside = tmp_path / "outside"

    def file_link(folder: Path) -> None:
        (folder / "link.md").symlink_to(outside / "victim.md")

    def dir_link(folder: Path) -> None:
        (folder / "notes").symlink_to(outside, target_is_directory=True)

    def dotdot_manifest(folder: Path) -> None:
        (folder / ".hub-kb.json").write_text('{"format": 1, "project": "demo", "pages": {"/fs/../../x.md": "v"}}')

    def twice(folder: Path) -> None:
        (folder / ".hub-kb.json").write_text(
            '{"format": 1, "project": "demo", "pages": {"/fs/a.md": "v", "/fs/a.md": "w"}}'
        )

    def other_project(folder: Path) -> None:
        (folder / ".hub-kb.json").write_text('{"format": 1, "project": "other", "pages": {}}')

    return {
        "file symlink": (file_link, "refused before writing anything:\n  link.md: a symlink"),
        "directory symlink": (dir_link, "refused before writing anything:\n  notes: a symlink"),
        "case twins": (
            lambda f: write(f, {"Readme.md": FM, "readme.md": FM}),
            "/fs/Readme.md and /fs/readme.md differ only in case",
        ),
        "NFC and NFD twins": (
            lambda f: write(f, {"caf\u00e9.md": FM, "cafe\u0301.md": FM}),
            "/fs/cafe\u0301.md and /fs/caf\u00e9.md differ only in case or Unicode",
        ),
        "directory twins": (
            lambda f: write(f, {"Notes/a.md": FM, "notes/b.md": FM}),
            "/fs/Notes and /fs/notes differ only in case",
        ),
        "non-UTF-8 file": (
            lambda f: write(f, {"bad.md": b"ok \xff"}),
            "refused before writing anything:\n  bad.md: not UTF-8 text (byte 3)",
        ),
        "page over 1 MiB": (
            lambda f: write(f, {"big.md": b"a" * (1024 * 1024 + 1)}),
            "refused before writing anything:\n  big.md: 1048577 bytes, over the 1048576",
        ),
        "backslash in a name": (
            lambda f: write(f, {"a\\b.md": FM}),
            "refused before writing anything:\n  a\\b.md: not a page path the hub accepts",
        ),
        "non-UTF-8 name": (
            lambda f: (f / os.fsdecode(b"n\xff.md")).write_text(FM),
            "refused before writing anything:\n  n\\xff.md: not a page path",
        ),
        "dotdot in the manifest": (dotdot_manifest, "{folder}/.hub-kb.json names '/fs/../../x.md'"),
        "manifest naming a page twice": (twice, "{folder}/.hub-kb.json: names '/fs/a.md' twice"),
        "another project's manifest": (other_project, "{folder} holds project 'other'"),
        "unparsed frontmatter": (
            lambda f: write(f, {"u.md": "---\ntype: [unclosed\n"}),
            "refused before writing anything: lint",
        ),
        "okf_version misplaced": (
            lambda f: write(f, {"o.md": "---\ntype: Guide\nokf_version: 1\n---\n"}),
            "refused before writing anything: lint",
        ),
        "link escaping the bundle": (
            lambda f: write(f, {"l.md": FM + "[x](../../etc/passwd)\n"}),
            "refused before writing anything: lint",
        ),
        "10,001 pages": (
            lambda f: write(f, {f"p{i:05}.md": "x" for i in range(10_001)}),
            "{folder} holds more than 10000 pages",
        ),
    }


@pytest.mark.parametrize("case", list(hostile(Path("/x"))))
async def test_refusals_before_writing(tmp_path: Path, settings: HubSettings, case: str) -> None:
    prepare, message = hostile(tmp_path)[case]
    await seed(settings, {"/fs/index.md": FM + "# Home\n"})
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.md").write_text(FM + "not yours\n")
    folder = tmp_path / "bundle"
    folder.mkdir()
    write(folder, {"fine.md": FM + "fine\n"})
    prepare(folder)
    hub_before, folder_before, outside_before = await state(settings), tree(folder), tree(outside)
    run = await kb(tmp_path, settings, "import", "--dir", str(folder))
    assert run.code == 1 and run.out == "", run
    assert f"hub-cli kb: {message.format(folder=folder)}" in run.err, run.err
    assert await state(settings) == hub_before
    assert tree(folder) == folder_before and tree(outside) == outside_before


async def test_lint_findings_that_do_not_refuse_are_printed(tmp_path: Path, settings: HubSettings) -> None:
    await seed(settings, {})
    folder = tmp_path / "bundle"
    write(folder, {"a.md": "no frontmatter\n", "b.md": FM + "[gone](missing.md)\n"})
    run = await kb(tmp_path, settings, "import", "--dir", str(folder))
    assert run.code == 0 and run.out.splitlines()[:2] == ["create /fs/a.md", "create /fs/b.md"]
    assert run.err.splitlines() == [
        "lint missing_frontmatter /fs/a.md: the page has no frontmatter block (--- on line one)",
        "lint broken_link /fs/b.md:4: the link missing.md goes to no page (/fs/missing.md)",
    ]


async def test_lint_lands_links_on_every_page_of_the_folder_parsing_only_those_written(
    tmp_path: Path, settings: HubSettings, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A link to a folder page the import leaves as it is (identical on the hub) or to a folder
    directory is not broken; only the pages to be written are parsed (a page that is not written
    is never linted, even one whose frontmatter would refuse)."""
    from hubcore.services.kb import facts

    await seed(settings, {"/fs/same.md": "---\nbad: [\n---\nsame\n"})
    folder = tmp_path / "bundle"
    write(
        folder,
        {
            "same.md": "---\nbad: [\n---\nsame\n",
            "notes/n.md": FM + "n\n",
            "new.md": FM + "[s](same.md) [d](notes/) [n](notes/n.md) [x](nowhere.md)\n",
        },
    )
    parsed: list[str] = []
    real = facts.derive
    monkeypatch.setattr(facts, "derive", lambda path, *a: parsed.append(path) or real(path, *a))
    async with Hub.open(settings) as hub:
        outcome = await import_folder(LocalKb(hub, ADMIN_CALLER, "demo"), folder, dry_run=True, prune=False)
    assert outcome.code == 0 and outcome.stdout[:-1] == ["would create /fs/new.md", "would create /fs/notes/n.md"]
    assert sorted(set(parsed)) == ["/fs/new.md", "/fs/notes/n.md"]
    assert capsys.readouterr().err.splitlines() == [
        "lint broken_link /fs/new.md:4: the link nowhere.md goes to no page (/fs/nowhere.md)"
    ]


async def test_over_the_byte_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kb_folder, "BYTES_MAX", 10)
    write(tmp_path, {"a.md": "123456", "b.md": "123456"})
    with pytest.raises(CliFailure) as refused:
        read_folder(tmp_path, "demo")
    assert refused.value.message.endswith("holds more than 10000 pages or 10 bytes")


class Failing(LocalKb):
    """The local knowledge base, refusing one page's write the way a hub refusal arrives."""

    fail_on = "/fs/b.md"
    error: BaseException = HubError("invalid_argument", "refused for the test")

    async def write(self, path: str, content: str, if_version: str | None) -> dict[str, Any]:
        if path == self.fail_on:
            raise self.error
        return await super().write(path, content, if_version)


@pytest.mark.parametrize(
    ("error", "code"),
    [(HubError("invalid_argument", "refused for the test"), 1), (CliFailure(69, "cannot reach the hub"), 69)],
)
async def test_a_refusal_stops_the_import(
    tmp_path: Path, settings: HubSettings, error: BaseException, code: int
) -> None:
    await seed(settings, {})
    folder = tmp_path / "bundle"
    write(folder, {"a.md": FM + "a\n", "b.md": FM + "b\n", "c.md": FM + "c\n", "d.md": FM + "d\n"})
    async with Hub.open(settings) as hub:
        failing = Failing(hub, ADMIN_CALLER, "demo")
        failing.error = error
        outcome = await import_folder(failing, folder, dry_run=False, prune=False)
        pages = (await snapshot(hub))["pages"]
    assert outcome.code == code and set(pages) == {"/fs/a.md"}
    assert outcome.stdout[:-1] == ["create /fs/a.md", "not attempted /fs/c.md", "not attempted /fs/d.md"]
    assert counts(outcome.stdout[-1]) == {**NONE, "created": 1, "not attempted": 2, "failed": 1}
    assert outcome.stderr[0].startswith("hub-cli kb: the hub refused /fs/b.md, so the import stopped: ")
    assert set(json.loads((folder / ".hub-kb.json").read_bytes())["pages"]) == {"/fs/a.md"}


async def test_import_over_rest_and_its_exit_codes(tmp_path: Path, settings: HubSettings) -> None:
    folder = tmp_path / "bundle"
    write(folder, {"index.md": FM + "# Home\n", "notes/a.md": FM + "a\n"})
    async with live_hub(settings) as live:
        await live.make_project("demo")
        agent = await live.make_agent("bot")
        env = cli_env(tmp_path, HUB_URL=live.base, HUB_TOKEN=ADMIN_TOKEN, HUB_PROJECT="demo")
        for extra, code in (
            ({"HUB_TOKEN": agent}, 77),
            ({"HUB_URL": f"http://127.0.0.1:{free_port()}"}, 69),
            ({"HUB_TOKEN": ""}, 78),
            ({"HUB_PROJECT": "nowhere"}, 1),
        ):
            runner = cli_here if code == 1 else cli  # the exit statuses of their own from a real process
            run = await runner({**env, **extra}, "kb", "import", "--dir", str(folder))
            assert run.code == code and run.out == "", (extra, run)
        assert not (folder / ".hub-kb.json").exists()
        run = await cli(env, "kb", "import", "--dir", str(folder))
        assert run.code == 0 and run.out.splitlines()[:2] == ["create /fs/index.md", "create /fs/notes/a.md"]
        again = await cli_here(env, "kb", "import", "--dir", str(folder))
        assert counts(again.out.splitlines()[-1]) == {**NONE, "unchanged": 2}
        pages = (await snapshot(live.app.hub))["pages"]
        assert pages == {"/fs/index.md": FM + "# Home\n", "/fs/notes/a.md": FM + "a\n"}
