"""An online backup of a hub holding about a gigabyte, while 16 agents keep writing.

Run from the checkout: `.venv/bin/python tools/bench/backup.py` (options: --help). `--size` scales
every count (1.0: the issue's hub; 0.01 for a quick look).

The hub at `--size 1`: hub.db with 1,000,000 events (bulk-loaded with the rows and tallies
`insert_event` writes, `tools/bench/feed.py`), 1,000 sessions each with a brain file of about
250 KiB, 100 projects each with a knowledge base of about 1 MiB, and 300 artifacts of 1 MiB each
in the blob store: about 1 GB in all. One brain and one knowledge base are written through the
services; the others are copies of them under each session's and project's name (the backup copies
bytes, it does not read them), so the load takes a minute rather than an hour.

Then, with the hub open, `--agents` writers each append a signal through the posts service and pause
`--pause-ms` (an agent reporting progress), timing every commit. First `--secs` seconds without a
backup (the baseline), then while `hub.backups.create` runs. Reported: the backup's duration, bytes
and rate, and the writers' p50/p99 commit latency during the backup against the baseline (target:
p99 at most 3 times). Both phases run in the same process minutes apart, so the ratio holds on a
noisy machine better than either figure alone.
"""

from __future__ import annotations

import argparse
import base64
import importlib.util
import os
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

if not __package__:  # run as `python tools/bench/<name>.py`: tools/bench/__init__.py says why
    del sys.path[0]
    if importlib.util.find_spec("tools") is None:
        sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import anyio

from hubcore.caller import Caller
from hubcore.config import HubSettings
from hubcore.hub import Hub
from hubcore.ops.backup import BackupCreate
from hubcore.services.agents import AgentCreate
from hubcore.services.artifacts.models import ArtifactPublish
from hubcore.services.brains import BrainPut
from hubcore.services.kb.models import KbWrite
from hubcore.services.posts import SignalAppend
from hubcore.services.projects import ProjectCreate
from hubcore.services.requests import parse
from hubcore.services.sessions import SessionStart
from tools.bench.feed import bulk_events, pct

ADMIN = Caller.admin()
CHUNK = 100_000


def scaled(args: argparse.Namespace, full: int) -> int:
    return max(1, int(full * args.size))


