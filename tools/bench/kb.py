"""The knowledge base at 10,000 pages: writes, the derived views, resources/list, file growth.

Run from the checkout: `.venv/bin/python -m tools.bench.kb` or `.venv/bin/python tools/bench/kb.py`
(options: --help).

1. One project holds `--pages` pages (default 10,000), a realistic mix written through the
   service: 40 sections with an index each, a root index and a log; sizes log-normal around 1.5 KB
   (100 B to 200 KB); most pages with a frontmatter block (type, title, description, tags, some
   `stale_after`), some without one or without `type`; 0 to 6 markdown links each, a few broken,
   some inside code (which are not links).
2. In-process (`hub.kb`, as the admin): `--writes` overwrites of existing pages with history kept
   (p50, p99), beside the same run's baseline, a session brain write of the same bytes; lint's
   first walk since the hub started (every page decoded); lint cold (the first walk after a write,
   `--cold` rounds); lint, the meta listing (500 rows), backlinks and
   stats warm (`--reads` each, p99); `resources/list` pages of 100 walked to the end through the
   MCP resources handler (`hubmcp.resources.Resources.list`), p99.
3. Over REST (the real ASGI app: gate, Quart, JSON, on httpx's in-process transport): page writes
   (`PUT`), and the four views warm.
4. File growth: a second project takes `--churn` writes (default 10,000) spread over `--churn-pages`
   pages (default 1,000): the file's size with its write-ahead log after a checkpoint, and bytes per
   kept version.

Targets (issue 12): page write p99 under 10 ms in-process; lint cold under 500 ms; lint, meta
listing, backlinks, stats warm under 20 ms p99; a resources/list page of 100 under 20 ms p99.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import os
import random
import sqlite3
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

if not __package__:  # run as `python tools/bench/<name>.py`: tools/bench/__init__.py says why
    del sys.path[0]
    if importlib.util.find_spec("tools") is None:
        sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import anyio
import httpx

from hubcore.caller import Caller
from hubcore.hub import Hub
from hubcore.services.brains import BrainPut
from hubcore.services.kb import models
from hubcore.services.projects import ProjectCreate
from hubcore.services.requests import parse
from hubcore.services.sessions import SessionStart
from hubmcp.active import ActiveSessions
from hubmcp.context import CallContext
from hubmcp.resources import Resources
from tools.bench.feed import ADMIN_TOKEN, pct, report, served

ADMIN = Caller.admin()
AUTH = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
SECTIONS = 40
TYPES = ("Concept", "Guide", "Runbook", "Reference", "Decision", "Decision Record")
WORDS = (
    "hub",
    "agent",
    "page",
    "link",
    "index",
    "section",
    "store",
    "actor",
    "write",
    "version",
    "trust",
    "review",
    "lint",
    "frontmatter",
    "project",
    "session",
    "brain",
    "event",
    "feed",
    "inbox",
    "cursor",
    "limit",
    "cache",
    "walk",
    "path",
    "history",
    "kept",
    "bytes",
)


class Bundle:
    """A deterministic, realistic bundle: every page's path and content."""

    def __init__(self, pages: int, seed: int = 12) -> None:
        self.rng = random.Random(seed)
        per = max(1, pages // SECTIONS)
        self.concepts = [self._concept_path(s, n) for s in range(SECTIONS) for n in range(per)][: max(0, pages - 42)]

    def _concept_path(self, section: int, n: int) -> str:
        nested = "sub/" if n % 20 == 19 else ""
        return f"/fs/sec{section:02d}/{nested}page{n:05d}.md"

    def text(self, size: int) -> str:
        words: list[str] = []
        length = 0
        while length < size:
            word = self.rng.choice(WORDS)
            words.append(word)
            length += len(word) + 1
        lines = [" ".join(words[i : i + 14]) for i in range(0, len(words), 14)]
        return "\n".join(lines) + "\n"

    def frontmatter(self, title: str) -> str:
        roll = self.rng.random()
        if roll < 0.10:
            return ""  # no block: missing_frontmatter
        keys = [
            f"title: {title}",
            f"description: notes about {title.lower()}",
            f"tags: [{', '.join(self.rng.sample(WORDS, 3))}]",
            f"status: {self.rng.choice(('draft', 'stable'))}",
        ]
        if roll >= 0.15:
            keys.insert(0, f"type: {self.rng.choice(TYPES)}")
        if self.rng.random() < 0.10:
            year, month, day = self.rng.randint(2020, 2030), self.rng.randint(1, 9), self.rng.randint(10, 19)
            keys.append(f"stale_after: {year}-0{month}-{day}")
        return "---\n" + "\n".join(keys) + "\n---\n"

    def links(self, path: str) -> str:
        out = []
        for _ in range(self.rng.randint(0, 6)):
            target = self.rng.choice(self.concepts) if self.rng.random() > 0.03 else "/fs/nowhere/gone.md"
            out.append(f"See [{target.rsplit('/', 1)[-1]}]({target}).")
        if self.rng.random() < 0.2:
            out.append("```\n[not a link](/fs/code.md)\n```")
        return "\n\n".join(out) + "\n"

    def concept(self, path: str) -> str:
        size = int(min(200_000, max(100, self.rng.lognormvariate(math.log(1500), 1.0))))
        title = path.rsplit("/", 1)[-1].removesuffix(".md").title()
        return self.frontmatter(title) + f"# {title}\n\n" + self.text(size) + "\n" + self.links(path)

    def indexes(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for s in range(SECTIONS):
            section = f"/fs/sec{s:02d}/"
            items = [p for p in self.concepts if p.startswith(section)]
            body = "\n".join(f"- [{p.rsplit('/', 1)[-1]}]({p})" for p in items)
            out[section + "index.md"] = f"---\ntype: Reference\ntitle: Section {s}\n---\n{body}\n"
        roots = "\n".join(f"- [Section {s}](/fs/sec{s:02d}/index.md)" for s in range(SECTIONS))
        out["/fs/index.md"] = f"---\ntype: Reference\ntitle: Index\nokf_version: 1\n---\n{roots}\n"
        out["/fs/log.md"] = "---\ntype: Reference\ntitle: Log\n---\n- loaded the bundle\n"
        return out


class Samples(list[float]):
    """Wall seconds of each call, and the process's CPU seconds over all of them (every thread:
    the hub's actors and readers too): on a loaded machine the wall time measures the machine,
    the CPU time what an operation costs."""

    cpu: float = 0.0


async def timed(fn: Callable[[], Awaitable[object]], times: int) -> Samples:
    samples = Samples()
    started = time.process_time()
    for _ in range(times):
        t = time.perf_counter()
        await fn()
        samples.append(time.perf_counter() - t)
    samples.cpu += time.process_time() - started
    return samples


def write_req(project: str, path: str, content: str) -> models.KbWrite:
    return parse(models.KbWrite, {"project_id": project, "path": path, "content": content})


async def load(hub: Hub, project: str, bundle: Bundle) -> tuple[float, list[float]]:
    await hub.projects.create(ADMIN, parse(ProjectCreate, {"id": project}))
    samples = []
    started = time.perf_counter()
    pages = {p: bundle.concept(p) for p in bundle.concepts} | bundle.indexes()
    for path, content in pages.items():
        t = time.perf_counter()
        await hub.kb.write(ADMIN, write_req(project, path, content))
        samples.append(time.perf_counter() - t)
    return time.perf_counter() - started, samples


def ratio(name: str, samples: list[float], base: list[float], target_ms: float | None) -> str:
    p99 = pct(samples, 0.99) * 1000
    goal = f"under {target_ms:g} ms: {'met' if p99 < target_ms else 'NOT met'}" if target_ms else ""
    cpu = f"{samples.cpu / len(samples) * 1000:.2f}" if isinstance(samples, Samples) and samples else ""
    return f"{report(name, samples)} {p99 / (pct(base, 0.99) * 1000):.1f}x | {cpu} | {goal} |"


HEADER = "| calls | p50 ms | p99 ms | p99 vs baseline | CPU ms per call | target |\n|---|---|---|---|---|---|---|"


async def in_process(hub: Hub, bundle: Bundle, args: argparse.Namespace, out: list[str]) -> None:
    rng = random.Random(7)
    kb = hub.kb
    sid = (await hub.sessions.start(ADMIN, parse(SessionStart, {"project_id": "big", "name": "bench"})))["session_id"]
    edits = [(p, bundle.concept(p)) for p in rng.choices(bundle.concepts, k=args.writes)]
    it = iter(edits)
    base = await timed(
        lambda: hub.brains.write_entry(
            ADMIN,
            parse(BrainPut, {"path": "/fs/baseline.md", "content": edits[0][1], "store": "session", "session_id": sid}),
        ),
        args.writes,
    )
    writes = await timed(lambda: kb.write(ADMIN, write_req("big", *next(it))), args.writes)
    out.append("| in-process " + HEADER)
    out.append(ratio("baseline: session brain write, same bytes", base, base, None))
    out.append(ratio("page write, history kept", writes, base, 10))
    lint = models.KbLint(project_id="big")
    # The first walk since the hub started decodes every page's stored facts; every later one
    # decodes only the pages written since and renews the previous walk.
    out.append(ratio("lint, first walk since the hub started", await timed(lambda: kb.lint(ADMIN, lint), 1), base, 500))
    cold = Samples()
    for n in range(args.cold):
        await kb.write(ADMIN, write_req("big", "/fs/log.md", f"---\ntype: Reference\n---\n- round {n}\n"))
        one = await timed(lambda: kb.lint(ADMIN, lint), 1)
        cold += one
        cold.cpu += one.cpu
    out.append(ratio("lint, cold (first walk after a write)", cold, base, 500))
    meta = parse(models.KbList, {"project_id": "big", "meta": True, "limit": 500})
    stats = models.KbProject(project_id="big")
    await kb.lint(ADMIN, lint)
    for name, fn in (
        ("lint, warm", lambda: kb.lint(ADMIN, lint)),
        ("meta listing (500 rows), warm", lambda: kb.list(ADMIN, meta)),
        (
            "backlinks, warm",
            lambda: kb.backlinks(
                ADMIN, parse(models.KbBacklinks, {"project_id": "big", "path": rng.choice(bundle.concepts)})
            ),
        ),
        ("stats, warm", lambda: kb.stats(ADMIN, stats)),
    ):
        await fn()  # warm: the walk is renewed ten seconds after it was taken, so take it again first
        out.append(ratio(name, await timed(fn, args.reads), base, 20))
    out.append(ratio("resources/list page of 100", await resource_pages(hub), base, 20))


async def resource_pages(hub: Hub) -> Samples:
    """Every page of resources/list, walked to the end as the admin (the whole bundle)."""
    resources = Resources()
    call = CallContext(hub, ADMIN, None, ActiveSessions(), lambda: None, "2025-11-25")
    samples = Samples()
    cursor = None
    started = time.process_time()
    while True:
        t = time.perf_counter()
        page = await resources.list(call, cursor)
        samples.append(time.perf_counter() - t)
        if page.next_cursor is None:
            samples.cpu = time.process_time() - started
            return samples
        cursor = page.next_cursor


async def over_rest(client: httpx.AsyncClient, bundle: Bundle, args: argparse.Namespace, out: list[str]) -> None:
    rng = random.Random(9)
    base_url = "/api/v1/projects/big/kb"

    async def put() -> None:
        path = rng.choice(bundle.concepts)
        r = await client.put(
            f"{base_url}/pages{path.removeprefix('/fs')}", json={"content": bundle.concept(path)}, headers=AUTH
        )
        r.raise_for_status()

    async def get(url: str, **params: str) -> None:
        (await client.get(f"{base_url}/{url}", params=params, headers=AUTH)).raise_for_status()

    read = await timed(lambda: get("pages" + rng.choice(bundle.concepts).removeprefix("/fs")), args.reads)
    out.append("\n| over REST " + HEADER)
    out.append(ratio("baseline: GET one page", read, read, None))
    out.append(ratio("PUT page, history kept", await timed(put, args.writes), read, None))
    await get("lint")
    for name, url, params in (
        ("lint, warm", "lint", {}),
        ("meta listing (500 rows), warm", "pages", {"meta": "1"}),
        ("backlinks, warm", "backlinks", {"path": "sec00/index.md"}),
        ("stats, warm", "stats", {}),
    ):
        await view(get, url, params)()  # warm, as in-process
        out.append(ratio(name, await timed(view(get, url, params), args.reads), read, 20))


def view(get: Callable[..., Awaitable[None]], url: str, params: dict[str, str]) -> Callable[[], Awaitable[None]]:
    return lambda: get(url, **params)


async def churn(hub: Hub, args: argparse.Namespace, out: list[str]) -> None:
    bundle = Bundle(args.churn_pages + 42, seed=3)  # 42: the indexes and log a bundle adds
    await hub.projects.create(ADMIN, parse(ProjectCreate, {"id": "churn"}))
    rng = random.Random(5)
    paths = bundle.concepts[: args.churn_pages] or ["/fs/only.md"]
    content = {p: bundle.concept(p) for p in paths}
    stored = 0
    for n in range(args.churn):
        path = paths[n] if n < len(paths) else rng.choice(paths)
        content[path] += f"\nedit {n}: {bundle.text(60)}"  # a small edit, as an agent appends notes
        stored += len(content[path].encode())
        await hub.kb.write(ADMIN, write_req("churn", path, content[path]))
    await hub.kb.files.pool.close("churn")  # checkpoints and closes the file
    db = hub.kb.files.path_of("churn")
    size = sum(f.stat().st_size for f in (db, Path(f"{db}-wal")) if f.exists())
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    kept = conn.execute("SELECT COUNT(*), COALESCE(SUM(LENGTH(content)), 0) FROM blobs").fetchone()
    conn.close()
    out.append(
        f"\nFile growth: {args.churn:,} writes over {len(paths):,} pages: kb/churn.db {size / 2**20:.1f} MiB "
        f"holding {kept[0]:,} kept versions ({kept[1] / 2**20:.1f} MiB of page bytes, {stored / 2**20:.1f} MiB "
        f"written): {size / max(kept[0], 1):,.0f} bytes per kept version on disk, "
        f"{kept[1] / max(kept[0], 1):,.0f} of them the page itself."
    )


async def main(args: argparse.Namespace) -> None:
    out: list[str] = []
    async with served(args.dir) as (app, client):
        bundle = Bundle(args.pages)
        cpu = time.process_time()
        took, samples = await load(app.hub, "big", bundle)
        cpu = time.process_time() - cpu
        out.append(
            f"Loaded {len(samples):,} pages in {took:.1f} s through the service "
            f"(write p50 {pct(samples, 0.5) * 1000:.2f} ms, p99 {pct(samples, 0.99) * 1000:.2f} ms, "
            f"{cpu / max(len(samples), 1) * 1000:.2f} ms CPU a page); load average "
            f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} cores.\n"
        )
        await in_process(app.hub, bundle, args, out)
        await over_rest(client, bundle, args, out)
        await churn(app.hub, args, out)
    out.append(f"Load average at the end: {os.getloadavg()[0]:.2f}.")
    print("\n".join(out))


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=10_000)
    parser.add_argument("--writes", type=int, default=500)
    parser.add_argument("--reads", type=int, default=200)
    parser.add_argument("--cold", type=int, default=10)
    parser.add_argument("--churn", type=int, default=10_000)
    parser.add_argument("--churn-pages", type=int, default=1_000)
    parser.add_argument("--dir", default=None, help="where the temporary data directory goes")
    return parser.parse_args(argv)


if __name__ == "__main__":
    anyio.run(main, parse_args(sys.argv[1:]))
