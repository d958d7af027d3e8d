"""The web app's artifact viewer (issue 18 part 2), a row of tools/bench/webapp.py on the hub it runs.

1. Open: from setting `#/artifacts/<id>` in an open app to the next animation frame after the
   sandboxed frame's `load` (the screen's reads, a viewer pass, the hub's /frame and the artifact's
   own document), over `runs` opens of an HTML artifact of about 20 KB. Baseline: the same requests
   over HTTP alone (GET the artifact, its versions, its live state, a viewer pass, then the frame).
2. Unlock: a protected version's key derived and its text decrypted in the page with WebCrypto
   (PBKDF2-HMAC-SHA256 at the envelope's 600,000 iterations, then AES-256-GCM), the app's own module
   timed in Chromium. Baseline: the same derivation in Python's hashlib (OpenSSL) in this run.
   Both are the cost the password gate adds; the hub does no work for it.

Alone, on a hub of its own: `.venv/bin/python tools/bench/webapp_artifacts.py [--runs N]`.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
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

from hubmcp.protect import protect_arguments

MODERN = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
PASSWORD = "bench password, never sent"
# Stamps the frame's load in the page, then the next animation frame.
WATCH_FRAME = """() => new Promise(resolve => {
  const seen = (frame) => frame.addEventListener("load", () => requestAnimationFrame(() =>
    resolve(performance.timeOrigin + performance.now())), { once: true });
  const obs = new MutationObserver(() => {
    const frame = document.querySelector("main iframe.art-frame");
    if (frame) { obs.disconnect(); seen(frame); }
  });
  obs.observe(document.body, { childList: true, subtree: true });
})"""
DECRYPT = """async ([envelope, ciphertext, password]) => {
  const { decrypt } = await import("/app/js/screens/parts/artframe.js");
  const started = performance.now();
  const text = await decrypt(envelope, ciphertext, password);
  return [performance.now() - started, text.length];
}"""


def seed(url: str, token: str) -> tuple[str, str]:
    """An HTML artifact and a protected one in project `arts`, published over /mcp by an agent."""
    admin = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=url, headers=admin, timeout=60) as http:
        http.post("/api/v1/projects", json={"id": "arts"}).raise_for_status()
        http.post("/api/v1/agents", json={"id": "painter", "display_name": "Painter"}).raise_for_status()
        agent = http.post("/api/v1/agents/painter/token").json()["token"]
        body = "<main>" + "".join(f"<p>Paragraph {n}: the plan, step by step.</p>" for n in range(500)) + "</main>"
        ids: list[str] = []
        for args in ({"title": "Plan", "kind": "html", "content": body},
                     protect_arguments("artifact_publish", {"title": "Locked plan", "kind": "html",
                                                            "content": body, "password": PASSWORD})):
            call = {"jsonrpc": "2.0", "id": len(ids), "method": "tools/call", "params": {
                "name": "artifact_publish", "arguments": {"project_id": "arts", **args}, "_meta": META}}
            r = http.post("/mcp", json=call, headers={
                "Authorization": f"Bearer {agent}", "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call",
                "Mcp-Name": "artifact_publish", "Accept": "application/json, text/event-stream"})
            r.raise_for_status()
            ids.append(str(r.json()["result"]["structuredContent"]["artifact_id"]))
    return ids[0], ids[1]


def open_times(page: Any, artifact_id: str, runs: int) -> list[float]:
    times: list[float] = []
    for _ in range(runs):
        page.evaluate("() => { location.hash = '#/'; }")
        page.wait_for_selector("h1.screen-title:has-text('Home')")
        page.evaluate(f"() => {{ window.__framed = ({WATCH_FRAME})(); }}")
        started = page.evaluate("id => { const t = performance.timeOrigin + performance.now();"
                                " location.hash = '#/artifacts/' + id; return t; }", artifact_id)
        times.append(page.evaluate("() => window.__framed") - started)
    return times


def open_alone(url: str, token: str, artifact_id: str, runs: int) -> list[float]:
    times: list[float] = []
    base = f"/api/v1/artifacts/{artifact_id}"
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=30) as http:
        for _ in range(runs):
            started = time.perf_counter()
            for path in ("", "/versions", "/live"):
                http.get(base + path).raise_for_status()
            viewer_pass = http.get(f"{base}/viewer-pass").json()["pass"]
            http.get(f"/artifacts/{artifact_id}/frame", params={"version": 1, "pass": viewer_pass}).raise_for_status()
            times.append((time.perf_counter() - started) * 1000)
    return times


def unlock_times(page: Any, url: str, token: str, locked_id: str, runs: int) -> tuple[list[float], list[float]]:
    found = httpx.get(f"{url}/api/v1/artifacts/{locked_id}", headers={"Authorization": f"Bearer {token}"}).json()
    envelope = found["envelope"]
    browser: list[float] = []
    python: list[float] = []
    for _ in range(runs):
        took, length = page.evaluate(DECRYPT, [envelope, found["content"], PASSWORD])
        assert length > 0
        browser.append(took)
        started = time.perf_counter()
        hashlib.pbkdf2_hmac("sha256", PASSWORD.encode(), base64.b64decode(envelope["salt"]), envelope["iterations"])
        python.append((time.perf_counter() - started) * 1000)
    return browser, python


def run(browser: Any, url: str, token: str, connected: Any, runs: int) -> list[str]:
    """The row's report lines (markdown), measured on the hub at `url`."""
    plain, locked = seed(url, token)
    page = connected(browser, url, "#/")
    try:
        opened = open_times(page, plain, runs + 1)[1:]  # the first loads the screen's modules
        alone = open_alone(url, token, plain, runs)
        unlocked, hashed = unlock_times(page, url, token, locked, runs)
    finally:
        page.context.close()
    med = statistics.median
    return [f"\n## The artifact viewer: open to frame, unlock ({runs} runs)\n",
            "| | median ms | max ms | baseline median ms | ratio |", "|---|---|---|---|---|",
            f"| artifact opened to its frame painted | {med(opened):.0f} | {max(opened):.0f} |"
            f" {med(alone):.0f} (its requests over HTTP alone) | {med(opened) / med(alone):.1f} |",
            f"| unlock: PBKDF2 600,000 + AES-GCM in WebCrypto | {med(unlocked):.0f} | {max(unlocked):.0f} |"
            f" {med(hashed):.0f} (the PBKDF2 in Python's hashlib) | {med(unlocked) / med(hashed):.2f} |"]


def main(argv: list[str] | None = None) -> None:
    from playwright.sync_api import sync_playwright

    from tools.bench import webapp

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15, help="opens and unlocks timed")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp, webapp.served(Path(tmp)) as url, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=webapp.CHROMIUM, args=["--no-sandbox"])
        try:
            lines = run(browser, url, webapp.TOKEN, webapp.connected, args.runs)
        finally:
            browser.close()
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; {os.cpu_count()} cores")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
