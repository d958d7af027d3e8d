"""CPU of the replay record per recorded call, no HTTP: what recording a tool call costs the hub
once the call itself is answered (issue 27 part 5, docs/benchmarks.md "Fourth session: the replay
record staged").

Run from the checkout: `.venv/bin/python -m tools.bench.replay_record [--sessions 200]`.

A hub in this process (a fresh data directory, the hub's background tasks running) with
`--sessions` sessions of one agent. Each round first idles `--seconds` (the background's own cost),
then notes `--rate` calls a second for `--seconds`, each in a session drawn in turn
(`BrainsService.note_call`, what the MCP tools do after every call), and lets the hub record them
as it does when serving: the write-behind task writes them on its own schedule. Reported per
call: the process's CPU (every thread) and the event loop thread's, the idle round's subtracted,
median of `--rounds`. The code under test is whatever PYTHONPATH names, so the same command
measures two trees (alternate them in the same minutes).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import time
from pathlib import Path

if not __package__:  # run as `python tools/bench/<name>.py`: tools/bench/__init__.py says why
    del sys.path[0]
    if importlib.util.find_spec("tools") is None:
        sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import anyio

from hubcore.hub import Hub
from tools.bench.brain_writes import hub_with_sessions

TICK = 0.01  # calls are noted in bursts this far apart


def cpu() -> tuple[float, float]:
    times = os.times()
    return times.user + times.system, time.thread_time()


async def idle(seconds: float) -> tuple[float, float]:
    (p0, l0) = cpu()
    await anyio.sleep(seconds)
    (p1, l1) = cpu()
    return p1 - p0, l1 - l0


async def calls(hub: Hub, ids: list[str], rate: int, seconds: float) -> tuple[float, float, int]:
    (p0, l0) = cpu()
    made, began = 0, time.monotonic()
    while (elapsed := time.monotonic() - began) < seconds:
        due = int(elapsed * rate)
        while made < due:
            hub.brains.note_call(ids[made % len(ids)], "brain_get", {"path": "/kv/k0", "session_id": "x"}, "ok")
            made += 1
        await anyio.sleep(TICK)
    (p1, l1) = cpu()
    return p1 - p0, l1 - l0, made


async def measure(args: argparse.Namespace) -> list[tuple[float, float]]:
    async with hub_with_sessions(args.sessions) as (hub, ids):
        await calls(hub, ids, args.rate, 1.0)  # warm: every brain file exists
        await hub.brains.calls.flush()
        results = []
        for _ in range(args.rounds):
            idle_cpu, idle_loop = await idle(args.seconds)
            total, loop, made = await calls(hub, ids, args.rate, args.seconds)
            results.append(((total - idle_cpu) / made, (loop - idle_loop) / made))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--rate", type=int, default=1000, help="calls noted a second")
    parser.add_argument("--seconds", type=float, default=6.0, help="seconds per phase per round")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    results = anyio.run(measure, args)
    load = os.getloadavg()[0]
    print(
        f"{args.sessions} sessions, {args.rate} calls/s noted, "
        f"{args.rounds} rounds of {args.seconds} s (load {load:.1f})"
    )
    for total, loop in results:
        print(f"  round: {total * 1e6:7.1f} us CPU per call, event loop {loop * 1e6:7.1f} us")
    total = statistics.median(r[0] for r in results)
    loop = statistics.median(r[1] for r in results)
    print(f"  median: {total * 1e6:.1f} us CPU per recorded call, event loop {loop * 1e6:.1f} us")


if __name__ == "__main__":
    main()
