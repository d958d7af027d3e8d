"""The web app in Debian's Chromium (Playwright) against a real `hub-cli serve`.

Run from the checkout: `.venv/bin/python tools/bench/webapp.py` (options: --help; `--quick` for a
short run).

1. Live inbox: an agent posts a question over /mcp (one JSON-RPC POST, as an agent's client does)
   while the Inbox is open; the delay is from just before the POST to the row being in the page
   (a MutationObserver stamps it in the page, on the same wall clock). p50 and p99 over `--rounds`;
   the baseline measured in the same run is the POST's own round trip (the write the delay cannot
   beat), and the ratio of p99s is printed. Target: p99 under 500 ms.
2. First screen after Connect with `--items` inbox items (a tenth waiting questions, the rest
   ideas, unread and read, bulk-loaded into hub.db before the hub starts): from the Connect click
   to the first animation frame after Home's blocks (and, separately, the Inbox's rows) are in the
   page, each in a fresh browser context, over `--paints` runs. Baseline: the same screens' API
   reads alone over HTTP (the token check, then GET /home, or the inbox's three reads). Target:
   under 1 s.
3. The shell's transfer size: every file the service worker precaches, gzipped as the hub serves
   it (PNG as is), and what a cold first load actually transferred (bodies as sent). Vendored
   diagram code is excluded (the app vendors none). Target: under 150 KB compressed.
4. The wiki for a `--pages` knowledge base (tools/bench/kb.py's generator, written through the
   service in-process before the hub starts): from setting the address of a page in an open app to
   the next animation frame after the page's title, its rendered body and its row in the unfolded
   tree are in the page, over `--paints` runs. Baseline: the same reads alone over HTTP (stats, the
   two tree levels with their rows, the page rendered, its directory's rows, its backlinks).
   Target: under 500 ms.
5. Search as you type over the search bench's corpus (`--search-scale` of its million events; its
   own hub): keystroke to results painted, p50 and p99, against the same queries' GET /api/v1/search
   alone; tools/bench/webapp_search.py says how. Target: p99 under 150 ms. `--search-only` runs it alone.
7. The Inbox at volume (`--inbox-items` waiting, 500 by default, CPU throttled 4x): paint, Load
   more and scrolling at 60 fps; tools/bench/webapp_inbox.py says how. Target: under 500 ms and
   60 fps. `--inbox-only` runs it alone.
6. The artifact viewer (`--paints` runs): an artifact opened to its sandboxed frame painted, against
   its requests alone; a protected version's WebCrypto unlock against hashlib's PBKDF2 in this run
   (tools/bench/webapp_artifacts.py says how). No target: the figures say what the gate costs.
   With them, the share page of a markdown artifact with a diagram (issue 25): its first paint at
   phone width with the CPU slowed 4x, against the same page without the diagram. Target: under 1 s.
8. The diff review screen on a phone profile (CPU throttled 4x): 10,000-line diffs' first screen
   painted, and a jump to a file's lines, against the screen's reads alone (tools/bench/webapp_review.py
   says how; `--paints` runs). Target: under 1 s.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

if not __package__:  # run as `python tools/bench/<name>.py`: tools/bench/__init__.py says why
    del sys.path[0]
    if importlib.util.find_spec("tools") is None:
        sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import anyio
import httpx
import orjson

from hubcore.caller import Caller
from hubcore.config import HubSettings
from hubcore.hub import Hub
from hubcore.services import ids
from hubcore.services.projects import ProjectCreate
from hubcore.services.requests import parse as parse_request
from hubhttp.webapp import load_shell
from tools.bench import webapp_artifacts, webapp_inbox, webapp_review, webapp_search

CHROMIUM = "/usr/bin/chromium"
TOKEN = "bench-webapp-admin-token-0123456789"
MODERN = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
PHONE = {"width": 390, "height": 844}
# Stamps the moment a selector first matches, then the next animation frame (the paint after it).
WATCH = """sel => new Promise(resolve => {
  const done = () => { const at = performance.timeOrigin + performance.now();
    requestAnimationFrame(() => resolve({at, painted: performance.timeOrigin + performance.now()})); };
  if (document.querySelector(sel)) return done();
  const obs = new MutationObserver(() => { if (document.querySelector(sel)) { obs.disconnect(); done(); } });
  obs.observe(document.body, {childList: true, subtree: true});
})"""


# The same, once every selector matches.
WATCH_ALL = """sels => new Promise(resolve => {
  const all = () => sels.every(s => document.querySelector(s));
  const done = () => { const at = performance.timeOrigin + performance.now();
    requestAnimationFrame(() => resolve({at, painted: performance.timeOrigin + performance.now()})); };
  if (all()) return done();
  const obs = new MutationObserver(() => { if (all()) { obs.disconnect(); done(); } });
  obs.observe(document.body, {childList: true, subtree: true});
})"""
WIKI_PROJECT = "kb"
# Pages the generator always makes (sections 00 and 01, the first pages of each), opened in turn.
WIKI_PAGES = ("/fs/sec00/page00001.md", "/fs/sec01/page00002.md", "/fs/sec00/page00003.md")


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def env_for(root: Path, port: int) -> dict[str, str]:
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
    return env


def cpu_seconds(pid: int) -> float:
    """A process's user and system CPU time so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def settle(pid: int, *, limit: float = 180.0) -> None:
    """Wait until the hub is at rest after its start (under 5% of a core for two half seconds in
    a row): a hub with search vectors reads them and loads the model in the background at start,
    which the timed rows must not share the cores with."""
    deadline, calm, last = time.monotonic() + limit, 0, cpu_seconds(pid)
    while calm < 2 and time.monotonic() < deadline:
        time.sleep(0.5)
        now = cpu_seconds(pid)
        calm = calm + 1 if now - last < 0.025 else 0
        last = now


