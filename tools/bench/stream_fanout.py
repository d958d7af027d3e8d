"""Benchmark: the stream fan-out's own CPU, without the network.

`--streams` agent streams run the hub's stream loop (`hubhttp.api.stream.paced`, the change log,
the shared chunks and turn budget) in one process, each as a task that drops its chunks, while a
publisher appends `--rate` feed changes a second in batches of `--batch` to one project every
stream may see (the worst case of `tools/bench/streams.py`). Reported: process CPU per published
change with the streams open and with none, alternating for `--rounds` rounds; the difference is
what the open streams cost per change in the hub's own Python (the HTTP server's send of each
chunk and the kernel's copy are not in it: `tools/bench/streams.py` measures the whole).

    .venv/bin/python tools/bench/stream_fanout.py [--streams 500] [--rate 1000] [--seconds 5] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


class _Feed:
    async def visible_projects(self, caller: Any) -> set[str]:
        return {"bench"}


class _Hub:
    """What a stream's `Visible` reads of the hub: the agent sees the bench project."""

    feed = _Feed()


async def one_run(streams: int, rate: float, batch: int, seconds: float) -> tuple[float, float, float]:
    """CPU per published change (us), chunks sent a second, and megabytes sent a second."""
    from hubcore.caller import Caller
    from hubcore.services.changes import Change, Notifier
    from hubhttp.api import stream

    notifier = Notifier()
    chunks, budget = stream.Chunks(notifier.log), stream.TurnBudget(notifier.log)
    sent = [0, 0]

    async def consume(n: int) -> None:
        who = Caller.agent(f"a{n:04d}")
        visible = stream.Visible(_Hub(), who)  # type: ignore[arg-type]
        await visible.load()
        async for chunk in stream.paced(notifier.open_stream(f"agent:{n}", 0), visible, chunks, budget, who):
            sent[0] += 1
            sent[1] += len(chunk)

    tasks = [asyncio.create_task(consume(n)) for n in range(streams)]
    await asyncio.sleep(1.0)  # every stream open and waiting
    sent[:] = [0, 0]
    published = 0
    cpu, start = time.process_time(), time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        ids = range(published, published + batch)
        notifier.publish([Change("feed", "bench", f"01KB{n:022d}", "signal", "writer") for n in ids])
        published += batch
        await asyncio.sleep(max(0.0, published / rate - (time.perf_counter() - start)))
    used = time.process_time() - cpu
    notifier.close()
    await asyncio.gather(*tasks, return_exceptions=True)
    return used / published * 1e6, sent[0] / elapsed, sent[1] / elapsed / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--streams", type=int, default=500)
    parser.add_argument("--rate", type=float, default=1000.0, help="feed changes published a second")
    parser.add_argument("--batch", type=int, default=8, help="changes per publish (one store commit)")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with_streams: list[float] = []
    without: list[float] = []
    for _ in range(args.rounds):
        cpu, chunks, megabytes = asyncio.run(one_run(args.streams, args.rate, args.batch, args.seconds))
        with_streams.append(cpu)
        without.append(asyncio.run(one_run(0, args.rate, args.batch, args.seconds))[0])
        print(f"  {args.streams} streams: {cpu:.1f} us CPU per change, {chunks:.0f} chunks/s, {megabytes:.1f} MB/s")
    cost = [w - b for w, b in zip(with_streams, without, strict=True)]
    print(
        f"{args.streams} streams at {args.rate:.0f} changes/s: {statistics.median(with_streams):.1f} us CPU per change "
        f"(none open: {statistics.median(without):.1f}); the streams' own cost {statistics.median(cost):.1f} us per "
        f"change, {statistics.median(cost) / max(1, args.streams) * 1000:.0f} ns per stream per change"
    )


if __name__ == "__main__":
    main()
