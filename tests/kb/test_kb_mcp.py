"""The knowledge base over MCP through the SDK's own client, in both protocol eras: the brain tools
with `store: project`, `brain_promote`, `brain_history`, `brain_revert`, and pages as resources
(template, paged listing, reads and their errors), also through the stdio bridge. Every refusal
leaves the pages, the log, the kept bytes and the feed as they were."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp.client import Client
from mcp.shared.exceptions import MCPError

from hubcore.config import HubSettings
from hubmcp import skills
from tests.cast import web_and_vault
from tests.kb.support import kb_rows, state
from tests.mcp.live import ERAS, LEGACY, MODERN, LiveHub, call, live_hub, refuser, structured
from tests.mcp.test_stdio import cli_env, stdio

pytestmark = pytest.mark.anyio

STATICS = 1 + len(skills.load().files)  # the bootstrap guide and the skill files open the listing


@pytest.fixture
async def live(settings: HubSettings) -> AsyncIterator[LiveHub]:
    async with live_hub(settings) as hub:
        await web_and_vault(hub)
        yield hub


refused = refuser(lambda live: [state(live.app.hub, p) for p in ("web", "vault")])  # no knowledge base changed


@pytest.mark.parametrize("mode", ERAS)
async def test_brain_tools_with_the_project_store(live: LiveHub, mode: str) -> None:
    token = await live.make_agent("bot")
    headers = {"Hub-Connection": "kb-test"} if mode == MODERN else None
    async with live.client(token, mode=mode, headers=headers) as bot:
        # No active session: the project must be named.
        await refused(live, bot, "invalid_argument", "brain_put", path="/fs/a.md", content="x", store="project")
        wrote = await call(
            bot, "brain_put", path="/fs/a.md", content="---\ntype: Concept\n---\nA\n", store="project", project_id="web"
        )
        assert (wrote["ok"], wrote["path"], wrote["store"], wrote["project_id"]) == (True, "/fs/a.md", "project", "web")
        assert wrote["lint"] == [] and wrote["warnings"] == []
        await call(bot, "session_start", project_id="web", name="work")
        # With an active session, its project is the default.
        got = await call(bot, "brain_get", path="/fs/a.md", store="project")
        assert (got["content"], got["version"], got["last_write"]["actor"]) == (
            "---\ntype: Concept\n---\nA\n",
            wrote["version"],
            "bot",
        )
        two = await call(bot, "brain_put", path="/fs/dir/b.md", content="B", store="project", if_version="absent")
        assert [f["code"] for f in two["lint"]] == ["missing_frontmatter"]
        listed = await call(bot, "brain_list", store="project")
        assert listed["path"] == "/fs/" and [e["path"] for e in listed["entries"]] == ["/fs/a.md", "/fs/dir"]
        assert [e["path"] for e in (await call(bot, "brain_list", path="/fs/dir", store="project"))["entries"]] == [
            "/fs/dir/b.md"
        ]
        error = await refused(
            live, bot, "conflict", "brain_put", path="/fs/a.md", content="y", store="project", if_version="absent"
        )
        assert error["message"].endswith(f"current_version={wrote['version']}")
        await call(bot, "brain_delete", path="/fs/dir/b.md", store="project", if_version=two["version"])
        await refused(live, bot, "not_found", "brain_delete", path="/fs/dir/b.md", store="project")
        await refused(live, bot, "not_found", "brain_get", path="/fs/dir/b.md", store="project")
        # The session store is untouched by all of this.
        assert (await call(bot, "brain_list"))["entries"] == []
    assert kb_rows(live.app.hub, "SELECT op, path, actor FROM log ORDER BY id") == [
        ("kb.put", "/fs/a.md", "bot"),
        ("kb.put", "/fs/dir/b.md", "bot"),
        ("kb.delete", "/fs/dir/b.md", "bot"),
    ]


async def test_project_store_refusals(live: LiveHub) -> None:
    token = await live.make_agent("bot")
    async with live.client(token) as bot:
        await call(bot, "session_start", project_id="web", name="work")
        missing = await refused(
            live, bot, "forbidden", "brain_get", path="/fs/a.md", store="project", project_id="nowhere"
        )
        denied = await refused(
            live, bot, "forbidden", "brain_put", path="/fs/a.md", content="x", store="project", project_id="vault"
        )
        assert missing["message"].replace("nowhere", "X") == denied["message"].replace("vault", "X")
        for path in ("/kv/a", "/fs/", "/fs/a\\b.md", "/fs/" + "a" * 509):
            error = await refused(live, bot, "invalid_argument", "brain_put", path=path, content="x", store="project")
            assert "path" in error["message"]
        assert (
            "/fs/"
            in (await refused(live, bot, "invalid_argument", "brain_get", path="/kv/a", store="project"))["message"]
        )
        await refused(live, bot, "invalid_argument", "brain_get", path="/fs/a.md", store="project", session_id="ses_x")
        await refused(
            live,
            bot,
            "payload_too_large",
            "brain_put",
            path="/fs/a.md",
            content="x" * (1024 * 1024 + 1),
            store="project",
        )
        await refused(
            live, bot, "invalid_argument", "brain_put", path="/fs/a.md", content="---\nt: a\x02\n---\n", store="project"
        )
        await refused(live, bot, "invalid_argument", "brain_history", path="/fs/a.md", limit=0)
        await refused(live, bot, "invalid_argument", "brain_revert", path="/fs/a.md", version="v1")
        await refused(live, bot, "not_found", "brain_history", path="/fs/never.md")
        await refused(live, bot, "forbidden", "brain_history", path="/fs/a.md", project_id="vault")
    assert not (live.app.hub.settings.data_path / "kb" / "nowhere.db").exists()


async def test_promote_history_and_revert(live: LiveHub) -> None:
    token = await live.make_agent("bot")
    async with live.client(token, mode=MODERN) as loose, live.client(token) as bot:
        # A 2026-07-28 request without Hub-Connection has no active session to promote from.
        await refused(
            live, loose, "conflict", "brain_promote", from_path="/fs/n.md", to_path="/fs/n.md", project_id="web"
        )
        started = await call(bot, "session_start", project_id="web", name="research")
        await call(bot, "brain_put", path="/fs/n.md", content="Found it.\n", store="session")
        promoted = await call(
            bot, "brain_promote", from_path="/fs/n.md", to_path="/fs/guide/n.md", type="Guide", title="N", tags=["x"]
        )
        assert set(promoted) - {"notifications"} == {"ok", "path", "version", "lint"}
        page = await call(bot, "brain_get", path="/fs/guide/n.md", store="project")
        assert page["content"].endswith("---\nFound it.\n")
        assert f"hub://brain/{started['session_id']}/fs/n.md" in page["content"]
        # The named session works from a client with no active session too.
        again = await call(
            loose,
            "brain_promote",
            from_path="/fs/n.md",
            to_path="/fs/copy.md",
            project_id="web",
            session_id=started["session_id"],
        )
        assert again["path"] == "/fs/copy.md"
        await refused(
            live, bot, "conflict", "brain_promote", from_path="/fs/n.md", to_path="/fs/guide/n.md", if_version="absent"
        )
        await refused(live, bot, "invalid_argument", "brain_promote", from_path="/fs/n.md", to_path="/kv/n")
        edited = await call(bot, "brain_put", path="/fs/guide/n.md", content="Edited.\n", store="project")
        history = await call(bot, "brain_history", path="/fs/guide/n.md")
        assert [(v["op"], v["version"], v["kept"], v["current"]) for v in history["versions"]] == [
            ("kb.put", edited["version"], True, True),
            ("kb.promote", promoted["version"], True, False),
        ]
        assert (history["total"], history["current_version"], history["truncated"]) == (2, edited["version"], False)
        first = await call(bot, "brain_history", path="/fs/guide/n.md", limit=1)
        assert first["truncated"] is True
        older = await call(bot, "brain_history", path="/fs/guide/n.md", before=first["next_before"])
        assert [v["op"] for v in older["versions"]] == ["kb.promote"]
        reverted = await call(bot, "brain_revert", path="/fs/guide/n.md", version=promoted["version"])
        assert (reverted["changed"], reverted["store"], reverted["version"]) == (True, "project", promoted["version"])
        before = state(live.app.hub, "web")
        same = await call(bot, "brain_revert", path="/fs/guide/n.md", version=promoted["version"])
        assert same["changed"] is False and state(live.app.hub, "web") == before
        await call(bot, "brain_delete", path="/fs/guide/n.md", store="project")
        gone = await call(bot, "brain_history", path="/fs/guide/n.md")
        assert gone["current_version"] is None and gone["versions"][0]["op"] == "kb.delete"
        back = await call(bot, "brain_revert", path="/fs/guide/n.md", version=edited["version"], if_version="absent")
        assert back["changed"] is True


# -- resources -----------------------------------------------------------------------------------


async def test_resources_template_read_and_errors(live: LiveHub) -> None:
    token = await live.make_agent("bot")
    hub = live.app.hub
    async with live.client() as human, live.client(token, mode=MODERN) as bot:
        await call(human, "brain_put", path="/fs/a b/naïve.md", content="# Hi\n", store="project", project_id="web")
        await call(human, "brain_put", path="/fs/notes.txt", content="plain", store="project", project_id="web")
        await call(human, "brain_put", path="/fs/s.md", content="secret", store="project", project_id="vault")
        templates = await bot.list_resource_templates()
        assert [(t.uri_template, t.mime_type) for t in templates.resource_templates] == [
            ("hub://kb/{project_id}/{+path}", "text/markdown")
        ]
        page = await bot.read_resource("hub://kb/web/fs/a%20b/na%C3%AFve.md")
        assert (page.contents[0].text, page.contents[0].mime_type) == ("# Hi\n", "text/markdown")  # type: ignore[union-attr]
        plain = await bot.read_resource("hub://kb/web/fs/notes.txt")
        assert plain.contents[0].mime_type == "text/plain"
        before = state(hub, "web")
        answers = []
        for uri in (
            "hub://kb/web/fs/none.md",
            "hub://kb/web",
            "hub://kb/web/",
            "hub://kb/web/fs",
            "hub://kb/web/kv/x",
            "hub://kb/web/fs/a%2Fb.md",
            "hub://kb/web/fs/%ff.md",
            "hub://kb/BAD/fs/a.md",
            "hub://kb/vault/fs/s.md",
            "hub://kb/nowhere/fs/s.md",
            "hub://kbx/web/fs/a.md",
        ):
            with pytest.raises(MCPError) as caught:
                await bot.read_resource(uri)
            answers.append((caught.value.error.code, caught.value.error.data["error"]["code"]))
        assert answers == [(-32602, "not_found")] + [(-32602, "invalid_argument")] * 7 + [(-32050, "forbidden")] * 2 + [
            (-32602, "not_found")
        ]
        assert state(hub, "web") == before
        # The human (the admin) sees the confidential page, and a missing project is simply not found.
        assert (await human.read_resource("hub://kb/vault/fs/s.md")).contents[0].text == "secret"  # type: ignore[union-attr]
        with pytest.raises(MCPError) as caught:
            await human.read_resource("hub://kb/nowhere/fs/s.md")
        assert caught.value.error.data["error"]["code"] == "not_found"


async def listing(client: Client) -> list[list[str]]:
    pages: list[list[str]] = []
    cursor = None
    while True:
        got = await client.list_resources(cursor=cursor)
        pages.append([str(r.uri) for r in got.resources])
        if got.next_cursor is None:
            return pages
        assert got.next_cursor == pages[-1][-1]
        cursor = got.next_cursor


@pytest.mark.parametrize("mode", ERAS)
async def test_resources_list_pages_readable_projects_100_at_a_time(live: LiveHub, mode: str) -> None:
    token = await live.make_agent("bot")
    await live.make_project("alpha")
    async with live.client() as human:
        for i in range(130):
            await call(human, "brain_put", path=f"/fs/p{i:03d}.md", content="x", store="project", project_id="web")
        await call(human, "brain_put", path="/fs/z.md", content="x", store="project", project_id="alpha")
        await call(human, "brain_put", path="/fs/s.md", content="x", store="project", project_id="vault")
        admin_pages = await listing(human)
    assert "hub://kb/vault/fs/s.md" in [u for p in admin_pages for u in p]
    async with live.client(token, mode=mode) as bot:
        pages = await listing(bot)
        flat = [u for p in pages for u in p]
        assert [len(p) for p in pages] == [100, STATICS + 131 - 100]
        kb = flat[STATICS:]
        assert kb == ["hub://kb/alpha/fs/z.md"] + [f"hub://kb/web/fs/p{i:03d}.md" for i in range(130)]
        # A page written after a cursor was issued shows where it sorts; an unissued cursor is refused.
        await call(bot, "brain_put", path="/fs/p999.md", content="x", store="project", project_id="web")
        cursor = pages[0][-1]
        rest = await bot.list_resources(cursor=cursor)
        assert str(rest.resources[-1].uri) == "hub://kb/web/fs/p999.md"
        with pytest.raises(MCPError) as caught:
            await bot.list_resources(cursor="hub://kb/web/fs/p050.md")
        assert caught.value.error.code == -32602


async def test_a_locked_kb_fails_the_page_and_an_unreadable_one_is_skipped(
    live: LiveHub, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    await live.make_project("broken")
    async with live.client() as human:
        await call(human, "brain_put", path="/fs/a.md", content="x", store="project", project_id="web")
        (live.app.hub.settings.data_path / "kb" / "broken.db").write_bytes(b"this is not a database" * 100)
        with caplog.at_level(logging.WARNING, logger="hubcore.kb"):
            pages = await listing(human)
        assert [u for p in pages for u in p][STATICS:] == ["hub://kb/web/fs/a.md"]
        assert any("broken" in r.getMessage() for r in caplog.records)
        files = live.app.hub.kb.files

        async def locked(project_id: str, fn: Any, default: Any) -> Any:
            raise sqlite3.OperationalError("database is locked")

        monkeypatch.setattr(files, "read", locked)
        with pytest.raises(MCPError) as caught:
            await human.list_resources()
        error = caught.value.error.data["error"]
        assert (error["code"], error["retryable"]) == ("unavailable", True)


async def test_the_stdio_bridge_forwards_resources(tmp_path: Path, live: LiveHub) -> None:
    token = await live.make_agent("bot")
    async with live.client() as human:
        await call(human, "brain_put", path="/fs/a.md", content="# A\n", store="project", project_id="web")
    env = cli_env(tmp_path, HUB_URL=live.base, HUB_TOKEN=token)
    for mode in (LEGACY, MODERN):
        async with stdio(env, mode) as client:
            templates = await client.list_resource_templates()
            assert [t.uri_template for t in templates.resource_templates] == ["hub://kb/{project_id}/{+path}"]
            listed = await client.list_resources()
            assert "hub://kb/web/fs/a.md" in [str(r.uri) for r in listed.resources]
            read = await client.read_resource("hub://kb/web/fs/a.md")
            assert read.contents[0].text == "# A\n"  # type: ignore[union-attr]
            with pytest.raises(MCPError) as caught:
                await client.read_resource("hub://kb/web/fs/none.md")
            assert caught.value.error.data["error"]["code"] == "not_found"
            assert (
                structured(
                    await client.call_tool("brain_get", {"path": "/fs/a.md", "store": "project", "project_id": "web"})
                )["content"]
                == "# A\n"
            )
