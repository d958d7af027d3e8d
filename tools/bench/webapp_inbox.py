"""The Inbox at volume (issue 25 part 1), a row of tools/bench/webapp.py on a hub of its own.

`--inbox-items` waiting questions (default 500; a tenth with a deadline, every fifth with a long
body), bulk-loaded into hub.db before the hub starts, in Chromium at phone width (390 px) with the
CPU slowed 4x through the DevTools protocol (`Emulation.setCPUThrottlingRate`, rate 4), the usual
stand-in for a mid-range phone.

1. Paint: from setting `#/inbox` in an open app (Home drawn) to the next animation frame after the
   first waiting row is in the page, with the heading's true total; `--paints` runs, each in a
   fresh context. Baseline: the screen's three list reads alone over HTTP (waiting, unread, earlier).
   Target: under 500 ms.
2. Load more: each "Load more" press to the frame after the next page's rows, until all are drawn.
3. Scroll: with every row drawn, the page scrolled top to bottom and back by a fixed step on every
   animation frame for `--scroll-seconds`; frames per second and the share of frames over 20 ms
   (a dropped frame at 60 Hz). Target: 60 fps (at or above 55 measured: headless Chromium paces
   rAF at the display rate, so 60 is the ceiling).

Alone: `.venv/bin/python tools/bench/webapp.py --inbox-only [--inbox-items N] [--paints N]`.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import tempfile
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import anyio
import httpx
import orjson

from hubcore.caller import Caller
from hubcore.config import HubSettings
from hubcore.hub import Hub
from hubcore.services import ids
from hubcore.services.projects import ProjectCreate
from hubcore.services.requests import parse as parse_request

THROTTLE = 4
FIRST_ROW = "#sec-waiting ~ ul li.row"
PAINTED = """sel => new Promise(resolve => {
  const done = () => { const at = performance.timeOrigin + performance.now();
    requestAnimationFrame(() => resolve(performance.timeOrigin + performance.now())); };
  if (document.querySelector(sel)) return done();
  const obs = new MutationObserver(() => { if (document.querySelector(sel)) { obs.disconnect(); done(); } });
  obs.observe(document.body, {childList: true, subtree: true});
})"""
SCROLL = """seconds => new Promise(resolve => {
  const frames = []; const end = performance.now() + seconds * 1000; let dir = 1;
  const step = () => {
    frames.push(performance.now());
    const max = document.documentElement.scrollHeight - innerHeight;
    if ((dir > 0 && scrollY >= max - 1) || (dir < 0 && scrollY <= 0)) dir = -dir;
    scrollBy(0, 40 * dir);
    if (performance.now() < end) requestAnimationFrame(step); else resolve(frames);
  };
  requestAnimationFrame(step);
})"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--inbox-items", type=int, default=500, help="waiting items in the Inbox row")
    parser.add_argument("--scroll-seconds", type=float, default=4.0, help="how long the Inbox is scrolled")
    parser.add_argument("--inbox-only", action="store_true", help="only the Inbox at volume row")


def bulk_waiting(conn: Any, project: str, count: int) -> None:
    """`count` waiting questions with their events; a tenth with a deadline, every fifth long."""
    base_ms = int(time.time() * 1000) - count - 10_000
    events, items = [], []
    for n in range(count):
        eid = ids.encode(base_ms + n, n)
        at = (base_ms + n) / 1000
        body = f"details of question {n}. " * (30 if n % 5 == 0 else 2)
        payload = {"body": body, "options": ["Yes", "No"]}
        expires = at + 86_400 + n if n % 10 == 0 else None
        events.append(
            (
                eid,
                project,
                "question",
                "bot",
                f"question {n} wants an answer",
                orjson.dumps(payload).decode(),
                None,
                eid,
                at,
            )
        )
        items.append((eid, project, "question", "bot", "waiting", at, at, expires, None))
    conn.executemany(
        "INSERT INTO events (id, project_id, kind, actor, summary, payload, session_id, thread_id, "
        "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        events,
    )
    conn.executemany(
        "INSERT INTO inbox (event_id, project_id, kind, actor, status, created_at, updated_at, "
        "expires_at, on_expiry) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        items,
    )
    conn.execute("INSERT OR REPLACE INTO hub_meta (key, value) VALUES (?, ?)", (ids.MARK_KEY, str(base_ms + count)))


async def preload(root: Path, token: str, count: int) -> None:
    settings = HubSettings(data_dir=str(root / "data"), admin_token=token, min_free_bytes=0)
    async with Hub.open(settings) as hub:
        await hub.projects.create(Caller.admin(), parse_request(ProjectCreate, {"id": "busy"}))
        await hub.core.store.execute(lambda conn: bulk_waiting(conn, "busy", count))


