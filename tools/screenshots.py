"""Screenshots of every screen of the web app, at phone (390 px) and desktop (1280 px) widths.

Run from the checkout: `.venv/bin/python tools/screenshots.py [--out docs/screenshots] [--theme light]
[--screens artifact artifacts]`.
Starts a real `hub-cli serve` on a temporary data directory, seeds it the way its users fill it (the
human's side over REST with the admin token, the agents' over /mcp with their own tokens), then
visits every route of `pwa/js/routes.js` in Debian's Chromium and writes
`<out>/<screen>-<phone|desktop>.png`, the screen named by its module (`inbox`, `project`...).
"""

from __future__ import annotations

import argparse
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from playwright.sync_api import ViewportSize

import httpx

ROOT = Path(__file__).resolve().parent.parent
ROUTES = ROOT / "pwa" / "js" / "routes.js"
CHROMIUM = "/usr/bin/chromium"
TOKEN = "screenshots-admin-token-0123456789"
MODERN = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
WIDTHS: dict[str, ViewportSize] = {"phone": {"width": 390, "height": 844}, "desktop": {"width": 1280, "height": 860}}
Theme = Literal["light", "dark"]
ROUTE = re.compile(r'pattern:\s*"([^"]+)",\s*module:\s*"\./screens/([a-z_]+)\.js"')


def routes() -> list[tuple[str, str]]:
    """(pattern, screen) for every route in routes.js, in its order."""
    found = ROUTE.findall(ROUTES.read_text(encoding="utf-8"))
    if not found:
        raise SystemExit(f"no routes found in {ROUTES}")
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def served(root: Path) -> Iterator[str]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("HUB_")}
    env.update(
        {
            "HUB_CONFIG": str(root / "config.toml"),
            "HUB_DATA_DIR": str(root / "data"),
            "HUB_ADMIN_TOKEN": TOKEN,
            "HUB_BIND": f"127.0.0.1:{port}",
            "HUB_MIN_FREE_BYTES": "0",
            "HUB_SHUTDOWN_GRACE_SECS": "3",
        }
    )
    with subprocess.Popen(
        [sys.executable, "-m", "hubcli", "serve"], env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    ) as proc:
        url = f"http://127.0.0.1:{port}"
        try:
            for _ in range(600):
                try:
                    if httpx.get(url + "/readyz", timeout=2).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                time.sleep(0.1)
            else:
                raise SystemExit("the hub never became ready")
            yield url
        finally:
            proc.terminate()
            proc.wait(30)


