"""Artifacts: publishing 1 MiB over MCP against an fsynced file write, and the artifact reads.

Run from the checkout: `.venv/bin/python -m tools.bench.artifacts` or
`.venv/bin/python tools/bench/artifacts.py` (options: --help).

1. Publish: `--rounds` times (default 30), alternating in one run, (a) the baseline: the same
   1 MiB of markdown written to a new file in the data directory's volume with `fsync` (open,
   write, fsync, close), and (b) `artifact_publish` of those bytes (each round's text differs, so
   every body is a new blob) by an agent over `/mcp` (protocol 2026-07-28, one request a call) on
   the real ASGI app through httpx's in-process transport. Reports p50/p99 of each and the ratio of
   the medians.
2. Reads with `--artifacts` artifacts (default 1,000; small markdown documents, each with a share
   link): `GET /api/v1/artifacts/:id` (admin; the rendered markdown included) and the public
   `GET /s/:token` page, `--reads` each (default 1,000) over random artifacts, against the same
   run's floor `GET /healthz` through the same stack. p50/p99 and the ratio of the p50s.

The machine is shared: compare ratios, not milliseconds, between runs.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import random
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

if not __package__:  # run as `python tools/bench/<name>.py`: tools/bench/__init__.py says why
    del sys.path[0]
    if importlib.util.find_spec("tools") is None:
        sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import anyio
import httpx

from hubcore.caller import Caller
from hubcore.services.artifacts import ArtifactPublish
from hubcore.services.artifacts.shares import ShareRef
from hubhttp.asgi import HubASGI
from tools.bench.feed import ADMIN_TOKEN, pct, served
from tools.bench.mcp_wire import mcp_headers, result_of, tool_body

ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
MIB = 1 << 20


def markdown_mib(round_no: int) -> str:
    """About 1 MiB of markdown (headings, paragraphs, a table), distinct per round."""
    parts = [f"# Report {round_no}\n\n"]
    row = "| metric | value | note |\n|---|---|---|\n" + "".join(f"| m{i} | {i * 7} | ok |\n" for i in range(20))
    n = 0
    while sum(map(len, parts)) < MIB - 4096:
        parts.append(
            f"## Section {n}\n\nThe measurement {n} of round {round_no} held steady across the window; "
            "nothing else of note happened in this part of the run.\n\n" + (row if n % 10 == 0 else "")
        )
        n += 1
    text = "".join(parts)
    return text + "x" * (MIB - len(text.encode()))


def fsync_write(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def line(name: str, samples: list[float]) -> str:
    return f"| {name} | {len(samples)} | {statistics.median(samples) * 1000:.2f} | {pct(samples, 0.99) * 1000:.2f} |"


async def timed(fn: Callable[..., Awaitable[Any]], *args: Any) -> float:
    start = time.perf_counter()
    await fn(*args)
    return time.perf_counter() - start


async def agent_token(client: httpx.AsyncClient) -> str:
    r = await client.post("/api/v1/agents", json={"id": "bench", "display_name": "Bench"}, headers=ADMIN)
    assert r.status_code == 201, r.text
    r = await client.post("/api/v1/agents/bench/token", headers=ADMIN)
    assert r.status_code == 201, r.text
    return str(r.json()["token"])


async def publish(client: httpx.AsyncClient, body: bytes, headers: dict[str, str]) -> None:
    r = await client.post("/mcp", content=body, headers=headers)
    assert r.status_code == 200, r.text
    assert result_of(r.content)["version"] == 1


async def bench_publish(client: httpx.AsyncClient, data_dir: Path, rounds: int, out: list[str]) -> None:
    token = await agent_token(client)
    headers = mcp_headers(token, "artifact_publish")
    files: list[float] = []
    published: list[float] = []
    scratch = data_dir / "bench-fsync"
    scratch.mkdir()
    for n in range(rounds):
        text = markdown_mib(n)
        data = text.encode()
        files.append(await timed(anyio.to_thread.run_sync, fsync_write, scratch / f"f{n}", data))
        body = tool_body(
            "artifact_publish", {"project_id": "web", "title": f"Report {n}", "kind": "markdown", "content": text}
        )
        published.append(await timed(publish, client, body, headers))
    out += [
        "Publish 1 MiB of markdown (ms):",
        "",
        "| what | n | p50 | p99 |",
        "|---|---|---|---|",
        line("file write + fsync (baseline)", files),
        line("artifact_publish over /mcp", published),
        "",
        f"artifact_publish p50 / fsync write p50: {statistics.median(published) / statistics.median(files):.2f}",
        "",
    ]


async def load(app: HubASGI, count: int) -> list[tuple[str, str]]:
    """`count` small markdown artifacts, each shared; (artifact id, share token) pairs."""
    hub, admin = app.hub, Caller.admin()
    made = []
    for n in range(count):
        text = f"# Note {n}\n\n| k | v |\n|---|---|\n| n | {n} |\n\n" + "Some prose about the note. " * 60
        found = await hub.artifacts.publish_artifact(
            admin,
            ArtifactPublish.model_validate({"project_id": "web", "title": "", "kind": "markdown", "content": text}),
        )
        share = await hub.shares.create(admin, ShareRef(artifact_id=found["artifact_id"]))
        made.append((str(found["artifact_id"]), str(share["token"])))
    return made


async def bench_reads(client: httpx.AsyncClient, made: list[tuple[str, str]], reads: int, out: list[str]) -> None:
    rng = random.Random(7)
    floor: list[float] = []
    gets: list[float] = []
    pages: list[float] = []

    async def get(url: str, headers: dict[str, str] | None = None) -> None:
        r = await client.get(url, headers=headers)
        assert r.status_code == 200, (url, r.status_code)

    for _ in range(reads):  # interleaved, so noise lands on all three alike
        artifact_id, token = rng.choice(made)
        floor.append(await timed(get, "/healthz"))
        gets.append(await timed(get, f"/api/v1/artifacts/{artifact_id}", ADMIN))
        pages.append(await timed(get, f"/s/{token}"))
    base = statistics.median(floor)
    out += [
        f"Reads with {len(made):,} artifacts (ms):",
        "",
        "| what | n | p50 | p99 |",
        "|---|---|---|---|",
        line("GET /healthz (floor)", floor),
        line("GET /api/v1/artifacts/:id", gets),
        line("GET /s/:token", pages),
        "",
        f"p50 / floor p50: artifacts/:id {statistics.median(gets) / base:.2f}, "
        f"s/:token {statistics.median(pages) / base:.2f}",
    ]


async def main(args: argparse.Namespace) -> None:
    out: list[str] = []
    async with served(args.dir) as (app, client):
        r = await client.post("/api/v1/projects", json={"id": "web"}, headers=ADMIN)
        assert r.status_code == 201, r.text
        if args.rounds:
            await bench_publish(client, app.hub.settings.data_path, args.rounds, out)
        made = await load(app, args.artifacts)
        await bench_reads(client, made, args.reads, out)
    print("\n".join(out))


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=30, help="1 MiB publishes (and fsynced writes); 0 skips part 1")
    parser.add_argument("--artifacts", type=int, default=1_000)
    parser.add_argument("--reads", type=int, default=1_000)
    parser.add_argument("--dir", default=None, help="where the temporary data directory goes")
    return parser.parse_args(argv)


if __name__ == "__main__":
    anyio.run(main, parse_args(sys.argv[1:]))
