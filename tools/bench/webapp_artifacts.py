"""The web app's artifact viewer (issue 18 part 2), a row of tools/bench/webapp.py on the hub it runs.

1. Open: from setting `#/artifacts/<id>` in an open app to the next animation frame after the
   sandboxed frame's `load` (the screen's reads, a viewer pass, the hub's /frame and the artifact's
   own document), over `runs` opens of an HTML artifact of about 20 KB. Baseline: the same requests
   over HTTP alone (GET the artifact, its versions, its live state, a viewer pass, then the frame).
2. Unlock: a protected version's key derived and its text decrypted in the page with WebCrypto
   (PBKDF2-HMAC-SHA256 at the envelope's 600,000 iterations, then AES-256-GCM), the app's own module
   timed in Chromium. Baseline: the same derivation in Python's hashlib (OpenSSL) in this run.
   Both are the cost the password gate adds; the hub does no work for it.
3. Share page with a diagram (issue 25): a markdown artifact's public share page (`/s/<token>`) with
   a mermaid diagram on its first screen, opened cold (a fresh browser context each run) at phone
   width (390 x 844) with the CPU slowed 4x (`Emulation.setCPUThrottlingRate` on the page and on
   the artifact's frame when Chromium gives it a process of its own). First paint is the frame's
   first contentful paint (the artifact's text on screen), from the share page's navigation start.
   Baseline, in the same run: the share page of the same markdown without the diagram. Also timed:
   the diagram drawn (mermaid fetched once the diagram is on screen, its SVG in place), and the
   first paint of the page opened a second time in the same context (mermaid in the browser's cache,
   where a script loaded up front would be compiled before the text could paint). Target: first
   paint under 1 s.

Alone, on a hub of its own: `.venv/bin/python tools/bench/webapp_artifacts.py [--runs N]`
(`--share-only` for row 3 alone).
"""

from __future__ import annotations

import argparse
import base64
import contextlib
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
from tools.bench.webapp_open import open_times, tool

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


THROTTLE = 4
PHONE = {"width": 390, "height": 844}
REPORT_MD = "# Weekly report\n\n" + "".join(
    f"Paragraph {n}: what shipped, what slipped, and what comes next for the team.\n\n" for n in range(3)
)
DIAGRAM = (
    "```mermaid\ngraph TD\n  A[Plan] --> B{Review}\n  B -->|yes| C[Ship]\n  B -->|no| D[Rework]\n"
    "  D --> B\n  C --> E[Measure]\n```\n\n"
)
TAIL_MD = "".join(f"Detail {n}: numbers and notes for the record.\n\n" for n in range(40))
# The frame's first contentful paint on the top page's clock (its own time origin differs).
FRAME_FCP = """() => new Promise(resolve => {
  const done = (e) => resolve(performance.timeOrigin + e.startTime);
  new PerformanceObserver((list, obs) => {
    const e = list.getEntriesByName("first-contentful-paint")[0];
    if (e) { obs.disconnect(); done(e); }
  }).observe({type: "paint", buffered: true});
})"""
NOW = "() => performance.timeOrigin + performance.now()"


def seed(url: str, token: str) -> tuple[str, str]:
    """An HTML artifact and a protected one in project `arts`, published over /mcp by an agent."""
    admin = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=url, headers=admin, timeout=60) as http:
        http.post("/api/v1/projects", json={"id": "arts"}).raise_for_status()
        http.post("/api/v1/agents", json={"id": "painter", "display_name": "Painter"}).raise_for_status()
        agent = http.post("/api/v1/agents/painter/token").json()["token"]
        body = "<main>" + "".join(f"<p>Paragraph {n}: the plan, step by step.</p>" for n in range(500)) + "</main>"
        ids = [
            publish(http, agent, {"project_id": "arts", **args})
            for args in (
                {"title": "Plan", "kind": "html", "content": body},
                protect_arguments(
                    "artifact_publish", {"title": "Locked plan", "kind": "html", "content": body, "password": PASSWORD}
                ),
            )
        ]
    return ids[0], ids[1]


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


def publish(http: httpx.Client, agent: str, args: dict[str, Any]) -> str:
    """`artifact_publish` over /mcp with an agent's token, as an agent's client makes it."""
    return str(tool(http, agent, "artifact_publish", args)["artifact_id"])


def seed_shares(url: str, token: str) -> tuple[str, str]:
    """Two shared markdown artifacts, the same text with and without a diagram: their share pages."""
    admin = {"Authorization": f"Bearer {token}"}
    pages: list[str] = []
    with httpx.Client(base_url=url, headers=admin, timeout=60) as http:
        http.post("/api/v1/projects", json={"id": "shares"}).raise_for_status()
        http.post("/api/v1/agents", json={"id": "reporter", "display_name": "Reporter"}).raise_for_status()
        agent = http.post("/api/v1/agents/reporter/token").json()["token"]
        for content in (REPORT_MD + TAIL_MD, REPORT_MD + DIAGRAM + TAIL_MD):
            aid = publish(
                http, agent, {"project_id": "shares", "title": "Report", "kind": "markdown", "content": content}
            )
            shared = http.post(f"/api/v1/artifacts/{aid}/share", json={})
            shared.raise_for_status()
            url_ = str(shared.json()["url"])
            pages.append(url_ if url_.startswith("http") else f"{url}/{url_.lstrip('/')}")
    return pages[0], pages[1]