def throttled(browser: Any, url: str, token: str, connected: Callable[[Any, str, str], Any]) -> Any:
    page = connected(browser, url, "#/")
    page.wait_for_selector(".stat-row")
    cdp = page.context.new_cdp_session(page)
    cdp.send("Emulation.setCPUThrottlingRate", {"rate": THROTTLE})
    page.__cdp = cdp  # kept alive with the page
    return page


def paint(
    browser: Any, url: str, token: str, connected: Callable[[Any, str, str], Any], runs: int, total: int
) -> list[float]:
    times = []
    for _ in range(runs):
        page = throttled(browser, url, token, connected)
        page.evaluate(f"sel => {{ window.__painted = ({PAINTED})(sel); }}", FIRST_ROW)
        started = page.evaluate(
            "() => { const t = performance.timeOrigin + performance.now(); location.hash = '#/inbox'; return t; }"
        )
        times.append(page.evaluate("() => window.__painted") - started)
        heading = page.locator("#sec-waiting").text_content() or ""
        if f"({total:,})" not in heading:
            raise SystemExit(f"the Inbox heading says {heading!r}, not the true total {total}")
        page.context.close()
    return times


def load_all_and_scroll(
    browser: Any, url: str, token: str, connected: Callable[[Any, str, str], Any], total: int, seconds: float
) -> tuple[list[float], list[float], int]:
    page = throttled(browser, url, token, connected)
    page.evaluate("() => { location.hash = '#/inbox'; }")
    page.wait_for_selector(FIRST_ROW)
    more = '[data-list="sec-waiting"] .load-more button'
    presses = []
    while page.locator(more).count():
        shown = page.locator('[data-list="sec-waiting"] li.row').count()
        sel = (
            f'[data-list="sec-waiting"] li.row:nth-of-type({shown + 1}), '
            f'[data-list="sec-waiting"] ul li.row:nth-child({shown + 1})'
        )
        page.evaluate(f"sel => {{ window.__painted = ({PAINTED})(sel); }}", sel)
        started = page.evaluate(
            "b => { const t = performance.timeOrigin + performance.now();"
            " document.querySelector(b).click(); return t; }",
            more,
        )
        presses.append(page.evaluate("() => window.__painted") - started)
        page.wait_for_function(
            "n => document.querySelectorAll('[data-list=\"sec-waiting\"] li.row').length > n", arg=shown
        )
    drawn = page.locator('[data-list="sec-waiting"] li.row').count()
    frames = page.evaluate(SCROLL, seconds)
    page.context.close()
    gaps = [b - a for a, b in itertools.pairwise(frames)]
    return presses, gaps, drawn


def baseline(url: str, token: str, runs: int) -> list[float]:
    times = []
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=30) as http:
        for _ in range(runs):
            started = time.perf_counter()
            for q in (
                {"status": "waiting", "order": "deadline"},
                {"status": "unread", "order": "deadline"},
                {"settled": "true"},
            ):
                http.get("/api/v1/inbox", params={**q, "limit": 50}).raise_for_status()
            times.append((time.perf_counter() - started) * 1000)
    return times


def run(
    args: argparse.Namespace,
    served: Callable[[Path], AbstractContextManager[str]],
    connected: Callable[[Any, str, str], Any],
    token: str,
    chromium: str,
) -> list[str]:
    from playwright.sync_api import sync_playwright

    total = args.inbox_items
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        root = Path(tmp)
        anyio.run(preload, root, token, total)
        with served(root) as url, sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            try:
                paints = paint(browser, url, token, connected, args.paints, total)
                presses, gaps, drawn = load_all_and_scroll(browser, url, token, connected, total, args.scroll_seconds)
                base = baseline(url, token, args.paints)
            finally:
                browser.close()
    fps = 1000 / statistics.mean(gaps) if gaps else 0.0
    slow = sum(1 for g in gaps if g > 20) / max(1, len(gaps))
    worst = max(paints)
    return [
        f"\n## The Inbox at volume: {total:,} waiting items, 390 px, CPU throttled {THROTTLE}x ({args.paints} runs)\n",
        "| | median ms | max ms |\n|---|---|---|",
        f"| `#/inbox` to the first rows painted (a page of 50, the true total) | {statistics.median(paints):.0f} |"
        f" {worst:.0f} |",
        f"| baseline: the three list reads alone over HTTP | {statistics.median(base):.0f} | {max(base):.0f} |",
        f"| Load more, press to the next 50 rows painted ({len(presses)} presses) | {statistics.median(presses):.0f} |"
        f" {max(presses):.0f} |",
        f"\npaint ratio {statistics.median(paints) / statistics.median(base):.1f}; target under 500 ms:"
        f" {'met' if worst < 500 else 'NOT met'}",
        f"\nscrolling all {drawn:,} rows for {args.scroll_seconds:.0f} s: {fps:.1f} fps, {slow:.1%} of frames over"
        f" 20 ms (target 60 fps: {'met' if fps >= 55 else 'NOT met'})",
    ]
