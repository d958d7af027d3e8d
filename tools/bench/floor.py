"""Benchmark: what every request pays for the hub's gate and routing (issue 27, part 5).

Two servers in one run, each in its own process under Hypercorn on asyncio, each with the same
no-op route (`POST /bench/noop`, answers `{}`):

- `hub`: the hub (`HubASGI`: its ASGI router, gate, metrics and Quart app) with the route added
  to its Quart app, called with the admin bearer token as every agent request is;
- `bare`: a bare Quart app with only that route, under the same Hypercorn configuration.

`--clients` keep-alive connections (the hand-built HTTP/1.1 client of `tools/bench/brains.py`, so
client CPU is not what is measured) send `--requests` requests per round to one server, then the
other, alternating which goes first, for `--rounds` rounds. The figure is the server process's
CPU time per request (every thread, from /proc/<pid>/stat): throughput on a shared machine moves
with other work, CPU per request far less. The ratio hub / bare is taken per round; the median
is reported. Target (issue 27): at most 1.15.

    .venv/bin/python -m tools.bench.floor [--clients 32] [--requests 6000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

if not __package__:  # run as `python tools/bench/<name>.py`: tools/bench/__init__.py says why
    del sys.path[0]
    if importlib.util.find_spec("tools") is None:
        sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tools.bench.brains import cpu_seconds
from tools.bench.mcp_wire import ADMIN, SERVER, RawConn, free_port

TARGET = 1.15
BARE = r"""
import asyncio, sys
from hypercorn.asyncio import serve
from hypercorn.config import Config
from quart import Quart, Response

app = Quart(__name__)

@app.post("/bench/noop")
async def nothing() -> Response:
    return Response(b"{}", content_type="application/json")

config = Config()
config.bind = [f"127.0.0.1:{sys.argv[1]}"]
config.accesslog = None
config.backlog = 2048
asyncio.run(serve(app, config))
"""
HEADERS = {"Content-Type": "application/json", "Authorization": f"Bearer {ADMIN}"}


@contextmanager
def servers() -> Iterator[dict[str, tuple[int, subprocess.Popen[bytes]]]]:
    """Both servers started, by name: (port, process)."""
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "HUB_LOG_LEVEL": "warning"}
        hub_port, bare_port = free_port(), free_port()
        procs = {
            "hub": (
                hub_port,
                subprocess.Popen(
                    [sys.executable, "-c", SERVER, str(Path(tmp) / "data"), str(hub_port), ADMIN, "0"],
                    env=env,
                    stderr=subprocess.DEVNULL,
                ),
            ),
            "bare": (
                bare_port,
                subprocess.Popen([sys.executable, "-c", BARE, str(bare_port)], env=env, stderr=subprocess.DEVNULL),
            ),
        }
        try:
            yield procs
        finally:
            for _, proc in procs.values():
                proc.terminate()
                proc.wait(30)


async def ready(port: int) -> None:
    for _ in range(300):
        try:
            conn = await RawConn("127.0.0.1", port).open()
        except OSError:
            await asyncio.sleep(0.1)
            continue
        try:
            status, _ = await conn.post("/bench/noop", b"{}", HEADERS)
            if status == 200:
                return
        finally:
            await conn.close()
        await asyncio.sleep(0.1)
    raise RuntimeError(f"no server on port {port}")


async def client(port: int, count: int) -> None:
    conn = await RawConn("127.0.0.1", port).open()
    try:
        for _ in range(count):
            status, body = await conn.post("/bench/noop", b"{}", HEADERS)
            assert status == 200 and body == b"{}", (status, body[:200])
    finally:
        await conn.close()


async def cpu_per_request(port: int, pid: int, args: argparse.Namespace) -> float:
    each = args.requests // args.clients
    before = cpu_seconds(pid)
    await asyncio.gather(*(client(port, each) for _ in range(args.clients)))
    return (cpu_seconds(pid) - before) / (each * args.clients) * 1e6


async def main_async(args: argparse.Namespace) -> None:
    with servers() as procs:
        for port, _ in procs.values():
            await ready(port)
        for port, proc in procs.values():  # warm both up (imports, first-request paths)
            await cpu_per_request(port, proc.pid, argparse.Namespace(**{**vars(args), "requests": 500}))
        figures: dict[str, list[float]] = {"hub": [], "bare": []}
        for n in range(args.rounds):
            order = ("hub", "bare") if n % 2 == 0 else ("bare", "hub")
            for name in order:
                port, proc = procs[name]
                figures[name].append(await cpu_per_request(port, proc.pid, args))
    ratios = [h / b for h, b in zip(figures["hub"], figures["bare"], strict=True)]
    print(
        f"{args.clients} clients, {args.requests} requests a round, {args.rounds} rounds "
        f"(load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores); server CPU per no-op POST:"
    )
    for name, values in figures.items():
        print(f"  {name:5s} {' '.join(f'{v:7.0f}' for v in values)} us; median {statistics.median(values):.0f} us")
    ratio = statistics.median(ratios)
    print(
        f"  hub over bare, per round {' '.join(f'{r:.2f}' for r in ratios)}; median {ratio:.2f} "
        f"(target at most {TARGET}: {'met' if ratio <= TARGET else 'NOT met'})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--requests", type=int, default=6000)
    parser.add_argument("--rounds", type=int, default=3)
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