@contextmanager
def served(root: Path) -> Iterator[str]:
    port = free_port()
    with subprocess.Popen(
        [sys.executable, "-m", "hubcli", "serve"],
        env=env_for(root, port),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    ) as proc:
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                try:
                    if httpx.get(url + "/readyz", timeout=2).status_code == 200:
                        break
                except httpx.TransportError:
                    time.sleep(0.1)
            else:
                raise SystemExit("the hub never became ready")
            settle(proc.pid)
            yield url
        finally:
            proc.terminate()
            proc.wait(30)


def bulk_inbox(conn: Any, project: str, count: int) -> None:
    """`count` inbox items with their events: a tenth waiting questions, then unread and read ideas."""
    base_ms = int(time.time() * 1000) - count - 10_000
    events, items = [], []
    for n in range(count):
        eid = ids.encode(base_ms + n, n)
        at = (base_ms + n) / 1000
        kind, status = ("question", "waiting") if n % 10 == 0 else ("idea", "unread" if n % 3 else "read")
        payload = {"body": f"details of item {n}"} | ({"options": ["Yes", "No"]} if kind == "question" else {})
        events.append(
            (
                eid,
                project,
                kind,
                "bot",
                f"item {n} wants a look",
                orjson.dumps(payload).decode(),
                None,
                eid if kind == "question" else None,
                at,
            )
        )
        items.append((eid, project, kind, "bot", status, at, at))
    conn.executemany(
        "INSERT INTO events (id, project_id, kind, actor, summary, payload, session_id, thread_id, "
        "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        events,
    )
    conn.executemany(
        "INSERT INTO inbox (event_id, project_id, kind, actor, status, created_at, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        items,
    )
    conn.execute("INSERT OR REPLACE INTO hub_meta (key, value) VALUES (?, ?)", (ids.MARK_KEY, str(base_ms + count)))


async def preload(root: Path, items: int, pages: int = 0) -> None:
    settings = HubSettings(data_dir=str(root / "data"), admin_token=TOKEN, min_free_bytes=0)
    async with Hub.open(settings) as hub:
        await hub.projects.create(Caller.admin(), parse_request(ProjectCreate, {"id": "big"}))
        await hub.core.store.execute(lambda conn: bulk_inbox(conn, "big", items))
        if pages:
            await preload_kb(hub, pages)


async def preload_kb(hub: Hub, pages: int) -> None:
    """`pages` knowledge base pages in project `kb`, through the service (as tools/bench/kb.py loads)."""
    from tools.bench.kb import Bundle, load

    await load(hub, WIKI_PROJECT, Bundle(pages))