def text(n_bytes: int) -> str:
    """Incompressible printable text (a backup copies bytes; zeros would flatter a compressing disk)."""
    return base64.b64encode(os.urandom(n_bytes * 3 // 4)).decode()


async def load(settings: HubSettings, args: argparse.Namespace) -> dict[str, Any]:
    """Build the hub: services for one of each file, copies for the rest, bulk events."""
    agents = [f"agent-{i:02d}" for i in range(args.agents)]
    sessions: list[str] = []
    async with Hub.open(settings) as hub:
        for agent in agents:
            await hub.agents.create(ADMIN, parse(AgentCreate, {"id": agent, "display_name": agent}))
        projects = [f"proj-{i:03d}" for i in range(scaled(args, 100))]
        for project in projects:
            await hub.projects.create(ADMIN, parse(ProjectCreate, {"id": project}))
        for i in range(scaled(args, 1000)):
            owner = Caller.agent(agents[i % len(agents)])
            made = await hub.sessions.start(owner, parse(SessionStart, {"project_id": projects[0], "name": f"s{i}"}))
            sessions.append(str(made["session_id"]))
        owner = Caller.agent(agents[0])
        for n in range(10):  # one real brain of about 250 KiB
            await hub.brains.write_entry(
                owner,
                parse(
                    BrainPut,
                    {"path": f"/kv/n{n}", "content": text(25_000), "store": "session", "session_id": sessions[0]},
                ),
            )
        for n in range(100):  # one real knowledge base of about 1 MiB
            await hub.kb.write(
                ADMIN,
                parse(
                    KbWrite,
                    {"project_id": projects[0], "path": f"/fs/p{n}.md", "content": f"# Page {n}\n\n" + text(10_000)},
                ),
            )
        for n in range(scaled(args, 300)):
            await hub.artifacts.publish_artifact(
                ADMIN,
                parse(
                    ArtifactPublish,
                    {
                        "project_id": projects[n % len(projects)],
                        "title": f"a{n}",
                        "kind": "html",
                        "content": text(1_000_000),
                    },
                ),
            )
    data = settings.data_path
    for sid in sessions[1:]:
        shutil.copyfile(data / "brains" / f"{sessions[0]}.db", data / "brains" / f"{sid}.db")
    for project in projects[1:]:
        shutil.copyfile(data / "kb" / f"{projects[0]}.db", data / "kb" / f"{project}.db")
    events = scaled(args, 1_000_000)
    conn = sqlite3.connect(data / "hub.db")
    try:
        base_ms = int(time.time() * 1000) - events - 60_000
        for start in range(0, events, CHUNK):
            with conn:
                bulk_events(conn, projects[0], start, min(CHUNK, events - start), base_ms)
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    return {"agents": agents, "project": projects[0], "bytes": tree_bytes(data)}


def tree_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


async def writers(
    hub: Hub, agents: list[str], project: str, pause: float, stop: anyio.Event, samples: list[float]
) -> None:
    """Each agent appends a signal, then pauses; every commit's latency goes to `samples`."""

    async def agent(name: str) -> None:
        caller, n = Caller.agent(name), 0
        while not stop.is_set():
            req = parse(
                SignalAppend, {"project_id": project, "summary": f"{name} step {n}", "payload": {"body": "progress"}}
            )
            start = time.perf_counter()
            await hub.posts.signal_append(caller, req)
            samples.append(time.perf_counter() - start)
            n += 1
            await anyio.sleep(pause)

    async with anyio.create_task_group() as tg:
        for name in agents:
            tg.start_soon(agent, name)


async def measure(settings: HubSettings, loaded: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    pause = args.pause_ms / 1000
    async with Hub.open(settings) as hub:
        baseline: list[float] = []
        stop = anyio.Event()
        async with anyio.create_task_group() as tg:
            tg.start_soon(writers, hub, loaded["agents"], loaded["project"], pause, stop, baseline)
            await anyio.sleep(args.secs)
            stop.set()
        during: list[float] = []
        stop = anyio.Event()
        async with anyio.create_task_group() as tg:
            tg.start_soon(writers, hub, loaded["agents"], loaded["project"], pause, stop, during)
            await anyio.sleep(1)  # the writers are at their pace before the backup starts
            during.clear()
            started = time.perf_counter()
            result = await hub.backups.create(ADMIN, BackupCreate())
            elapsed = time.perf_counter() - started
            stop.set()
    return {"baseline": baseline, "during": during, "result": result, "elapsed": elapsed}


def report(loaded: dict[str, Any], got: dict[str, Any], args: argparse.Namespace) -> list[str]:
    result, base, during = got["result"], got["baseline"], got["during"]
    manifest = result["manifest"]
    mib = manifest["bytes"] / 2**20
    # A small hub on a fast disk (tmpfs) can be backed up before any writer commits: say so.
    during_row = (
        f"| during the backup | {len(during)} | {statistics.median(during) * 1000:.2f} | "
        f"{pct(during, 0.99) * 1000:.2f} |"
        if during
        else "| during the backup | 0 | - | - |"
    )
    ratio = (
        f"{pct(during, 0.99) / pct(base, 0.99):.2f} (target at most 3)"
        if during
        else f"none (no commit landed during the {got['elapsed']:.2f} s backup)"
    )
    return [
        f"hub on disk: {loaded['bytes'] / 2**20:.0f} MiB; backup: {manifest['files']} files, {mib:.0f} MiB "
        f"in {got['elapsed']:.1f} s ({mib / got['elapsed']:.0f} MiB/s; reply duration_ms {result['duration_ms']})",
        "",
        "| writers' commits | n | p50 ms | p99 ms |",
        "|---|---|---|---|",
        f"| without a backup | {len(base)} | {statistics.median(base) * 1000:.2f} | {pct(base, 0.99) * 1000:.2f} |",
        during_row,
        "",
        f"p99 during / without: {ratio}",
        f"load: size {args.size}, {args.agents} agents pausing {args.pause_ms} ms, baseline {args.secs} s",
    ]


async def main_async(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        backups = Path(tmp) / "backups"
        backups.mkdir()
        settings = replace(
            HubSettings(),
            data_dir=str(Path(tmp) / "data"),
            min_free_bytes=0,
            backup_dir=str(backups),
            inbox_open_per_agent=0,
            inbox_open_per_project=0,
            events_per_project=0,
        )
        started = time.perf_counter()
        loaded = await load(settings, args)
        print(f"loaded in {time.perf_counter() - started:.0f} s", file=sys.stderr)
        got = await measure(settings, loaded, args)
        print("\n".join(report(loaded, got, args)))


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=float, default=1.0, help="scale of every count (1.0: about 1 GB)")
    parser.add_argument("--agents", type=int, default=16)
    parser.add_argument("--pause-ms", type=float, default=20.0, help="each writer's pause between commits")
    parser.add_argument("--secs", type=float, default=10.0, help="the baseline's length")
    parser.add_argument("--dir", default=None, help="where the temporary data directory goes")
    return parser.parse_args(argv)


def main() -> None:
    anyio.run(main_async, parse_args(sys.argv[1:]))


if __name__ == "__main__":
    main()
