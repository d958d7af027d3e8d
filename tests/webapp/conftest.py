"""Web app tests: Debian's Chromium driven by Playwright (DESIGN section 8) against a real
`hub-cli serve`: one hub and one browser for each xdist worker (session-scoped, started by the
worker's first test that asks, so the package's tests spread over the workers: tests/suite.py), a
fresh browser context per test.

The hub is seeded the way its users fill it: the human's side through the REST API with the admin
token (`hub.rest`), the agents' side over MCP with an agent token (`hub.agent_call` runs `hub-cli
call`, as an agent's shell would; `hub.mcp` posts the same JSON-RPC call straight to /mcp, for the
tests and the benchmark that need many). `app_page` is the app opened and connected (the token in
local storage, as Connect leaves it) at phone width; `app_page_desktop` at 1280 px.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.foundation.test_serve_e2e import base_env, serve, wait_ready
from tests.mcp.test_stdio import HUB_CLI

ADMIN_TOKEN = "webapp-admin-token-0123456789abcdef"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}
MODERN_MCP = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN_MCP, "io.modelcontextprotocol/clientCapabilities": {}}

pytestmark = pytest.mark.browser


@dataclass
class Hub:
    url: str
    data_dir: Path
    http: httpx.Client  # the admin's REST client
    tokens: dict[str, str] = field(default_factory=dict)
    _ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    def rest(self, method: str, path: str, json: Any = None, expect: int | None = None) -> Any:
        """A REST call as the admin (`path` under /api/v1); the parsed body, or None for 204."""
        r = self.http.request(method, "/api/v1" + path, json=json)
        if expect is not None:
            assert r.status_code == expect, (method, path, r.status_code, r.text)
        else:
            assert r.is_success, (method, path, r.status_code, r.text)
        return r.json() if r.content else None

    def new_agent(self, agent_id: str) -> str:
        """An agent with a live token: made once per id in this hub; a token issued again when a test
        replaced or revoked the one kept (and dropped it from `tokens`)."""
        if agent_id not in self.tokens:
            made = self.http.post("/api/v1/agents", json={"id": agent_id, "display_name": agent_id.title()})
            assert made.status_code in (201, 409), made.text
            self.tokens[agent_id] = self.rest("POST", f"/agents/{agent_id}/token", expect=201)["token"]
        return self.tokens[agent_id]

    def new_project(self, prefix: str = "proj") -> str:
        project_id = f"{prefix}-{next(self._ids)}"
        self.rest("POST", "/projects", {"id": project_id}, expect=201)
        return project_id

    def agent_call(self, agent_token: str, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        """One tool call through `hub-cli call` with the agent's token, as an agent would make it."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("HUB_")}
        env.update(
            {
                "HUB_CONFIG": str(self.data_dir.parent / "agent-client.toml"),
                "HUB_URL": self.url,
                "HUB_TOKEN": agent_token,
            }
        )
        done = subprocess.run(
            [HUB_CLI, "call", tool, "-"],
            env=env,
            input=json.dumps(args),
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
        assert done.returncode == 0, (done.stdout, done.stderr)
        result: dict[str, Any] = json.loads(done.stdout)
        return result

    def mcp(self, agent_token: str, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        """The same call posted straight to /mcp (the stateless protocol era: one POST, one JSON
        answer): a fraction of a process start, for tests that seed many items."""
        r = self.http.post(
            "/mcp",
            json={
                "jsonrpc": "2.0",
                "id": next(self._ids),
                "method": "tools/call",
                "params": {"name": tool, "arguments": args, "_meta": META},
            },
            headers={
                "Authorization": f"Bearer {agent_token}",
                "MCP-Protocol-Version": MODERN_MCP,
                "Accept": "application/json, text/event-stream",
                "Mcp-Method": "tools/call",
                "Mcp-Name": tool,
            },
        )
        assert r.status_code == 200, r.text
        body = r.json()
        assert "error" not in body and not body["result"].get("isError"), body
        result = body["result"]
        found: dict[str, Any] = result.get("structuredContent") or json.loads(result["content"][0]["text"])
        return found

    def question(self, agent_token: str, project_id: str, summary: str, **extra: Any) -> str:
        return str(
            self.mcp(agent_token, "question_post", {"project_id": project_id, "summary": summary, **extra})["event_id"]
        )

    def approval(self, agent_token: str, project_id: str, summary: str, **extra: Any) -> str:
        return str(
            self.mcp(
                agent_token,
                "signal_append",
                {"project_id": project_id, "summary": summary, "kind": "approval", **extra},
            )["event_id"]
        )

    def wait_last_seen(self, project_id: str, want: str) -> None:
        """The app posts the human's feed cursor after drawing; poll the hub (no fixed sleep) until it lands."""
        deadline = time.monotonic() + 10
        while (seen := self.rest("GET", f"/projects/{project_id}/feed?limit=1")["last_seen"]) != want:
            assert time.monotonic() < deadline, (seen, want)
            time.sleep(0.05)

    def item(self, event_id: str) -> dict[str, Any]:
        """The inbox entry as the hub stores it now."""
        items = self.rest("GET", "/inbox", None)["items"]
        found = [i for i in items if i["event_id"] == event_id]
        assert found, f"{event_id} is not in the inbox"
        return dict(found[0])


@pytest.fixture(scope="session")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hub]:
    """This worker's hub for the package, started by the first test that asks: tests share it, each
    with its own projects and agents, so none counts on what another left or did not leave."""
    tmp = tmp_path_factory.mktemp("webapp-hub")
    env = base_env(tmp, HUB_ADMIN_TOKEN=ADMIN_TOKEN)
    with serve(env) as served:
        wait_ready(served.url)
        headers = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
        with httpx.Client(base_url=served.url, headers=headers, timeout=30) as http:
            yield Hub(served.url, tmp / "data", http)
        assert served.stop() == 0


PageErrors = list[str]


def open_app(
    browser: Any,
    hub: Hub,
    viewport: dict[str, int],
    *,
    token: str | None = ADMIN_TOKEN,
    hash_: str = "#/",
    color_scheme: str = "light",
    service_workers: str = "block",
    undo_seconds: int = 0,
    clock: bool = False,
) -> Any:
    """A fresh context with the app opened at `hash_`, connected with `token` (None: not connected).
    Service workers are blocked unless asked for, so a test sees the network, not a cache. Answers
    are sent at once (the Settings choice "Off") unless `undo_seconds` holds them for Undo; `clock`
    installs Playwright's fake clock before the app loads (`page.clock.run_for`)."""
    context = browser.new_context(
        viewport=viewport, base_url=hub.url, color_scheme=color_scheme, service_workers=service_workers
    )
    page = context.new_page()
    if clock:
        page.clock.install()
    errors: PageErrors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("dialog", lambda d: errors.append(f"native dialog: {d.type} {d.message}"))
    page.page_errors = errors
    stored: dict[str, str] = {}  # what Connect and Settings leave in local storage, written before the app loads
    if token is not None:
        stored["agent-hub.token"] = token
    if undo_seconds != 5:
        stored["agent-hub.settings"] = json.dumps({"undoSeconds": undo_seconds}, separators=(",", ":"))
    if stored:  # one navigation to the origin for both (each costs a page load's CPU)
        page.goto("/app/shell.json")
        page.evaluate("kv => Object.entries(kv).forEach(([k, v]) => localStorage.setItem(k, v))", stored)
    page.goto("/" + hash_)
    page.wait_for_selector("h1.screen-title")
    return page


@pytest.fixture
def app_page(browser: Any, hub: Hub) -> Iterator[Any]:
    page = open_app(browser, hub, PHONE)
    try:
        yield page
    finally:
        errors = page.page_errors
        page.context.close()
    assert errors == [], errors


@pytest.fixture
def app_page_desktop(browser: Any, hub: Hub) -> Iterator[Any]:
    page = open_app(browser, hub, DESKTOP)
    try:
        yield page
    finally:
        errors = page.page_errors
        page.context.close()
    assert errors == [], errors


@pytest.fixture
def opener(browser: Any, hub: Hub) -> Iterator[Callable[..., Any]]:
    """Open the app in a context of the test's choosing: `opener(viewport=..., token=..., hash_=...)`."""
    contexts: list[Any] = []

    def open_(viewport: dict[str, int] = PHONE, **kwargs: Any) -> Any:
        page = open_app(browser, hub, viewport, **kwargs)
        contexts.append(page)
        return page

    yield open_
    for page in contexts:
        page.context.close()