def wiki_paint(browser: Any, url: str, runs: int) -> list[float]:
    """From the page's address set in an open app to the frame after title, body and tree row."""
    times = []
    for n in range(runs):
        page = connected(browser, url, "#/")
        target = WIKI_PAGES[n % len(WIKI_PAGES)]
        sels = [
            "article.wiki-page h2.wiki-title",
            "article.wiki-page .rich p",
            f'.wiki-tree a.wiki-leaf[aria-current=page][href$="{target.replace("/", "%2F")}"]',
        ]
        page.evaluate(f"sels => {{ window.__painted = ({WATCH_ALL})(sels); }}", sels)
        started = page.evaluate(
            "h => { const t = performance.timeOrigin + performance.now(); location.hash = h; return t; }",
            f"#/projects/{WIKI_PROJECT}/wiki?path={target}",
        )
        times.append(page.evaluate("() => window.__painted")["painted"] - started)
        page.context.close()
    return times


def wiki_baseline(url: str, runs: int) -> list[float]:
    times = []
    kb = f"/api/v1/projects/{WIKI_PROJECT}/kb"
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30) as http:
        for n in range(runs):
            target = WIKI_PAGES[n % len(WIKI_PAGES)]
            folder = target.rsplit("/", 1)[0] + "/"
            started = time.perf_counter()
            http.get(f"{kb}/stats").raise_for_status()
            for prefix in ("/fs/", folder):
                http.get(f"{kb}/pages", params={"prefix": prefix}).raise_for_status()
                http.get(f"{kb}/pages", params={"prefix": prefix, "meta": 1}).raise_for_status()
            http.get(f"{kb}/pages{target}", params={"rendered": 1}).raise_for_status()
            http.get(f"{kb}/pages", params={"prefix": folder, "meta": 1}).raise_for_status()
            http.get(f"{kb}/backlinks", params={"path": target}).raise_for_status()
            times.append((time.perf_counter() - started) * 1000)
    return times


def connected(browser: Any, url: str, hash_: str) -> Any:
    context = browser.new_context(viewport=PHONE, base_url=url, service_workers="block")
    page = context.new_page()
    page.goto("/app/shell.json")
    page.evaluate("t => localStorage.setItem('agent-hub.token', t)", TOKEN)
    page.goto("/" + hash_)
    page.wait_for_selector("h1.screen-title")
    return page


def live_inbox(browser: Any, url: str, rounds: int) -> dict[str, list[float]]:
    admin = {"Authorization": f"Bearer {TOKEN}"}
    with httpx.Client(base_url=url, headers=admin, timeout=30) as http:
        http.post("/api/v1/agents", json={"id": "asker", "display_name": "Asker"}).raise_for_status()
        agent = http.post("/api/v1/agents/asker/token").json()["token"]
        http.post("/api/v1/projects", json={"id": "live"}).raise_for_status()
        page = connected(browser, url, "#/inbox?project=live")
        page.wait_for_selector("html[data-live=live]")
        headers = {
            "Authorization": f"Bearer {agent}",
            "MCP-Protocol-Version": MODERN,
            "Mcp-Method": "tools/call",
            "Mcp-Name": "question_post",
            "Accept": "application/json, text/event-stream",
        }
        delays, posts = [], []
        for n in range(rounds):
            page.evaluate(
                "() => { window.__seen = new Map(); new MutationObserver(() => {"
                " for (const r of document.querySelectorAll('li.row[data-event-id]'))"
                "  if (!window.__seen.has(r.dataset.eventId))"
                "   window.__seen.set(r.dataset.eventId, performance.timeOrigin + performance.now()); })"
                ".observe(document.body, {childList: true, subtree: true}); }"
            )
            call = {
                "jsonrpc": "2.0",
                "id": n,
                "method": "tools/call",
                "params": {
                    "name": "question_post",
                    "arguments": {"project_id": "live", "summary": f"Question {n}?", "options": ["Yes", "No"]},
                    "_meta": META,
                },
            }
            started = time.time() * 1000
            r = http.post("/mcp", json=call, headers=headers)
            posts.append(time.time() * 1000 - started)
            result = r.json()["result"]
            event_id = (result.get("structuredContent") or orjson.loads(result["content"][0]["text"]))["event_id"]
            page.wait_for_selector(f'li.row[data-event-id="{event_id}"]', timeout=10_000)
            delays.append(page.evaluate("id => window.__seen.get(id)", event_id) - started)
        page.context.close()
    return {"delay": delays, "post": posts}


