"""Integrity sampling and `hub-cli check` on a large hub.db: what a sample costs, what it does to
the requests served meanwhile, and how long a check takes.

Run from the checkout: `.venv/bin/python tools/bench/integrity.py` (options: --help).

1. hub.db holds `--events` events in one project (bulk-loaded with the rows `insert_event`
   writes, as tools/bench/feed.py does).
2. SQLite's `quick_check` (what each sample runs) and full `integrity_check` (what `check` runs)
   of that hub.db, timed once each, with the file's size.
3. Feed page reads (the newest 50 events, through `FeedService.project_feed`, `--reads` a round)
   with the sampler quick-checking hub.db back to back on its worker thread, against the same reads
   with no sampler, in alternating rounds (`--rounds` each) in one run: p50 and p99 and the ratio
   of p99s. A sample never runs on a request's path, so what the reads feel is the shared disk and
   CPU (on two cores, one is busy checking).
4. `check` of the closed directory: the first (the index has never been built, so it is rebuilt)
   and the second (it matches).
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

if not __package__:  # run as `python tools/bench/<name>.py`: tools/bench/__init__.py says why
    del sys.path[0]
    if importlib.util.find_spec("tools") is None:
        sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import anyio
import anyio.lowlevel

from hubcore.caller import Caller
from hubcore.config import HubSettings
from hubcore.hub import Hub
from hubcore.ops.check import check
from hubcore.ops.integrity import IntegritySampler, check_file
from hubcore.services.feed import FeedRead
from hubcore.services.projects import ProjectCreate
from hubcore.services.requests import parse as parse_request
from tools.bench.feed import CHUNK, bulk_events, pct

ADMIN = Caller.admin()


async def load(settings: HubSettings, events: int) -> float:
    """hub.db with `events` events in project `big`; returns the load time."""
    async with Hub.open(settings) as hub:
        await hub.projects.create(ADMIN, parse_request(ProjectCreate, {"id": "big"}))
        base_ms = int(time.time() * 1000) - events - 10_000
        started = time.perf_counter()
        for start in range(0, events, CHUNK):
            count = min(CHUNK, events - start)
            await hub.core.store.execute(lambda conn, s=start, c=count: bulk_events(conn, "big", s, c, base_ms))
        return time.perf_counter() - started


def timed_check(db: Path, quick: bool) -> float:
    started = time.perf_counter()
    problems = check_file(db, quick=quick)
    if problems:
        raise SystemExit(f"{db} failed its check: {problems}")
    return time.perf_counter() - started


async def reads(hub: Hub, count: int) -> list[float]:
    samples = []
    for _ in range(count):
        started = time.perf_counter()
        await hub.feed.project_feed(ADMIN, FeedRead(project_id="big", limit=50))
        samples.append(time.perf_counter() - started)
    return samples


async def sampled_reads(hub: Hub, count: int) -> tuple[list[float], int]:
    """Reads while a sampler quick-checks hub.db back to back; (latencies, samples taken)."""

    async def no_pause(_seconds: float) -> None:
        await anyio.lowlevel.checkpoint()

    sampler = IntegritySampler(lambda: [hub.data_dir / "hub.db"], 0, clock=hub.core.clock, sleep=no_pause)
    async with anyio.create_task_group() as tg:
        tg.start_soon(sampler.run)
        await anyio.sleep(0.01)  # the first check is under way
        samples = await reads(hub, count)
        tg.cancel_scope.cancel()
    return samples, sampler.samples


def row(name: str, samples: list[float]) -> str:
    return f"| {name} | {len(samples)} | {statistics.median(samples) * 1000:.2f} | {pct(samples, 0.99) * 1000:.2f} |"


async def main_async(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        root = Path(tmp) / "data"
        settings = HubSettings(data_dir=str(root), admin_token="bench-admin-token-0123456789abcdef", min_free_bytes=0)
        took = await load(settings, args.events)
        db = root / "hub.db"
        size = db.stat().st_size
        print(
            f"hub.db: {args.events:,} events, {size / 2**20:.0f} MiB, loaded in {took:.1f} s "
            f"(load {os.getloadavg()[0]:.2f})\n"
        )
        quick, full = timed_check(db, True), timed_check(db, False)
        print("| check of hub.db | seconds | MiB/s |\n|---|---|---|")
        print(f"| quick_check (a sample) | {quick:.2f} | {size / 2**20 / quick:.0f} |")
        print(f"| integrity_check (`check`) | {full:.2f} | {size / 2**20 / full:.0f} |\n")
        without: list[float] = []
        during: list[float] = []
        taken = 0
        async with Hub.open(settings) as hub:
            await reads(hub, 20)  # warm the readers and the page cache
            for _ in range(args.rounds):
                without += await reads(hub, args.reads)
                got, n = await sampled_reads(hub, args.reads)
                during += got
                taken += n
        print("| feed page reads | reads | p50 ms | p99 ms |\n|---|---|---|---|")
        print(row("without sampling", without))
        print(row(f"while quick_check runs back to back ({taken} samples)", during))
        print(
            f"\np99 during / without: ratio {pct(during, 0.99) / pct(without, 0.99):.2f}; "
            f"p50 ratio {statistics.median(during) / statistics.median(without):.2f} "
            f"(load {os.getloadavg()[0]:.2f})\n"
        )
        first_started = time.perf_counter()
        first = await check(root, settings)
        first_took = time.perf_counter() - first_started
        second_started = time.perf_counter()
        second = await check(root, settings)
        second_took = time.perf_counter() - second_started
        if any(f.problem for f in first + second):
            raise SystemExit(f"check found problems: {[str(f) for f in first + second if f.problem]}")
        print("| `check` of the directory | seconds |\n|---|---|")
        print(f"| first (search index rebuilt) | {first_took:.2f} |")
        print(f"| second (search index matches) | {second_took:.2f} |")


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=1_000_000, help="events in hub.db (default one million)")
    parser.add_argument("--reads", type=int, default=200, help="feed page reads a round")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of each kind, alternating")
    parser.add_argument("--dir", default=None, help="where the temporary data directory goes")
    return parser.parse_args(argv)


def main() -> None:
    anyio.run(main_async, parse_args(sys.argv[1:]))


if __name__ == "__main__":
    main()
