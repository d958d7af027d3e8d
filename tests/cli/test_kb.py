"""`hub-cli kb get|put|list|delete|history|revert|forget`, on the local data directory and over
REST (HUB_URL with the admin token as HUB_TOKEN): the same commands, outputs and exit codes.

The commands run in this process (`tests.cli.here`) but for these real `hub-cli` processes, which
keep the process boundary covered: `test_put_get_list_delete[local]` (a write from stdin with lint
on stderr, a read to stdout and a refusal, as pipes, the hub opened by the command's own process),
`test_rest_token_and_reach_exit_codes` (the exit statuses 77, 69 and 78 over REST) and
`test_local_refused_while_a_hub_holds_the_directory` (a second process refused the directory)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hubcore.caller import Caller
from hubcore.config import HubSettings
from hubcore.hub import Hub
from hubcore.services.kb.models import KbHistory, KbList, KbRead, KbWrite
from hubcore.services.requests import parse
from tests.cli.conftest import Run, cli, cli_env
from tests.cli.here import cli_here
from tests.harness import ADMIN_TOKEN
from tests.mcp.live import free_port, live_hub
from tests.requests import a_project

pytestmark = pytest.mark.anyio

ADMIN_CALLER = Caller.admin()


async def snapshot(hub: Hub, project: str = "demo") -> dict[str, Any]:
    """What a refusal must leave alone: every page's bytes and the write log's length."""
    listed = await hub.kb.list(ADMIN_CALLER, parse(KbList, {"project_id": project, "meta": True}))
    pages = {}
    for entry in listed["entries"]:
        page = await hub.kb.read(ADMIN_CALLER, parse(KbRead, {"project_id": project, "path": entry["path"]}))
        pages[page["path"]] = page["content"]
    log = await hub.kb.history(ADMIN_CALLER, parse(KbHistory, {"project_id": project, "limit": 0}))
    return {"pages": pages, "log": log["total"]}


@dataclass
class Place:
    """Where the commands act: the env they run with and a way to look at the knowledge base."""

    mode: str
    env: dict[str, str]
    settings: HubSettings
    live_hub: Hub | None = None
    real_process: bool = False  # each command a `hub-cli` process; else run in this one

    async def run(self, *args: str, stdin: bytes = b"", **env: str) -> Run:
        runner = cli if self.real_process else cli_here
        return await runner({**self.env, **env}, "kb", *args, stdin=stdin)

    async def state(self) -> dict[str, Any]:
        if self.live_hub is not None:
            return await snapshot(self.live_hub)
        async with Hub.open(self.settings) as hub:
            return await snapshot(hub)


@pytest.fixture(params=["local", "rest"])
async def place(request: pytest.FixtureRequest, tmp_path: Path, settings: HubSettings) -> AsyncIterator[Place]:
    if request.param == "local":
        async with Hub.open(settings) as hub:
            await hub.projects.create(ADMIN_CALLER, a_project(id="demo"))
        yield Place("local", cli_env(tmp_path, HUB_DATA_DIR=settings.data_dir, HUB_PROJECT="demo"), settings)
        return
    async with live_hub(settings) as live:
        await live.make_project("demo")
        env = cli_env(tmp_path, HUB_URL=live.base, HUB_TOKEN=ADMIN_TOKEN, HUB_PROJECT="demo")
        yield Place("rest", env, settings, live.app.hub)


def ok(run: Run, out: str, err: str = "") -> None:
    assert (run.code, run.out, run.err) == (0, out, err), run


def ok_linted(run: Run, out: str) -> None:
    """Success whose stderr holds only lint findings (a page without frontmatter has one)."""
    assert (run.code, run.out) == (0, out), run
    assert all(line.startswith("lint ") for line in run.err.splitlines()), run.err


def refused(run: Run, code: int, message: str) -> None:
    assert run.code == code and run.out == "", run
    assert run.err.startswith(f"hub-cli kb: {message}"), run.err


async def put(place: Place, path: str, content: str, *flags: str) -> str:
    run = await place.run("put", path, "-", *flags, stdin=content.encode())
    assert run.code == 0, run
    return run.out.split()[-1]


async def test_put_get_list_delete(place: Place, tmp_path: Path) -> None:
    # On the local directory, a write from stdin with lint on stderr, a read to stdout and a refusal
    # go through real processes (over REST: test_rest_token_and_reach_exit_codes); the rest run here.
    place.real_process = place.mode == "local"
    run = await place.run("put", "index.md", "-", stdin=b"# Home\n\nno newline at the end")
    assert run.code == 0 and run.out.startswith("wrote /fs/index.md sha256:")
    # Lint never fails a write; its findings go to stderr.
    assert run.err == "lint missing_frontmatter /fs/index.md: the page has no frontmatter block (--- on line one)\n"
    ok(await place.run("get"), "# Home\n\nno newline at the end")
    real_process, place.real_process = place.real_process, False
    source = tmp_path / "page.md"
    source.write_bytes("caf\u00e9 \u2014 ok\n".encode())
    run = await place.run("put", "notes/a b.md", "--file", str(source))
    assert run.code == 0 and run.out.startswith("wrote /fs/notes/a b.md sha256:")
    ok(await place.run("get", "/fs/notes/a b.md"), "caf\u00e9 \u2014 ok\n")
    ok(await place.run("list"), "/fs/index.md\n/fs/notes/\n")
    ok(await place.run("list", "notes"), "/fs/notes/a b.md\n")
    page = json.loads((await place.run("get", "notes/a b.md", "--json")).out)
    assert page["content"] == "caf\u00e9 \u2014 ok\n" and page["size_bytes"] == len(source.read_bytes())
    assert page["last_write"]["actor"] == "human"
    listed = json.loads((await place.run("list", "--json")).out)
    assert listed == {
        "entries": [
            {"path": "/fs/index.md", "type": "file", "size_bytes": 29, "children": None},
            {"path": "/fs/notes", "type": "dir", "size_bytes": len(source.read_bytes()), "children": 1},
        ],
        "truncated": False,
    }
    ok(await place.run("delete", "notes/a b.md"), "deleted /fs/notes/a b.md\n")
    place.real_process = real_process
    refused(await place.run("get", "notes/a b.md"), 1, "not_found: no page at /fs/notes/a b.md")
    assert (await place.state())["pages"] == {"/fs/index.md": "# Home\n\nno newline at the end"}


async def test_a_path_outside_fs_is_relative_to_it(place: Place) -> None:
    for given in ("a.md", "/b.md", "/fs/c.md", "fs/d.md", "/kv/e.md", "x/../f.md", "../../g.md"):
        assert (await place.run("put", given, "-", stdin=given.encode())).code == 0
    assert (await place.state())["pages"] == {
        "/fs/a.md": "a.md",
        "/fs/b.md": "/b.md",
        "/fs/c.md": "/fs/c.md",
        "/fs/d.md": "fs/d.md",
        "/fs/kv/e.md": "/kv/e.md",
        "/fs/f.md": "x/../f.md",
        "/fs/g.md": "../../g.md",
    }
    ok(await place.run("get", "kv/e.md"), "/kv/e.md")


async def test_if_version(place: Place) -> None:
    first = await put(place, "p.md", "one", "--if-version", "absent")
    refused(
        await place.run("put", "p.md", "-", "--if-version", "absent", stdin=b"again"),
        1,
        f"conflict: if_version does not match; current_version={first}",
    )
    second = await put(place, "p.md", "two", "--if-version", first)
    before = await place.state()
    refused(await place.run("put", "p.md", "-", "--if-version", first, stdin=b"three"), 1, "conflict:")
    refused(await place.run("delete", "p.md", "--if-version", first), 1, "conflict:")
    refused(await place.run("revert", "p.md", first, "--if-version", first), 1, "conflict:")
    assert await place.state() == before
    ok(await place.run("delete", "p.md", "--if-version", second), "deleted /fs/p.md\n")


async def test_history_revert_forget(place: Place) -> None:
    one = await put(place, "p.md", "one")
    two = await put(place, "p.md", "two!")
    ok_linted(await place.run("revert", "p.md", one), f"reverted /fs/p.md {one}\n")
    ok(await place.run("get", "p.md"), "one")
    ok_linted(await place.run("revert", "p.md", one), f"unchanged /fs/p.md {one}\n")
    run = await place.run("history", "p.md")
    lines = [line.split() for line in run.out.splitlines()]
    assert run.code == 0 and lines[0] == ["AT", "OP", "ACTOR", "VERSION", "SIZE", "NOTE"]
    assert [row[1:] for row in lines[1:]] == [
        ["kb.revert", "human", one, "3", "current"],
        ["kb.put", "human", two, "4"],
        ["kb.put", "human", one, "3", "current"],
    ]
    ok(await place.run("forget", "p.md"), "forgot 1 versions of /fs/p.md (4 bytes)\n")
    run = await place.run("history", "p.md", "--json")
    assert [(v["version"], v["kept"]) for v in json.loads(run.out)["versions"]] == [
        (one, True),
        (two, False),
        (one, True),
    ]
    refused(await place.run("revert", "p.md", two), 1, f"not_found: no kept version {two} of /fs/p.md")
    refused(await place.run("get", "p.md", "--version", two), 1, "not_found:")
    ok(await place.run("get", "p.md", "--version", one), "one")
    ok(await place.run("delete", "p.md"), "deleted /fs/p.md\n")
    ok_linted(await place.run("revert", "p.md", one, "--if-version", "absent"), f"reverted /fs/p.md {one}\n")


async def test_history_walks_every_page_of_versions(tmp_path: Path, settings: HubSettings) -> None:
    """The versions route answers 200 rows at most; `history` follows `next_before` to the end."""
    async with live_hub(settings) as live:
        await live.make_project("demo")
        for i in range(205):
            req = parse(KbWrite, {"project_id": "demo", "path": "/fs/busy.md", "content": f"{i:03}"})
            await live.app.hub.kb.write(ADMIN_CALLER, req)
        env = cli_env(tmp_path, HUB_URL=live.base, HUB_TOKEN=ADMIN_TOKEN, HUB_PROJECT="demo")
        run = await cli_here(env, "kb", "history", "busy.md", "--json")
    found = json.loads(run.out)
    assert run.code == 0 and len(found["versions"]) == 205 and found["truncated"] is False
    assert found["versions"][0]["current"] and found["versions"][-1]["size_bytes"] == 3


async def test_refusals_write_nothing(place: Place, tmp_path: Path) -> None:
    await put(place, "p.md", "kept")
    before = await place.state()
    bad = tmp_path / "bad.md"
    bad.write_bytes(b"ok \xff no")
    cases: list[tuple[tuple[str, ...], bytes, int, str]] = [
        (("put", "a\\b.md", "-"), b"x", 2, "invalid_argument: path must not hold a control character"),
        (("put", "/fs/", "-"), b"x", 2, "invalid_argument: path names the /fs/ namespace itself"),
        (("put", "a" * 509 + ".md", "-"), b"x", 2, "invalid_argument: path is 516 bytes once canonical"),
        (("put", "x.md"), b"", 2, "give the content as - (stdin) or --file F"),
        (("put", "x.md", "-", "--file", str(bad)), b"", 2, "give the content as - (stdin) or --file F"),
        (("put", "x.md", "--file", str(bad)), b"", 2, f"{bad} is not UTF-8 text (byte 3)"),
        (("put", "x.md", "-"), b"\xc3(", 2, "stdin is not UTF-8 text (byte 0)"),
        (("put", "x.md", "--file", str(tmp_path / "none.md")), b"", 2, "cannot read"),
        (("put", "x.md", "-"), b"a" * (1024 * 1024 + 1), 1, "payload_too_large:"),
        (("put", "x.md", "-", "--project", "nowhere"), b"x", 1, "not_found: project 'nowhere'"),
        (("put", "x.md", "-", "--if-version", "nonsense"), b"x", 1, "invalid_argument:"),
        (("get", "x.md"), b"", 1, "not_found: no page at /fs/x.md"),
        (("get",), b"", 1, "not_found: no page at /fs/index.md"),
        (("list", "p.md"), b"", 1, "conflict: /fs/p.md is a page"),
        (("delete", "x.md"), b"", 1, "not_found: no page at /fs/x.md"),
        (("revert", "p.md", "sha256:" + "0" * 64), b"", 1, "not_found: no kept version"),
        (("forget", "x.md"), b"", 1, "not_found:"),
        (("history", "x.md"), b"", 1, "not_found:"),
    ]
    for args, stdin, code, message in cases:
        run = await place.run(*args, stdin=stdin)
        assert run.code == code and run.out == "", (args, run)
        assert run.err.startswith(f"hub-cli kb: {message}"), (args, run.err)
    refused(
        await place.run("put", "x.md", "-", stdin=b"x", HUB_PROJECT=""),
        2,
        "name the project with --project or HUB_PROJECT",
    )
    run = await place.run("revert", "p.md")
    assert run.code == 2 and run.out == "" and "Missing argument" in run.err
    assert await place.state() == before


async def test_rest_token_and_reach_exit_codes(tmp_path: Path, settings: HubSettings) -> None:
    async with live_hub(settings) as live:
        await live.make_project("demo")
        agent = await live.make_agent("bot")
        base = cli_env(tmp_path, HUB_URL=live.base, HUB_PROJECT="demo")
        before = await snapshot(live.app.hub)
        cases = [
            ({"HUB_TOKEN": agent}, ("put", "x.md", "-"), 77, "the hub refused the token"),  # admin routes
            ({"HUB_TOKEN": "hub_wrong"}, ("get",), 77, "the hub refused the token"),
            ({"HUB_TOKEN": ADMIN_TOKEN, "HUB_URL": f"http://127.0.0.1:{free_port()}"}, ("get",), 69, "cannot reach"),
            ({}, ("put", "x.md", "-"), 78, "no token set"),
        ]
        for extra, args, code, message in cases:
            run = await cli({**base, **extra}, "kb", *args, stdin=b"x")
            assert run.code == code and run.out == "", (args, run)
            assert run.err.startswith(f"hub-cli kb: {message}"), run.err
        assert await snapshot(live.app.hub) == before


async def test_local_refused_while_a_hub_holds_the_directory(tmp_path: Path, settings: HubSettings) -> None:
    async with live_hub(settings) as live:
        await live.make_project("demo")
        env = cli_env(tmp_path, HUB_DATA_DIR=settings.data_dir, HUB_PROJECT="demo")
        for args in (("put", "x.md", "-"), ("get",), ("list",)):
            run = await cli(env, "kb", *args, stdin=b"x")
            assert run.code == 1 and run.out == "", (args, run)
            assert run.err == (
                f"hub-cli kb: data directory {settings.data_path} is in use by a running hub; "
                "set HUB_URL to reach it instead\n"
            )
        assert (await snapshot(live.app.hub))["pages"] == {}


async def test_json_answers(place: Place) -> None:
    run = await place.run("put", "p.md", "-", "--json", stdin=b"---\ntype: Guide\n---\nbody\n")
    written = json.loads(run.out)
    assert run.code == 0 and set(written) == {"ok", "path", "version", "size_bytes", "lint", "warnings"}
    assert (written["path"], written["size_bytes"]) == ("/fs/p.md", 25)
    reverted = json.loads((await place.run("revert", "p.md", written["version"], "--json")).out)
    assert reverted["changed"] is False and reverted["version"] == written["version"]
    assert json.loads((await place.run("delete", "p.md", "--json")).out) == {"ok": True, "path": "/fs/p.md"}