def first_paint(browser: Any, url: str, runs: int, hash_: str, selector: str) -> list[float]:
    times = []
    for _ in range(runs):
        context = browser.new_context(viewport=PHONE, base_url=url, service_workers="block")
        page = context.new_page()
        page.goto(f"/#/connect?next={hash_.replace('#', '%23').replace('/', '%2F')}")
        page.wait_for_selector("#token")
        page.fill("#token", TOKEN)
        # Kept on the page as a promise (evaluating it here would wait for the click it times).
        page.evaluate(f"sel => {{ window.__painted = ({WATCH})(sel); }}", selector)
        clicked = page.evaluate(
            "() => { const t = performance.timeOrigin + performance.now();"
            " document.querySelector('form.connect-form button[type=submit]').click(); return t; }"
        )
        times.append(page.evaluate("() => window.__painted")["painted"] - clicked)
        context.close()
    return times


def api_baseline(url: str, runs: int, screen: str) -> list[float]:
    times = []
    admin = {"Authorization": f"Bearer {TOKEN}"}
    with httpx.Client(base_url=url, headers=admin, timeout=30) as http:
        for _ in range(runs):
            started = time.perf_counter()
            http.get("/api/v1/home")  # the token check
            if screen == "home":
                http.get("/api/v1/home")
            else:
                reads: list[dict[str, str | int]] = [
                    {"status": "waiting", "order": "deadline", "limit": 50},
                    {"status": "unread", "order": "deadline", "limit": 50},
                    {"settled": "true", "limit": 50},
                ]
                for q in reads:
                    http.get("/api/v1/inbox", params=q)
            times.append((time.perf_counter() - started) * 1000)
    return times


