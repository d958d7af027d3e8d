"""Web Push: how fast a push leaves the hub, what sending costs the write path, and what the library
costs at start and in memory.

Run from the checkout: `.venv/bin/python tools/bench/push.py` (options: --help).

1. Latency: a hub (in process, real stores) with `--devices` devices registered at a loopback push
   service. An agent posts `--questions` questions one at a time; for each, the time from its commit
   (the moment the commit's effects reach the push sender) to the last of the devices' encrypted pushes
   arriving at the push service. p50 and p99.
2. Throughput: `--posts` questions posted by `--writers` concurrent agents' calls, with the devices
   registered and with none (a fresh hub each), three alternating rounds; the ratio of the medians
   (the send is off the write path, so the ratio should stay near 1).
3. Import cost in a fresh interpreter (wall time, resident memory added) of what the push worker
   imports (http_ece, py_vapid), beside pywebpush (which adds requests and aiohttp) when installed;
   and the push worker process's resident size.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

if not __package__:  # run as `python tools/bench/<name>.py`: tools/bench/__init__.py says why
    del sys.path[0]
    if importlib.util.find_spec("tools") is None:
        sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import anyio
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from hubcore.caller import Caller
from hubcore.config import HubSettings
from hubcore.hub import Hub
from hubcore.services.agents import AgentCreate
from hubcore.services.changes import Effects
from hubcore.services.posts import QuestionPost
from hubcore.services.projects import ProjectCreate
from hubcore.services.push.devices import DeviceCreate
from hubcore.services.push.keys import b64url
from hubcore.services.requests import parse

ADMIN, BOT = Caller.admin(), Caller.agent("bot")


class Receiver:
    """A loopback push service that notes when each push arrives (it does not decrypt: the tests
    prove the payloads; here only the time counts)."""

    def __init__(self) -> None:
        self.arrivals: dict[str, list[float]] = {}  # topic (the item id) -> arrival times
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive: a push service keeps connections open

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", "0")))
                now = time.perf_counter()
                with receiver.lock:
                    receiver.arrivals.setdefault(self.headers.get("Topic", ""), []).append(now)
                self.send_response(201)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.origin = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def subscription(endpoint: str, n: int) -> DeviceCreate:
    key = (
        ec.generate_private_key(ec.SECP256R1())
        .public_key()
        .public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    )
    return parse(
        DeviceCreate,
        {"name": f"device {n}", "endpoint": endpoint, "keys": {"p256dh": b64url(key), "auth": b64url(bytes(16))}},
    )


@asynccontextmanager
async def bench_hub(root: Path, receiver: Receiver | None, devices: int) -> AsyncIterator[Hub]:
    settings = replace(
        HubSettings(data_dir=str(root), admin_token="bench-admin-token-0123456789"),
        min_free_bytes=0,
        inbox_open_per_agent=0,
        inbox_open_per_project=0,
    )
    async with Hub.open(settings) as hub:
        await hub.agents.create(ADMIN, parse(AgentCreate, {"id": "bot", "display_name": "Bot"}))
        await hub.projects.create(ADMIN, parse(ProjectCreate, {"id": "proj"}))
        for n in range(devices if receiver else 0):
            assert receiver is not None
            await hub.push.devices.create(ADMIN, subscription(f"{receiver.origin}/push/{n}", n))
        yield hub


async def ask(hub: Hub, n: int) -> str:
    result = await hub.posts.question_post(
        BOT,
        parse(
            QuestionPost,
            {
                "project_id": "proj",
                "summary": f"Question {n}?",
                "body": "Some context for the human.",
                "options": ["Yes", "No"],
            },
        ),
    )
    return str(result["event_id"])


async def latency(root: Path, devices: int, questions: int) -> list[float]:
    receiver = Receiver()
    committed: dict[str, float] = {}
    async with bench_hub(root, receiver, devices) as hub:
        sender = hub.push.sender
        observe = sender.on_commit

        def noting(effects: Effects) -> None:
            now = time.perf_counter()
            for change in effects.changes:
                if change.topic == "feed":
                    committed[change.event_id] = now
            observe(effects)

        sender.on_commit = noting  # type: ignore[method-assign]  # the push part calls it per commit
        await ask(hub, -1)  # the first send imports pywebpush: not a steady-state figure
        await sender.idle.wait()
        samples = []
        for n in range(questions):
            event_id = await ask(hub, n)
            await sender.idle.wait()
            arrivals = receiver.arrivals.get(event_id, [])
            assert len(arrivals) == devices, (event_id, len(arrivals))
            samples.append(max(arrivals) - committed[event_id])
    receiver.server.shutdown()
    receiver.server.server_close()
    return samples


async def throughput(root: Path, devices: int, posts: int, writers: int) -> tuple[float, dict[str, float]]:
    receiver = Receiver() if devices else None
    async with bench_hub(root, receiver, devices) as hub:
        await ask(hub, -1)
        await hub.push.sender.idle.wait()
        counter = iter(range(posts))
        started = time.perf_counter()

        async def writer() -> None:
            for n in counter:
                await ask(hub, n)

        async with anyio.create_task_group() as tg:
            for _ in range(writers):
                tg.start_soon(writer)
        elapsed = time.perf_counter() - started
        await hub.push.sender.idle.wait()
        counted = {
            result: hub.push.sender.counter.labels(result=result)._value.get()
            for result in ("delivered", "dropped", "failed")
        }
    if receiver is not None:
        receiver.server.shutdown()
        receiver.server.server_close()
    return posts / elapsed, counted


# VmRSS, not ru_maxrss: a child started from a large parent inherits the parent's peak.
IMPORT_PROBE = """
import time
def rss():
    return int([l for l in open("/proc/self/status") if l.startswith("VmRSS")][0].split()[1])
