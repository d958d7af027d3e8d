"""The diff review screen's first paint (issue 29): a sibling of tools/bench/webapp.py (not yet one of its rows).

A 10,000-line diff (100 files of 100 changed and context lines, in hunks) is published over /mcp
by an agent; the app opens it on a phone profile: a 390 x 844 viewport and Chromium's CPU slowed 4x
through the DevTools protocol (`Emulation.setCPUThrottlingRate`). Timed: from setting
`#/artifacts/<id>` in an open app to the second animation frame after the first file's hunks are
drawn (the file list and the first screen of lines painted). The screen draws a file only as it
scrolls near, so the rest of the diff costs nothing here. Also timed unthrottled. Baseline: the
screen's reads over HTTP alone (the artifact with its 10,000 lines, its versions, live state,
comments and the waiting inbox), in the same run. Target (issue 29): under 1 s throttled.

Alone, on a hub of its own: `.venv/bin/python tools/bench/webapp_review.py [--runs N] [--lines N]`.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if not __package__:  # run as `python tools/bench/<name>.py`: tools/bench/__init__.py says why
    del sys.path[0]
    if importlib.util.find_spec("tools") is None:
        sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import httpx

MODERN = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
PHONE = {"width": 390, "height": 844}
# Resolves at the second animation frame after the first file section is drawn.
WATCH_DRAWN = """() => new Promise(resolve => {
  const done = () => requestAnimationFrame(() => requestAnimationFrame(() =>
    resolve(performance.timeOrigin + performance.now())));
  const obs = new MutationObserver(() => {
    if (document.querySelector("main section.diff-file[data-drawn] .dl")) { obs.disconnect(); done(); }
  });
  obs.observe(document.body, { childList: true, subtree: true, attributes: true });
})"""


def big_diff(lines: int, files: int = 100) -> str:
    """About `lines` hunk lines over `files` files: hunks of 3 context, 2 removed, 2 added, 3 context."""
    per_file = max(1, lines // files)
    out = []
    for f in range(files):
        path = f"src/module_{f:03d}/file_{f:03d}.py"
        out.append(f"diff --git a/{path} b/{path}\nindex 1111111..2222222 100644\n--- a/{path}\n+++ b/{path}\n")
        for k in range(per_file // 10):
            start = k * 20 + 1
            out.append(f"@@ -{start},8 +{start},8 @@ def function_{k}():\n")
            out.append("".join(f"     context = compute({start + n}, 'value')\n" for n in range(3)))
            out.append(f"-    old_name_{k} = call(alpha, beta)\n-    return old_name_{k} + 1\n")
            out.append(f"+    new_name_{k} = call(alpha, beta, gamma)\n+    return new_name_{k} + 2\n")
            out.append("".join(f"     trailing = finish({start + n})\n" for n in range(3)))
    return "".join(out)


def seed(url: str, token: str, lines: int) -> str:
    admin = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=url, headers=admin, timeout=120) as http:
        http.post("/api/v1/projects", json={"id": "review-bench"}).raise_for_status()
        http.post("/api/v1/agents", json={"id": "coder", "display_name": "Coder"}).raise_for_status()
        agent = http.post("/api/v1/agents/coder/token").json()["token"]
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "artifact_publish", "arguments": {"project_id": "review-bench", "title": "Big change",
                                                      "kind": "diff", "content": big_diff(lines)}, "_meta": META}}
        r = http.post("/mcp", json=call, headers={
            "Authorization": f"Bearer {agent}", "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call",
            "Mcp-Name": "artifact_publish", "Accept": "application/json, text/event-stream"})
        r.raise_for_status()
        return str(r.json()["result"]["structuredContent"]["artifact_id"])


def paint_times(page: Any, artifact_id: str, runs: int) -> list[float]:
    times: list[float] = []
    for _ in range(runs):
        page.evaluate("() => { location.hash = '#/'; }")
        page.wait_for_selector("h1.screen-title:has-text('Home')")
        page.evaluate(f"() => {{ window.__drawn = ({WATCH_DRAWN})(); }}")
        started = page.evaluate("id => { const t = performance.timeOrigin + performance.now();"
                                " location.hash = '#/artifacts/' + id; return t; }", artifact_id)
        times.append(page.evaluate("() => window.__drawn") - started)
    return times


def reads_alone(url: str, token: str, artifact_id: str, runs: int) -> list[float]:
    base = f"/api/v1/artifacts/{artifact_id}"
    times: list[float] = []
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=60) as http:
        for _ in range(runs):
            started = time.perf_counter()
            for path in (base, base + "/versions", base + "/live", base + "/comments", "/api/v1/inbox"):
                http.get(path).raise_for_status()
            times.append((time.perf_counter() - started) * 1000)
    return times


def run(browser: Any, url: str, token: str, connected: Any, runs: int, lines: int = 10_000) -> list[str]:
    """The row's report lines (markdown), measured on the hub at `url`."""
    artifact_id = seed(url, token, lines)
    page = connected(browser, url, "#/")
    try:
        page.set_viewport_size(PHONE)
        fast = paint_times(page, artifact_id, runs + 1)[1:]  # the first loads the screen's modules
        cdp = page.context.new_cdp_session(page)
        cdp.send("Emulation.setCPUThrottlingRate", {"rate": 4})
        slow = paint_times(page, artifact_id, runs)
        cdp.send("Emulation.setCPUThrottlingRate", {"rate": 1})
        cdp.detach()
    finally:
        page.context.close()
    alone = reads_alone(url, token, artifact_id, runs)
    med, base = statistics.median, statistics.median(alone)
    return [f"\n## The diff review screen: a {lines:,}-line diff's first screen on a phone ({runs} runs)\n",
            "| | median ms | max ms | baseline median ms (its reads over HTTP alone) | ratio |",
            "|---|---|---|---|---|",
            f"| 390 px, CPU 4x slower | {med(slow):.0f} | {max(slow):.0f} | {base:.0f} | {med(slow) / base:.1f} |",
            f"| 390 px, CPU unthrottled | {med(fast):.0f} | {max(fast):.0f} | {base:.0f} | {med(fast) / base:.1f} |",
            f"\nworst throttled {max(slow):.0f} ms (target under 1 s: {'met' if max(slow) < 1000 else 'NOT met'})"]


def main(argv: list[str] | None = None) -> None:
    from playwright.sync_api import sync_playwright

    from tools.bench import webapp

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7, help="opens timed, throttled and not")
    parser.add_argument("--lines", type=int, default=10_000, help="lines of the diff")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp, webapp.served(Path(tmp)) as url, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=webapp.CHROMIUM, args=["--no-sandbox"])
        try:
            lines = run(browser, url, webapp.TOKEN, webapp.connected, args.runs, args.lines)
        finally:
            browser.close()
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; {os.cpu_count()} cores")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
