"""First run (issue 25 part 6): a hub no agent has called shows, on Home, how to connect the first
agent: the exact MCP configuration for Claude Code, Codex, VS Code and Cursor with this hub's
address, where the token comes from, and `hub-cli enrol`; the guide is gone once an agent called."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from playwright.sync_api import expect

from tests.foundation.test_serve_e2e import base_env, serve, wait_ready
from tests.webapp.conftest import ADMIN_TOKEN, DESKTOP, PHONE, Hub, open_app

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def empty_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hub]:
    """A hub of its own, with no agent yet (the package's hub has many)."""
    tmp = tmp_path_factory.mktemp("first-run-hub")
    with serve(base_env(tmp, HUB_ADMIN_TOKEN=ADMIN_TOKEN)) as served:
        wait_ready(served.url)
        with httpx.Client(base_url=served.url, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}, timeout=30) as http:
            yield Hub(served.url, tmp / "data", http)
        assert served.stop() == 0


def snippets(page: Any) -> dict[str, str]:
    guide = page.locator(".first-run")
    return {c.get_attribute("data-client"): c.locator("pre").text_content() for c in guide.locator(".client").all()}


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["390", "1280"])
def test_the_guide_shows_this_hubs_exact_configuration(browser: Any, empty_hub: Hub, viewport: dict[str, int]) -> None:
    if any(a["last_seen_at"] for a in empty_hub.rest("GET", "/agents")["agents"]):
        pytest.skip("an agent has called this module's hub (the test that does runs last)")
    page = open_app(browser, empty_hub, viewport)
    try:
        guide = page.locator(".first-run")
        expect(guide.locator("h2")).to_have_text("Connect your first agent")
        url = empty_hub.url
        shown = snippets(page)
        assert shown["Claude Code"] == (
            f'claude mcp add --transport http agent-hub {url}/mcp --header "Authorization: Bearer <AGENT_TOKEN>"'
        )
        assert shown["Codex"] == (
            f'[mcp_servers.agent-hub]\nurl = "{url}/mcp"\nbearer_token_env_var = "AGENT_HUB_TOKEN"'
        )
        vscode = json.loads(shown["VS Code"])
        assert vscode["servers"]["agent-hub"] == {
            "type": "http",
            "url": f"{url}/mcp",
            "headers": {"Authorization": "Bearer ${input:agent-hub-token}"},
        }
        assert vscode["inputs"][0]["password"] is True
        assert json.loads(shown["Cursor"]) == {
            "mcpServers": {"agent-hub": {"url": f"{url}/mcp", "headers": {"Authorization": "Bearer <AGENT_TOKEN>"}}}
        }
        expect(guide.locator("#first-run-enrol")).to_have_text(f'hub-cli enrol --url {url} "why, in one line"')
        expect(guide.get_by_role("link", name="Access")).to_have_attribute("href", "#/access")
        for pre in guide.locator("pre").all():  # long lines scroll inside their box, never widen the page
            assert pre.bounding_box()["x"] + pre.bounding_box()["width"] <= viewport["width"]
        assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
    finally:
        errors = page.page_errors
        page.context.close()
    assert errors == []


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_guide_has_no_serious_violation(browser: Any, empty_hub: Hub, theme: str) -> None:
    from tests.webapp.test_a11y import audit

    if any(a["last_seen_at"] for a in empty_hub.rest("GET", "/agents")["agents"]):
        pytest.skip("an agent has called this module's hub (the test that does runs last)")
    page = open_app(browser, empty_hub, PHONE, color_scheme=theme)
    try:
        expect(page.locator(".first-run")).to_be_visible()
        assert audit(page) == []
    finally:
        page.context.close()


def test_zz_the_guide_goes_once_an_agent_has_called(browser: Any, empty_hub: Hub) -> None:
    token = empty_hub.new_agent("first")  # an agent with a token that has not called yet
    page = open_app(browser, empty_hub, PHONE)
    try:
        expect(page.locator(".first-run")).to_be_visible()
        empty_hub.mcp(token, "whoami", {})  # the agent's first call
        page.reload()
        expect(page.locator(".stat-row")).to_be_visible()
        expect(page.locator(".first-run")).to_have_count(0)
        seen = {a["id"]: a["last_seen_at"] for a in empty_hub.rest("GET", "/agents")["agents"]}
        assert seen["first"]  # what the hub stored: the call
    finally:
        errors = page.page_errors
        page.context.close()
    assert errors == []