before = rss()
t = time.perf_counter()
import {modules}
print(time.perf_counter() - t, rss() - before)
"""


def import_cost(modules: str, rounds: int = 5) -> tuple[float, float]:
    """(median seconds, median KiB of resident memory) importing `modules` adds to a fresh interpreter."""
    times, sizes = [], []
    for _ in range(rounds):
        out = subprocess.run(
            [sys.executable, "-c", IMPORT_PROBE.format(modules=modules)], capture_output=True, text=True, check=True
        )
        seconds, kib = out.stdout.split()
        times.append(float(seconds))
        sizes.append(float(kib))
    return statistics.median(times), statistics.median(sizes)


def worker_rss() -> str:
    """The resident size of this process's push worker (anyio's worker processes are its children)."""
    found = []
    for child in Path("/proc").glob("[0-9]*"):
        try:
            if int((child / "stat").read_text().split()[3]) == os.getpid():
                rss = [line for line in (child / "status").read_text().splitlines() if line.startswith("VmRSS")]
                found.append(rss[0].split(":")[1].strip())
        except (OSError, IndexError, ValueError):
            continue
    return ", ".join(found) or "none running"


async def main(args: argparse.Namespace) -> None:
    print(f"load before: {Path('/proc/loadavg').read_text().strip()}")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        samples = await latency(root / "latency", args.devices, args.questions)
        p50, p99 = statistics.median(samples), sorted(samples)[min(len(samples) - 1, int(0.99 * len(samples)))]
        print(
            f"commit to the last of {args.devices} pushes leaving: n={len(samples)} p50={p50 * 1000:.1f} ms "
            f"p99={p99 * 1000:.1f} ms (target p99 < 100 ms)"
        )
        rates: dict[int, list[float]] = {args.devices: [], 0: []}
        for n in range(args.rounds):
            for devices in (0, args.devices) if n % 2 == 0 else (args.devices, 0):  # alternate who goes first
                rate, counted = await throughput(root / f"tp-{n}-{devices}", devices, args.posts, args.writers)
                rates[devices].append(rate)
                if devices:
                    print(
                        f"  round {n}: {rate:.0f}/s with {devices} devices; pushes "
                        + ", ".join(f"{k} {v:.0f}" for k, v in counted.items())
                    )
                else:
                    print(f"  round {n}: {rate:.0f}/s with none")
        with_devices, without = statistics.median(rates[args.devices]), statistics.median(rates[0])
        print(
            f"question_post throughput ({args.posts} posts, {args.writers} writers, {args.rounds} rounds): "
            f"{args.devices} devices {with_devices:.0f}/s, none {without:.0f}/s, "
            f"ratio {with_devices / without:.2f} (target >= 0.9)"
        )
    for modules in ("http_ece, py_vapid, hubcore.services.push.wire", "pywebpush"):
        if importlib.util.find_spec(modules.split(",")[0]) is None:
            print(f"import {modules}: not installed")
            continue
        seconds, kib = import_cost(modules)
        print(
            f"import {modules}: {seconds * 1000:.0f} ms, +{kib / 1024:.1f} MiB resident "
            f"(median of 5 fresh interpreters)"
        )
    print(f"the push worker process: {worker_rss()}")
    print(
        f"load after: {Path('/proc/loadavg').read_text().strip()}; "
        f"this process peaked at {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--devices", type=int, default=10)
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--posts", type=int, default=1000)
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=4)
    anyio.run(main, parser.parse_args())
