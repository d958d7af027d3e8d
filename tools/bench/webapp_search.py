"""The web app's search as you type, for `tools/bench/webapp.py` (its row "search as you type").

The corpus is the search bench's (`tools/bench/search.py`'s loader: events bulk-loaded into hub.db,
pages, artifacts and brain entries written through the services, the index caught up), at
`--search-scale` of its million events; the hub is then served and the Search screen opened in
Chromium. Each query (words of the corpus's vocabulary: common, mid, rare, two words, a phrase) is
typed one key at a time; for every key that changes the query the delay is from the keydown
event's timestamp to the first animation frame after the screen has drawn the answer to what the
field then says (the results container's `data-query`), the screen's debounce included. The next
key is pressed once the answer is painted. Baseline, same run: the same queries' GET /api/v1/search
alone over HTTP. Target: p99 under 150 ms.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import tempfile
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import anyio
import httpx

from hubcore.config import HubSettings
from hubcore.hub import Hub
from tools.bench.feed import pct
from tools.bench.search import Words
from tools.bench.search import load as load_corpus

CHROMIUM = "/usr/bin/chromium"
SCREEN = Path(__file__).resolve().parents[2] / "pwa" / "js" / "screens" / "search.js"
# Resolves at the first animation frame after the results answer `q` (performance.now() time).
PAINTED = """q => new Promise(resolve => {
  const ok = () => { const r = document.querySelector('.search-results'); return !!r && r.dataset.query === q; };
  const done = () => requestAnimationFrame(() => resolve(performance.now()));
  if (ok()) return done();
  const obs = new MutationObserver(() => { if (ok()) { obs.disconnect(); done(); } });
  obs.observe(document.body, {childList: true, subtree: true, attributes: true, attributeFilter: ['data-query']});
})"""
KEYDOWN = "() => document.addEventListener('keydown', e => { window.__keyAt = e.timeStamp; }, true)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--search-scale",
        type=float,
        default=1.0,
        help="the search corpus against the search bench's 1M events, 10k pages, 1k artifacts, 10k brain entries",
    )
    parser.add_argument("--search-queries", type=int, default=16, help="queries typed key by key")
    parser.add_argument("--search-only", action="store_true", help="only the search as you type row")
    parser.add_argument(
        "--search-data",
        default=None,
        help="a corpus `tools/bench/search.py --data DIR` kept: served as it is instead of "
        "loading one (its --scale stands for --search-scale)",
    )


def quick(args: argparse.Namespace) -> None:
    args.search_scale, args.search_queries = 0.003, 4  # 3,000 events: a few thousand documents


def queries(words: Words, count: int) -> list[str]:
    """Queries a person might type: words of every frequency, two words, a quoted phrase."""
    w = words.words
    picks = [
        w[3],
        w[300],
        w[15_000 % len(w)],
        f"{w[3]} {w[300]}",
        f'"{w[1]} {w[2]}"',
        w[40],
        w[2_000 % len(w)],
        f"{w[12]} {w[7_000 % len(w)]}",
    ]
    return [picks[n % len(picks)] for n in range(count)]


async def preload(root: Path, scale: float, token: str) -> str:
    """The search bench's corpus in `root/data`; a line saying what was loaded."""
    settings = HubSettings(data_dir=str(root / "data"), admin_token=token, min_free_bytes=0)
    out: list[str] = []
    async with Hub.open(settings) as hub:
        await load_corpus(hub, Words(20_000), argparse.Namespace(scale=scale), out)
    return " ".join(line.strip() for line in out)


def typing_delays(page: Any, texts: list[str]) -> list[float]:
    """Type each text key by key into the open Search screen; the keystroke-to-paint delays (ms)."""
    page.evaluate(KEYDOWN)
    field = page.locator("#search-q")
    delays = []
    for text in texts:
        field.fill("")
        page.wait_for_selector(".search-results[data-query='']")
        typed = ""
        for key in text:
            before = typed.strip()
            typed += key
            if typed.strip() == before or not any(c.isalnum() for c in typed):
                # a space (the query unchanged) or a lone quote mark (no word yet): nothing new to paint
                page.keyboard.press(key)
                continue
            page.evaluate(f"q => {{ window.__painted = ({PAINTED})(q); }}", typed.strip())
            page.keyboard.press(key)
            painted = page.evaluate("() => window.__painted")
            delays.append(painted - page.evaluate("() => window.__keyAt"))
    return delays


def api_alone(url: str, token: str, texts: list[str]) -> list[float]:
    """The same queries, prefix by prefix, as GET /api/v1/search alone (ms)."""
    times = []
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=30) as http:
        for text in texts:
            for n in range(1, len(text) + 1):
                q = text[:n].strip()
                if not any(c.isalnum() for c in q) or text[n - 1] == " ":
                    continue
                started = time.perf_counter()
                r = http.get("/api/v1/search", params={"q": q})
                times.append((time.perf_counter() - started) * 1000)
                if r.status_code != 200:
                    raise SystemExit(f"search answered {r.status_code}: {r.text[:200]}")
    return times


def debounce_ms() -> int:
    """The screen's debounce, as pwa/js/screens/search.js sets it."""
    found = re.search(r"DEBOUNCE_MS = (\d+);", SCREEN.read_text(encoding="utf-8"))
    return int(found.group(1)) if found else -1


def report(loaded: str, delays: list[float], alone: list[float]) -> list[str]:
    p99 = pct(delays, 0.99)
    ratio = statistics.median(delays) / statistics.median(alone)
    return [
        f"\n## Search as you type: keystroke to results painted ({len(delays)} keystrokes)\n",
        loaded,
        "\n| | p50 ms | p99 ms |\n|---|---|---|",
        f"| keystroke to results painted (debounce {debounce_ms()} ms included) | {pct(delays, 0.5):.1f} | {p99:.1f} |",
        f"| baseline: GET /api/v1/search alone | {pct(alone, 0.5):.1f} | {pct(alone, 0.99):.1f} |",
        f"\nmedian keystroke-to-paint / median API call: ratio {ratio:.1f};"
        f" p99 {p99:.0f} ms (target p99 under 150 ms: {'met' if p99 < 150 else 'NOT met'})",
    ]


def run(
    args: argparse.Namespace,
    served: Callable[[Path], AbstractContextManager[str]],
    connected: Callable[[Any, str, str], Any],
    token: str,
) -> list[str]:
    """The row, on a hub of its own (webapp.py's `served` and `connected`): the report's lines."""
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        root = Path(tmp)
        if args.search_data is not None:  # the search bench's kept corpus, served as it stands
            root = Path(args.search_data)
            kept = (root / "corpus.json").read_text()
            loaded = f"The corpus kept in {root} by `tools/bench/search.py --data` ({kept})."
        else:
            started = time.perf_counter()
            loaded = anyio.run(preload, root, args.search_scale, token)
            loaded += f" (load and index {time.perf_counter() - started:.0f} s, scale {args.search_scale:g})"
        texts = queries(Words(20_000), args.search_queries)
        with served(root) as url, sync_playwright() as pw:
            alone = api_alone(url, token, texts)  # also the hub's first search after its start
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            try:
                page = connected(browser, url, "#/search")
                delays = typing_delays(page, texts)
                page.context.close()
            finally:
                browser.close()
    load = os.getloadavg()
    return [*report(loaded, delays, alone), f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} after the row"]
