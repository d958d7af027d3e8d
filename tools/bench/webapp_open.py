"""What the web app's screen benches share: an agent publishing over /mcp, timing an address opened
in an open app (with a deadline, so a watch that never matches fails the run instead of hanging it),
and running one bench alone on a hub of its own.

tools/bench/webapp_review.py uses all of it; tools/bench/webapp_artifacts.py its MCP call and
`open_times` (watching the artifact frame's load).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

MODERN = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
DEADLINE_MS = 60_000  # one open that takes this long is a broken watch, not a slow screen


def new_agent(http: httpx.Client, agent_id: str) -> str:
    """An agent made by the admin client `http`; returns its token."""
    http.post("/api/v1/agents", json={"id": agent_id, "display_name": agent_id.capitalize()}).raise_for_status()
    return str(http.post(f"/api/v1/agents/{agent_id}/token").json()["token"])


def tool(http: httpx.Client, agent: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """One MCP tool call as the agent's client makes it (a JSON-RPC POST); its structured result."""
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments, "_meta": META},
    }
    r = http.post(
        "/mcp",
        json=call,
        headers={
            "Authorization": f"Bearer {agent}",
            "MCP-Protocol-Version": MODERN,
            "Mcp-Method": "tools/call",
            "Mcp-Name": name,
            "Accept": "application/json, text/event-stream",
        },
    )
    r.raise_for_status()
    result = r.json()["result"]
    if result.get("isError"):
        raise RuntimeError(f"{name} refused: {result['content'][0]['text']}")
    return dict(result["structuredContent"])


def open_times(
    page: Any,
    address: str,
    runs: int,
    watch: str,
    *,
    away: str = "#/",
    away_selector: str = "h1.screen-title:has-text('Home')",
) -> list[float]:
    """Milliseconds from setting `address` in the open app to the time `watch` resolves with (a JS
    function returning a promise of a `performance.timeOrigin + now()` stamp), `runs` times, going
    to `away` between runs. The watch is set before the address (evaluating it then would wait for
    the navigation it times) and raced against DEADLINE_MS in the page."""
    race = (
        f"() => {{ window.__opened = Promise.race([({watch})(), new Promise((_, no) => setTimeout(() =>"
        f" no(new Error('not painted in {DEADLINE_MS} ms; the page shows: '"
        f" + (document.querySelector('main') || document.body).innerText.slice(0, 300))), {DEADLINE_MS}))]); }}"
    )
    times: list[float] = []
    for _ in range(runs):
        page.evaluate("h => { location.hash = h; }", away)
        page.wait_for_selector(away_selector)
        page.evaluate(race)
        started = page.evaluate(
            "h => { const t = performance.timeOrigin + performance.now(); location.hash = h; return t; }", address
        )
        times.append(page.evaluate("() => window.__opened") - started)
    return times


def run_alone(measure: Callable[[Any, str, str, Any], list[str]]) -> None:
    """`measure(browser, url, token, connected)` on a hub of its own (tools/bench/webapp.py's
    `served`), then the load and its report lines printed."""
    from playwright.sync_api import sync_playwright

    from tools.bench import webapp

    with tempfile.TemporaryDirectory() as tmp, webapp.served(Path(tmp)) as url, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=webapp.CHROMIUM, args=["--no-sandbox"])
        try:
            lines = measure(browser, url, webapp.TOKEN, webapp.connected)
        finally:
            browser.close()
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; {os.cpu_count()} cores")
    print("\n".join(lines))