class Seeder:
    def __init__(self, url: str) -> None:
        self.http = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30)
        self.n = 0

    def rest(self, method: str, path: str, body: Any = None) -> Any:
        r = self.http.request(method, "/api/v1" + path, json=body)
        r.raise_for_status()
        return r.json() if r.content else None

    def agent(self, agent_id: str, name: str) -> str:
        self.rest("POST", "/agents", {"id": agent_id, "display_name": name})
        return str(self.rest("POST", f"/agents/{agent_id}/token")["token"])

    def mcp(self, token: str, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        self.n += 1
        r = self.http.post(
            "/mcp",
            json={
                "jsonrpc": "2.0",
                "id": self.n,
                "method": "tools/call",
                "params": {"name": tool, "arguments": args, "_meta": META},
            },
            headers={
                "Authorization": f"Bearer {token}",
                "MCP-Protocol-Version": MODERN,
                "Mcp-Method": "tools/call",
                "Mcp-Name": tool,
                "Accept": "application/json, text/event-stream",
            },
        )
        r.raise_for_status()
        result = r.json()["result"]
        if result.get("isError"):
            raise SystemExit(f"{tool} refused: {result}")
        found: dict[str, Any] = result.get("structuredContent") or {}
        return found


def seed(url: str) -> dict[str, str]:
    s = Seeder(url)
    builder = s.agent("builder", "Builder")
    scout = s.agent("scout", "Scout")
    s.rest("POST", "/projects", {"id": "webshop", "display_name": "Web shop"})
    s.rest("POST", "/projects", {"id": "research", "display_name": "Research notes"})
    old = s.mcp(scout, "session_start", {"project_id": "research", "name": "survey"})["session_id"]
    s.mcp(
        scout,
        "brain_put",
        {
            "session_id": old,
            "store": "session",
            "path": "/fs/notes/sources.md",
            "content": "# Sources\n\n- the vendor's changelog\n- two benchmarks\n",
        },
    )
    s.mcp(scout, "session_end", {"session_id": old, "handoff": "Survey done; the summary is in notes/."})
    session = s.mcp(builder, "session_start", {"project_id": "webshop", "name": "checkout-flow"})["session_id"]
    s.mcp(
        builder,
        "brain_put",
        {
            "session_id": session,
            "store": "session",
            "path": "/fs/plan.md",
            "content": "# Plan\n\n1. Cart\n2. Payment\n3. Receipt\n",
        },
    )
    for summary in ("Cart totals fixed", "Payment form wired to the sandbox", "Receipt e-mail drafted"):
        s.mcp(builder, "signal_append", {"project_id": "webshop", "summary": summary, "session_id": session})
    s.mcp(scout, "signal_append", {"project_id": "research", "kind": "finished", "summary": "Survey finished"})
    s.mcp(
        scout,
        "signal_append",
        {"project_id": "research", "kind": "idea", "summary": "Cache the vendor's API answers for a day"},
    )
    s.mcp(
        builder,
        "question_post",
        {
            "project_id": "webshop",
            "summary": "Which payment provider for launch?",
            "body": "Both have a sandbox; fees differ by 0.3 %.",
            "options": ["Stripe", "Adyen", "Decide later"],
        },
    )
    s.mcp(
        builder,
        "question_post",
        {"project_id": "webshop", "summary": "What should the order e-mail say?", "expires_in_seconds": 7200},
    )
    s.mcp(
        builder,
        "signal_append",
        {
            "project_id": "webshop",
            "kind": "approval",
            "summary": "Deploy the checkout to staging?",
            "body": "All tests pass.",
            "expires_in_seconds": 3600,
        },
    )
    seed_wiki(s, builder)
    return {"id": "webshop", "session": str(session), "artifact": seed_artifacts(s, builder, str(session))}


def seed_artifacts(s: Seeder, builder: str, session: str) -> str:
    """Artifacts in the web shop (one with a quote comment and a live draft, one protected); the first's id."""
    from hubmcp.protect import protect_arguments

    page = "<main style='font:16px system-ui;padding:1rem'><h1>Checkout</h1><p>Pay in three steps.</p></main>"
    art = str(
        s.mcp(
            builder,
            "artifact_publish",
            {
                "project_id": "webshop",
                "title": "Checkout mock-up",
                "kind": "html",
                "content": page,
                "session_id": session,
            },
        )["artifact_id"]
    )
    s.rest(
        "POST",
        f"/artifacts/{art}/comments",
        {"body": "Say how long each step takes", "anchor": {"mode": "text", "quote": "Pay in three steps."}},
    )
    s.mcp(
        builder, "artifact_draft", {"artifact_id": art, "content": page.replace("three", "two"), "session_id": session}
    )
    s.mcp(
        builder,
        "artifact_publish",
        {
            "project_id": "webshop",
            "title": "Launch notes",
            "kind": "markdown",
            "content": "# Launch\n\n- staging first\n- then production\n",
        },
    )
    s.mcp(
        builder,
        "artifact_publish",
        protect_arguments(
            "artifact_publish",
            {
                "project_id": "webshop",
                "title": "Provider contract terms",
                "kind": "markdown",
                "content": "Fees: 1.4 %",
                "password": "screenshots only",
            },
        ),
    )
    return art


def seed_wiki(s: Seeder, builder: str) -> None:
    """The web shop's knowledge base: a guide the human reviewed and the agent changed since, pages
    linking to it, one page lint flags."""
    pages = {
        "guides/checkout.md": (
            "Guide",
            "Checkout",
            "# Checkout\n\nThree steps: **cart**, payment, receipt.\n\n"
            "| Step | Owner |\n|---|---|\n| Cart | builder |\n| Payment | builder |\n\n"
            "See [the provider decision](../decisions/provider.md).\n",
        ),
        "decisions/provider.md": (
            "Decision",
            "Payment provider",
            "Both sandboxes work; see [checkout](../guides/checkout.md).\n",
        ),
        "runbooks/deploy.md": ("Runbook", "Deploying", "1. Staging\n2. Production\n"),
    }
    for path, (kind, title, body) in pages.items():
        s.rest(
            "PUT",
            f"/projects/webshop/kb/pages/fs/{path}",
            {"content": f"---\ntype: {kind}\ntitle: {title}\nstatus: active\n---\n{body}"},
        )
    s.rest("POST", "/projects/webshop/kb/pages/fs/guides/checkout.md/review", {})
    s.mcp(
        builder,
        "brain_put",
        {
            "project_id": "webshop",
            "store": "project",
            "path": "/fs/runbooks/deploy.md",
            "content": "---\ntype: Runbook\ntitle: Deploying\nstatus: active\n---\n"
            "1. Staging\n2. Smoke tests\n3. Production\n",
        },
    )
    s.rest("PUT", "/projects/webshop/kb/pages/fs/scratch.md", {"content": "# Scratch\n\n[gone](missing.md)\n"})


def address(pattern: str, ids: dict[str, str], screen: str) -> str:
    if screen == "wiki":
        return f"#/projects/{ids['id']}/wiki?path=/fs/guides/checkout.md"
    value = ids[screen] if screen in ("session", "artifact") else ids["id"]
    if screen == "search":  # hits of several families: the feed's events and the brain's plan
        return "#/search?q=cart"
    return "#" + pattern.replace(":id", value)


def staged(page: Any, screen: str) -> None:
    """What a screen shows beyond its first paint: the artifact viewer with a passage selected in its
    frame (the bar that opens a comment on it)."""
    from playwright.sync_api import expect

    if screen == "artifact":
        page.frame_locator("main iframe.art-frame").locator("p").first.click(click_count=3)
        expect(page.locator("main .art-selection")).to_be_visible()


def shoot(url: str, out: Path, theme: Theme, only: set[str] | None = None) -> list[Path]:
    from playwright.sync_api import expect, sync_playwright

    ids = seed(url)
    written = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            for width, viewport in WIDTHS.items():
                context = browser.new_context(
                    viewport=viewport,
                    base_url=url,
                    color_scheme=theme,
                    service_workers="block",
                    reduced_motion="reduce",
                )
                page = context.new_page()
                page.goto("/app/shell.json")
                for pattern, screen in routes():
                    if only and screen not in only:
                        continue
                    connect = screen == "connect"
                    page.evaluate(
                        "t => t ? localStorage.setItem('agent-hub.token', t)"
                        " : localStorage.removeItem('agent-hub.token')",
                        None if connect else TOKEN,
                    )
                    page.goto("/" + address(pattern, ids, screen))
                    page.wait_for_selector("h1.screen-title")
                    # A locator, not wait_for_function: its polling evaluates a string, which the app's CSP refuses.
                    expect(page.locator("main [role=status]", has_text="Loading")).to_have_count(0)
                    page.wait_for_timeout(250)  # the last rows and the stream's first refresh
                    staged(page, screen)
                    path = out / f"{screen}-{width}.png"
                    page.screenshot(path=str(path), full_page=False)
                    written.append(path)
                context.close()
        finally:
            browser.close()
    return written


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    parser.add_argument("--theme", choices=("light", "dark"), default="light")
    parser.add_argument("--screens", nargs="*", default=None, help="only these screens (e.g. artifact artifacts)")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, served(Path(tmp)) as url:
        for path in shoot(url, args.out, args.theme, set(args.screens) if args.screens else None):
            print(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)


if __name__ == "__main__":
    main()
