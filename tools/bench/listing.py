"""The project listing and Home with the human's cursor far behind a big feed.

Run from the checkout: `.venv/bin/python -m tools.bench.listing` or
`.venv/bin/python tools/bench/listing.py` (options: --help).

One project holds `--events` events (default one million), bulk-loaded through the hub store's
actor with the rows and tallies `insert_event` writes; `--projects` more projects hold `--small`
events each. The human's cursor is moved (through `FeedService.seen`, as `POST .../feed/seen` does)
to `--behind` events before the newest of the big feed (default 500,000) and to the middle of each
small one. Then, `--reads` times each, p50 and p99 of:

- the project listing and Home, in-process through their services (`ProjectsService.list`,
  `HomeService.home`) and through the real ASGI app (gate, Quart, JSON) on httpx's in-process
  transport (`GET /api/v1/projects`, `GET /api/v1/home`);
- the same with every cursor at its newest event: the floor, measured in the same run, which the
  reads with the cursor behind are reported against (the machine is shared and noisy);
- moving the cursor: the first move of a cursor that was never set, steps of `--step` events
  forward (a reader catching up), a jump to ten events before the newest, and to the newest.

The same file measures an older tree (`PYTHONPATH=<tree>`, or `tools/bench/ab.py`): a store
without a kept unseen count gets only the tallies it has.
"""

from __future__ import annotations

import argparse
import importlib.util
import sqlite3
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from contextlib import closing
from pathlib import Path
from typing import Any

if not __package__:  # run as `python tools/bench/<name>.py`: tools/bench/__init__.py says why
    del sys.path[0]
    if importlib.util.find_spec("tools") is None:
        sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import anyio
import httpx

from hubcore.services.feed import FeedSeen
from hubcore.services.projects import ProjectCreate, unseen_counts
from hubcore.services.requests import parse as parse_request
from hubhttp.asgi import HubASGI
from tools.bench.feed import ADMIN, ADMIN_TOKEN, CHUNK, bulk_events, pct, served, timed

HEADERS = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


class Feeds:
    """The loaded feeds: each project's event ids, oldest first."""

    def __init__(self, app: HubASGI) -> None:
        self.app = app
        self.ids: dict[str, list[str]] = {}

    async def load(self, project: str, count: int, base_ms: int) -> None:
        hub = self.app.hub
        await hub.projects.create(ADMIN, parse_request(ProjectCreate, {"id": project}))
        made: list[str] = []
        for start in range(0, count, CHUNK):

            def load(conn: sqlite3.Connection, start: int = start) -> list[str]:
                return bulk_events(conn, project, start, min(CHUNK, count - start), base_ms)

            made += await hub.core.store.execute(load)
        self.ids[project] = made

    async def seen(self, project: str, back: int | None) -> float:
        """Move the human's cursor to `back` events before the newest (None: the newest); seconds."""
        body = (
            {"project_id": project}
            if back is None
            else {"project_id": project, "event_id": self.ids[project][-1 - back]}
        )
        start = time.perf_counter()
        moved = await self.app.hub.feed.seen(ADMIN, parse_request(FeedSeen, body))
        took = time.perf_counter() - start
        assert moved["advanced"], moved
        return took


def reads(app: HubASGI, client: httpx.AsyncClient, conn: sqlite3.Connection) -> dict[str, Callable[[], Awaitable[Any]]]:
    hub = app.hub
    projects = [r[0] for r in conn.execute("SELECT id FROM projects ORDER BY id")]

    async def get(path: str) -> None:
        r = await client.get(path, headers=HEADERS)
        assert r.status_code == 200, r.text

    async def counts() -> None:  # the listing's unseen figures alone, on this thread: no hand-off to wait on
        unseen_counts(conn, projects)

    return {
        "the unseen counts alone (`unseen_counts`, this thread)": counts,
        "project listing (`ProjectsService.list`)": lambda: hub.projects.list(ADMIN),
        "Home (`HomeService.home`)": lambda: hub.home.home(ADMIN),
        "`GET /api/v1/projects` (ASGI, in-process)": lambda: get("/api/v1/projects"),
        "`GET /api/v1/home` (ASGI, in-process)": lambda: get("/api/v1/home"),
    }