def throttle(context: Any, target: Any) -> Any:
    cdp = context.new_cdp_session(target)
    cdp.send("Emulation.setCPUThrottlingRate", {"rate": THROTTLE})
    return cdp


def open_share(context: Any, address: str, diagram: bool) -> tuple[float, float | None, bool]:
    page = context.new_page()
    sessions = [throttle(context, page)]

    def on_frame(frame: Any) -> None:  # an out-of-process frame is throttled on its own session;
        with contextlib.suppress(Exception):  # one in the page's process is covered by the page's
            sessions.append(throttle(context, frame))

    page.on("frameattached", on_frame)
    page.goto(address, wait_until="commit")
    start = page.evaluate("() => performance.timeOrigin")
    handle = page.wait_for_selector("#artifact-frame", state="attached")
    frame = handle.content_frame()
    frame.wait_for_load_state("domcontentloaded")
    painted = frame.evaluate(FRAME_FCP) - start
    drawn = None
    if diagram:
        frame.wait_for_selector("pre.mermaid svg", timeout=60_000)
        drawn = frame.evaluate(NOW) - start
    page.close()
    return painted, drawn, len(sessions) > 1


def share_paint(browser: Any, address: str, diagram: bool, *, warm: bool = False) -> tuple[float, float | None, bool]:
    """One open of a share page in a fresh context (`warm`: the second, with mermaid in its cache):
    the frame's first paint and the diagram drawn (or None), ms from navigation, and whether the
    frame had a process (and a throttle) of its own."""
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    try:
        if warm:
            open_share(context, address, diagram)
        return open_share(context, address, diagram)
    finally:
        context.close()


def share_rows(browser: Any, url: str, token: str, runs: int) -> list[str]:
    """Row 3's report lines."""
    plain, diagram = seed_shares(url, token)
    share_paint(browser, diagram, True)  # warms the hub (its first mermaid read)
    base = [share_paint(browser, plain, False)[0] for _ in range(runs)]
    timed = [share_paint(browser, diagram, True) for _ in range(runs)]
    warm = [share_paint(browser, diagram, True, warm=True)[0] for _ in range(runs)]
    painted = [t[0] for t in timed]
    drawn = [t[1] for t in timed if t[1] is not None]
    own = "in a process of its own, throttled there too" if all(t[2] for t in timed) else "in the page's process"
    med = statistics.median
    return [
        f"\n## Share page of a markdown artifact with a diagram: first paint, phone, CPU {THROTTLE}x ({runs} runs)\n",
        "| | median ms | max ms |",
        "|---|---|---|",
        f"| first paint, with a diagram | {med(painted):.0f} | {max(painted):.0f} |",
        f"| first paint, with a diagram, opened again (mermaid in the cache) | {med(warm):.0f} | {max(warm):.0f} |",
        f"| baseline: first paint, the same page without the diagram | {med(base):.0f} | {max(base):.0f} |",
        f"| the diagram drawn (mermaid fetched lazily) | {med(drawn):.0f} | {max(drawn):.0f} |",
        f"\nratio {med(painted) / med(base):.2f} (target first paint under 1 s:"
        f" {'met' if max(painted) < 1000 else 'NOT met'}); the frame ran {own}",
    ]


def run(browser: Any, url: str, token: str, connected: Any, runs: int) -> list[str]:
    """The row's report lines (markdown), measured on the hub at `url`."""
    plain, locked = seed(url, token)
    page = connected(browser, url, "#/")
    try:
        # the first open loads the screen's modules: not timed
        opened = open_times(page, f"#/artifacts/{plain}", runs + 1, WATCH_FRAME)[1:]
        alone = open_alone(url, token, plain, runs)
        unlocked, hashed = unlock_times(page, url, token, locked, runs)
    finally:
        page.context.close()
    shares = share_rows(browser, url, token, runs)
    med = statistics.median
    return [
        f"\n## The artifact viewer: open to frame, unlock ({runs} runs)\n",
        "| | median ms | max ms | baseline median ms | ratio |",
        "|---|---|---|---|---|",
        f"| artifact opened to its frame painted | {med(opened):.0f} | {max(opened):.0f} |"
        f" {med(alone):.0f} (its requests over HTTP alone) | {med(opened) / med(alone):.1f} |",
        f"| unlock: PBKDF2 600,000 + AES-GCM in WebCrypto | {med(unlocked):.0f} | {max(unlocked):.0f} |"
        f" {med(hashed):.0f} (the PBKDF2 in Python's hashlib) | {med(unlocked) / med(hashed):.2f} |",
        *shares,
    ]


def main(argv: list[str] | None = None) -> None:
    from playwright.sync_api import sync_playwright

    from tools.bench import webapp

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15, help="opens and unlocks timed")
    parser.add_argument("--share-only", action="store_true", help="the share page's first paint alone")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp, webapp.served(Path(tmp)) as url, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=webapp.CHROMIUM, args=["--no-sandbox"])
        try:
            if args.share_only:
                lines = share_rows(browser, url, webapp.TOKEN, args.runs)
            else:
                lines = run(browser, url, webapp.TOKEN, webapp.connected, args.runs)
        finally:
            browser.close()
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; {os.cpu_count()} cores")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
