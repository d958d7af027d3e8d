"""Event-loop CPU per command of `StoreActor.execute` for a trivial command: the store actor's
hand-over (caller -> writer thread -> caller) with next to no SQLite work in it.

Run from the checkout: `.venv/bin/python -m tools.bench.actor_handover [--stores 1,200]`.

On asyncio (the backend the hub serves on), `--writers` tasks send `--commands` commands in all,
the n-th to store n mod `--stores`, each an empty write (`SELECT 1` in the batch's transaction).
With one store the commands group-commit; with 200 stores the writers' commands are mostly
batches of their own, as puts to different brains are (issue 27 part 5, docs/benchmarks.md "Fifth
session: the store actor's hand-over"). Reported per command, median of `--rounds`: the event
loop thread's CPU (`time.thread_time`), the whole process's CPU (every thread), and the mean
batch size. `--threads N`: the stores share N writer threads (as the brain files' pool does),
where by default each has its own.

Then (`--reads`, 0 to skip) `read_then`'s hop on one store: `--readers` tasks make that many
point reads in all (`SELECT 1` on a read-only connection, then a no-op on the same thread), the
path of a brain get's and a put's session row; event-loop and process CPU per read.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import sqlite3
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

from hubcore.store.actor import StoreActor
from hubcore.store.writer import WriterThread
from tools.bench.brain_writes import one_round, process_cpu


def trivial(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT 1").fetchone()[0])


async def measure(stores: int, args: argparse.Namespace) -> tuple[float, float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        actors = [StoreActor(Path(tmp) / f"{i}.db", readers=1, mailbox_size=256) for i in range(stores)]
        shared = [WriterThread(f"store shared {n}") for n in range(args.threads)]
        for i, actor in enumerate(actors):
            if shared and hasattr(actor, "share_thread"):  # an older tree has no shared threads
                actor.share_thread(shared[i % len(shared)])
        async with anyio.create_task_group() as tg:
            for actor in actors:
                await tg.start(actor.run)
            await one_round(actors, max(stores, args.writers), args.writers, trivial)  # warm: every file written
            before = sum(a.statistics().batches for a in actors)
            rounds = [await one_round(actors, args.commands, args.writers, trivial) for _ in range(args.rounds)]
            batches = sum(a.statistics().batches for a in actors) - before
            for actor in actors:
                await actor.aclose()
        for thread in shared:
            thread.stop()
    mean_batch = args.commands * args.rounds / batches if batches else 0.0
    return statistics.median(r[1] for r in rounds), statistics.median(r[0] for r in rounds), mean_batch  # loop, process


async def measure_reads(args: argparse.Namespace) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        actor = StoreActor(Path(tmp) / "reads.db")
        async with anyio.create_task_group() as tg:
            await tg.start(actor.run)
            await actor.execute(trivial)

            async def reader(first: int) -> None:
                for _ in range(first, args.reads, args.readers):
                    await actor.read_then(trivial, int)

            results = []
            for _ in range(args.rounds):
                loop_cpu, cpu = time.thread_time(), process_cpu()
                async with anyio.create_task_group() as readers:
                    for k in range(args.readers):
                        readers.start_soon(reader, k)
                results.append(((time.thread_time() - loop_cpu) / args.reads, (process_cpu() - cpu) / args.reads))
            await actor.aclose()
    return statistics.median(r[0] for r in results), statistics.median(r[1] for r in results)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stores", default="1,200", help="comma-separated store counts")
    parser.add_argument("--writers", type=int, default=200, help="tasks sending at once")
    parser.add_argument("--commands", type=int, default=20000, help="commands per round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=0, help="writer threads the stores share (0: one each)")
    parser.add_argument("--reads", type=int, default=5000, help="read_then calls a round (0: skip)")
    parser.add_argument("--readers", type=int, default=16, help="tasks reading at once")
    args = parser.parse_args()
    load = Path("/proc/loadavg").read_text().split()[0]
    sharing = f"{args.threads} shared writer threads" if args.threads else "a writer thread per store"
    print(f"load {load}; {args.writers} writers, {args.commands} commands a round, {sharing}")
    for stores in (int(s) for s in args.stores.split(",")):
        loop_us, cpu_us, mean_batch = asyncio.run(measure(stores, args))
        print(
            f"stores {stores:>4}: event loop {loop_us * 1e6:6.1f} us/command, process {cpu_us * 1e6:6.1f} us, "
            f"mean batch {mean_batch:5.1f}"
        )
    if args.reads:
        loop_us, cpu_us = asyncio.run(measure_reads(args))
        print(
            f"read_then, {args.readers} readers: event loop {loop_us * 1e6:6.1f} us/read, "
            f"process {cpu_us * 1e6:6.1f} us"
        )


if __name__ == "__main__":
    main()