def transfer(browser: Any, url: str) -> tuple[int, int, int]:
    """(precache gzipped, precache raw, a cold first load's transferred bodies) in bytes."""
    shell = load_shell()
    gz = sum(len(f.gzipped if f.gzipped is not None else f.data) for u, f in shell.files.items() if "/vendor/" not in u)
    raw = sum(len(f.data) for u, f in shell.files.items() if "/vendor/" not in u)
    context = browser.new_context(viewport=PHONE, base_url=url, service_workers="block")
    page = context.new_page()
    sizes: list[int] = []
    page.on(
        "requestfinished", lambda req: sizes.append(req.sizes()["responseBodySize"]) if "/api/" not in req.url else None
    )
    page.goto("/#/connect")
    page.wait_for_selector("#token")
    page.wait_for_timeout(300)  # the late module imports of the first screen
    context.close()
    return gz, raw, sum(sizes)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=50, help="questions posted for the live delay")
    parser.add_argument("--items", type=int, default=10_000, help="inbox items for the first paint")
    parser.add_argument("--paints", type=int, default=7, help="connects timed per screen")
    parser.add_argument("--pages", type=int, default=10_000, help="knowledge base pages for the wiki's paint")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a short run to see every row work (the suite's): 5 rounds, 500 items, 1 paint, 120 items in the"
        " Inbox at volume (two presses of Load more), 0.5 s of scrolling, 1,000-line diffs",
    )
    parser.add_argument(
        "--review-lines", type=int, default=10_000, help="lines of each large diff in the review screen's row"
    )
    parser.add_argument("--dir", type=Path, default=None, help="where the hub's data directory goes")
    webapp_search.add_arguments(parser)
    webapp_inbox.add_arguments(parser)
    args = parser.parse_args(argv)
    if args.quick:
        args.rounds, args.items, args.paints, args.pages = 5, 500, 1, 200
        args.inbox_items, args.scroll_seconds, args.review_lines = 120, 0.5, 1_000
    from playwright.sync_api import sync_playwright

    if args.quick:
        webapp_search.quick(args)
    if args.search_only:
        print("\n".join(webapp_search.run(args, served, connected, TOKEN)))
        return
    if args.inbox_only:
        lines = webapp_inbox.run(args, served, connected, TOKEN, CHROMIUM)
        load = os.getloadavg()
        print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; {os.cpu_count()} cores")
        print("\n".join(lines))
        return
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        root = Path(tmp)
        loading = time.perf_counter()
        anyio.run(preload, root, args.items, args.pages)
        loaded_s = time.perf_counter() - loading
        with served(root) as url, sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            try:
                live = live_inbox(browser, url, args.rounds)
                paints = {
                    s: first_paint(browser, url, args.paints, h, sel)
                    for s, h, sel in (("home", "#/", ".stat-row"), ("inbox", "#/inbox", "#sec-waiting ~ ul li.row"))
                }
                bases = {s: api_baseline(url, args.paints, s) for s in paints}
                gz, raw, cold = transfer(browser, url)
                wiki = wiki_paint(browser, url, args.paints + 1)[1:]  # the first warms the hub's walk
                wiki_base = wiki_baseline(url, args.paints)
                artifacts = webapp_artifacts.run(browser, url, TOKEN, connected, args.paints)
                review = webapp_review.run(browser, url, TOKEN, connected, args.paints, args.review_lines)
            finally:
                browser.close()
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; {os.cpu_count()} cores")
    print(f"\n## Live inbox: question posted over /mcp to its row in the open Inbox ({args.rounds} rounds)\n")
    print("| | p50 ms | p99 ms |\n|---|---|---|")
    print(f"| question to row | {pct(live['delay'], 0.5):.1f} | {pct(live['delay'], 0.99):.1f} |")
    print(f"| baseline: the POST alone | {pct(live['post'], 0.5):.1f} | {pct(live['post'], 0.99):.1f} |")
    print(
        f"\np99 delay / p99 POST: ratio {pct(live['delay'], 0.99) / pct(live['post'], 0.99):.2f}"
        f" (target p99 under 500 ms: {'met' if pct(live['delay'], 0.99) < 500 else 'NOT met'})"
    )
    print(f"\n## First screen painted after Connect, {args.items:,} inbox items ({args.paints} runs each)\n")
    print("| screen | median ms | max ms | baseline: its API reads alone, median ms | ratio |\n|---|---|---|---|---|")
    for screen, times in paints.items():
        base = statistics.median(bases[screen])
        print(
            f"| {screen} | {statistics.median(times):.0f} | {max(times):.0f} | {base:.0f} |"
            f" {statistics.median(times) / base:.1f} |"
        )
    worst = max(max(t) for t in paints.values())
    print(f"\nworst {worst:.0f} ms (target under 1 s: {'met' if worst < 1000 else 'NOT met'})")
    print("\n## The shell's transfer size\n")
    print("| | bytes |\n|---|---|")
    print(f"| precache, gzipped as served (PNG as is) | {gz:,} |")
    print(f"| precache, uncompressed | {raw:,} |")
    print(f"| a cold first load of Connect, transferred | {cold:,} |")
    print(f"\ncompressed shell {gz / 1024:.1f} KB (target under 150 KB: {'met' if gz < 150 * 1024 else 'NOT met'})")
    print(
        f"\n## The wiki: tree and a page painted, {args.pages:,} pages"
        f" ({args.paints} runs; loaded in {loaded_s:.0f} s)\n"
    )
    print("| | median ms | max ms |\n|---|---|---|")
    print(f"| page address to title, body and tree row painted | {statistics.median(wiki):.0f} | {max(wiki):.0f} |")
    print(f"| baseline: the same reads alone over HTTP | {statistics.median(wiki_base):.0f} | {max(wiki_base):.0f} |")
    print(
        f"\nratio {statistics.median(wiki) / statistics.median(wiki_base):.1f}"
        f" (target under 500 ms: {'met' if max(wiki) < 500 else 'NOT met'})"
    )
    print("\n".join(webapp_search.run(args, served, connected, TOKEN)))
    print("\n".join(artifacts))
    print("\n".join(review))
    print("\n".join(webapp_inbox.run(args, served, connected, TOKEN, CHROMIUM)))


if __name__ == "__main__":
    main()