async def measure(app: HubASGI, client: httpx.AsyncClient, args: argparse.Namespace, out: list[str]) -> None:
    feeds = Feeds(app)
    base_ms = int(time.time() * 1000) - args.events - args.projects * args.small - 10_000
    started = time.perf_counter()
    await feeds.load("big", args.events, base_ms)
    for n in range(args.projects):
        await feeds.load(f"small-{n}", args.small, base_ms + args.events + n * args.small)
    out.append(
        f"Loaded {args.events:,} events into `big` and {args.small:,} into each of {args.projects} more "
        f"projects in {time.perf_counter() - started:.1f} s.\n"
    )
    first = await feeds.seen("big", args.behind + args.step * args.steps)
    steps = [await feeds.seen("big", args.behind + args.step * k) for k in range(args.steps - 1, -1, -1)]
    for n in range(args.projects):
        await feeds.seen(f"small-{n}", args.small // 2)
    unseen = {p["id"]: p["unseen_events"] for p in await app.hub.projects.list(ADMIN)}
    assert unseen["big"] == args.behind, unseen
    with closing(sqlite3.connect(f"file:{app.hub.data_dir / 'hub.db'}?mode=ro", uri=True)) as conn:
        behind = {name: await timed(fn, args.reads, warm=True) for name, fn in reads(app, client, conn).items()}
        jump = await feeds.seen("big", 10)
        to_newest = await feeds.seen("big", None)
        for project in feeds.ids:
            if project != "big":
                await feeds.seen(project, None)
        floor = {name: await timed(fn, args.reads, warm=True) for name, fn in reads(app, client, conn).items()}
    out.append(
        f"The human's cursor {args.behind:,} events behind in `big` (and mid-feed in the others), "
        f"against every cursor at its newest event (the floor, same run); {args.reads} reads each:\n"
    )
    out.append("| read | p50 ms | p99 ms | floor p50 ms | floor p99 ms | p99 / floor p99 |\n|---|---|---|---|---|---|")
    for name, samples in behind.items():
        low = floor[name]
        out.append(
            f"| {name} | {statistics.median(samples) * 1000:.2f} | {pct(samples, 0.99) * 1000:.2f} | "
            f"{statistics.median(low) * 1000:.2f} | {pct(low, 0.99) * 1000:.2f} | "
            f"{pct(samples, 0.99) / pct(low, 0.99):.2f} |"
        )
    out.append("\nMoving the cursor (`FeedService.seen`):\n")
    out.append("| move | moves | p50 ms | p99 ms |\n|---|---|---|---|")
    out.append(
        f"| first move of a cursor never set, to {args.behind + args.step * args.steps:,} events back "
        f"| 1 | {first * 1000:.2f} | {first * 1000:.2f} |"
    )
    out.append(
        f"| a step of {args.step} events forward | {len(steps)} | {statistics.median(steps) * 1000:.2f} | "
        f"{pct(steps, 0.99) * 1000:.2f} |"
    )
    for name, took in (
        (f"a jump from {args.behind:,} back to 10 before the newest", jump),
        ("then to the newest (seen all)", to_newest),
    ):
        out.append(f"| {name} | 1 | {took * 1000:.2f} | {took * 1000:.2f} |")


async def main(args: argparse.Namespace) -> None:
    out: list[str] = []
    async with served(args.dir) as (app, client):
        await measure(app, client, args, out)
    print("\n".join(out))


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=1_000_000, help="events in the big project's feed")
    parser.add_argument("--behind", type=int, default=500_000, help="how far the human's cursor is behind")
    parser.add_argument("--projects", type=int, default=10, help="more projects, each with --small events")
    parser.add_argument("--small", type=int, default=1_000)
    parser.add_argument("--reads", type=int, default=500, help="reads of each kind")
    parser.add_argument("--step", type=int, default=50, help="events per cursor step")
    parser.add_argument("--steps", type=int, default=100, help="cursor steps timed")
    parser.add_argument("--dir", default=None, help="where the temporary data directory goes")
    args = parser.parse_args(argv)
    if not 0 < args.behind + args.step * args.steps < args.events:
        parser.error("--behind plus --step times --steps must be inside the feed")
    return args


if __name__ == "__main__":
    anyio.run(main, parse(sys.argv[1:]))
