"""Committed writes per second through one store actor, against plain sqlite3 on one thread.

Run from the checkout: `.venv/bin/python tools/bench/actor.py` (see --help for the options).

Actor run: `--writers` asyncio tasks each send commands through one `StoreActor` as fast as their
replies come back, `--rows` commands in all. The actor group-commits whatever is queued, each
command in its own savepoint; the batch sizes it used are recorded.

Raw run: one thread, one sqlite3 connection with the same pragmas (WAL, synchronous=NORMAL), runs
the same statements with the same parameters in transactions of exactly those batch sizes (no
savepoints, no event loop, no second thread).

Two workloads:
- `row`: a command is one INSERT of one row (an indexed table, a 120-byte text). The smallest
  possible command, so the actor's fixed cost per command weighs the most.
- `append`: a command is shaped like the hub's feed append: look up an idempotency key, read a
  counter (the ceiling check), insert the event row, upsert the counter, remember the key.

Both runs start on a fresh file; they alternate `--rounds` times and the medians are reported,
with CPU time per write (both threads of the actor run; less disturbed by a busy machine than the
wall clock) and the actor's commit latency (from `execute` called to `execute` returned).

Ceiling runs (`--ceiling`, on by default): the least any actor built this way can do, in the same
rounds. `raw-savepoints` is the raw run with each command after a transaction's first in its own
SAVEPOINT, as the actor must run them: what the savepoints alone cost. `bare-thread` is a
hand-over with nothing but the essentials: the same writer tasks each await a bare asyncio future,
whatever is queued goes to one thread as a batch, a SAVEPOINT per command after the first, one
commit, one callback resolving the futures; no mailbox bound, no statistics, no lifecycle.
`bare-inline` is the same with the batch run on the event loop's own thread (which DESIGN section 2
forbids: the loop would block on disk). What they reach is what
the store actor could reach at best.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import queue
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any

import anyio

from hubcore.store.actor import StoreActor
from hubcore.store.connection import connect

SCHEMA = """
CREATE TABLE IF NOT EXISTS item (id INTEGER PRIMARY KEY, writer INTEGER NOT NULL, seq INTEGER NOT NULL,
                                 body TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS item_writer_seq ON item (writer, seq);
CREATE TABLE IF NOT EXISTS event (id INTEGER PRIMARY KEY, project TEXT NOT NULL, actor TEXT NOT NULL,
                                  summary TEXT NOT NULL, payload TEXT NOT NULL, created_at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS event_project ON event (project, id);
CREATE TABLE IF NOT EXISTS stats (project TEXT PRIMARY KEY, events INTEGER NOT NULL, bytes INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS idem (actor TEXT NOT NULL, key TEXT NOT NULL, result TEXT NOT NULL,
                                 PRIMARY KEY (actor, key));
"""
BODY = "x" * 120
PAYLOAD = '{"text": "' + "y" * 200 + '"}'
ROW_SQL = "INSERT INTO item (writer, seq, body) VALUES (?, ?, ?)"

Statement = Callable[[sqlite3.Connection, int, int], object]


def write_row(conn: sqlite3.Connection, writer: int, seq: int) -> object:
    return conn.execute(ROW_SQL, (writer, seq, BODY)).lastrowid


def write_append(conn: sqlite3.Connection, writer: int, seq: int) -> object:
    project, actor, key = f"p{writer % 8}", f"agent{writer}", f"k{seq}"
    if conn.execute("SELECT result FROM idem WHERE actor = ? AND key = ?", (actor, key)).fetchone():
        raise AssertionError("keys are fresh in this benchmark")
    conn.execute("SELECT events FROM stats WHERE project = ?", (project,)).fetchone()
    event_id = conn.execute(
        "INSERT INTO event (project, actor, summary, payload, created_at) VALUES (?, ?, ?, ?, ?)",
        (project, actor, f"step {seq}", PAYLOAD, 1e9 + seq),
    ).lastrowid
    conn.execute(
        "INSERT INTO stats (project, events, bytes) VALUES (?, 1, ?) "
        "ON CONFLICT (project) DO UPDATE SET events = events + 1, bytes = bytes + excluded.bytes",
        (project, len(PAYLOAD)),
    )
    conn.execute("INSERT INTO idem (actor, key, result) VALUES (?, ?, ?)", (actor, key, f'{{"id": {event_id}}}'))
    return event_id


WORKLOADS: dict[str, Statement] = {"row": write_row, "append": write_append}


@dataclass
class Run:
    rate: float
    cpu_us: float
    batches: list[int] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)


def setup(conn: sqlite3.Connection) -> None:
    conn.executescript(SCHEMA)


def command(statement: Statement, writer: int, seq: int) -> Callable[[sqlite3.Connection], object]:
    return lambda conn: statement(conn, writer, seq)


async def actor_run(path: Path, statement: Statement, rows: int, writers: int) -> Run:
    batches: list[int] = []
    actor = StoreActor(path, setup=setup, name="bench", on_batch=lambda size, _secs: batches.append(size))
    latencies: list[float] = []

    async def writer(w: int) -> None:
        for seq in range(rows // writers):
            started = time.perf_counter()
            await actor.execute(command(statement, w, seq))
            latencies.append(time.perf_counter() - started)

    async with anyio.create_task_group() as tg:
        await tg.start(actor.run)
        started, cpu = time.perf_counter(), time.process_time()
        async with anyio.create_task_group() as load:
            for w in range(writers):
                load.start_soon(writer, w)
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
        await actor.aclose()
    done = len(latencies)
    return Run(done / elapsed, cpu / done * 1e6, batches, latencies)


Outcome = tuple[asyncio.Future[object], object, BaseException | None]


class BareHandOver:
    """The essentials of an actor and nothing else (see the module docstring): the ceiling."""

    def __init__(self, path: Path, *, inline: bool) -> None:
        self.conn = connect(path)
        setup(self.conn)
        self.sql = self.conn.cursor().execute
        self.loop = asyncio.get_running_loop()
        self.inline = inline
        self.queued: list[tuple[Callable[[sqlite3.Connection], object], asyncio.Future[object]]] = []
        self.busy = False
        self.batches: list[int] = []
        self.jobs: queue.SimpleQueue[list[Any] | None] = queue.SimpleQueue()
        if not inline:
            threading.Thread(target=self._thread, daemon=True).start()

    def execute(self, fn: Callable[[sqlite3.Connection], object]) -> asyncio.Future[object]:
        reply = self.loop.create_future()
        self.queued.append((fn, reply))
        if not self.busy:
            self.busy = True
            self.loop.call_soon(self._hand_over)
        return reply

    def _hand_over(self) -> None:
        batch, self.queued = self.queued, []
        self.batches.append(len(batch))
        if self.inline:
            self._answer(self._write(batch))
        else:
            self.jobs.put(batch)

    def _thread(self) -> None:
        while (batch := self.jobs.get()) is not None:
            self.loop.call_soon_threadsafe(self._answer, self._write(batch))

    def _write(self, batch: list[Any]) -> list[Outcome]:
        sql, out = self.sql, list[Outcome]()
        sql("BEGIN IMMEDIATE")
        for i, (fn, reply) in enumerate(batch):
            if i:
                sql("SAVEPOINT c")
            try:
                out.append((reply, fn(self.conn), None))
            except Exception as exc:
                if i:
                    sql("ROLLBACK TO c")
                out.append((reply, None, exc))
            if i:
                sql("RELEASE c")
        sql("COMMIT")
        return out

    def _answer(self, out: list[Outcome]) -> None:
        for reply, result, error in out:
            if not reply.done():
                reply.set_result(result) if error is None else reply.set_exception(error)
        if self.queued:
            self._hand_over()
        else:
            self.busy = False

    def close(self) -> None:
        self.jobs.put(None)


async def bare_run(path: Path, statement: Statement, rows: int, writers: int, inline: bool) -> Run:
    bare = BareHandOver(path, inline=inline)

    async def writer(w: int) -> None:
        for seq in range(rows // writers):
            await bare.execute(command(statement, w, seq))

    started, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(writer(w) for w in range(writers)))
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    bare.close()
    return Run(rows / elapsed, cpu / rows * 1e6, bare.batches)


def raw_run(path: Path, statement: Statement, batches: list[int], writers: int, *, savepoints: bool = False) -> Run:
    """Plain sqlite3 on this thread; with `savepoints`, each statement after a transaction's first
    in its own SAVEPOINT, as the actor runs them (what the savepoints alone cost)."""
    conn = connect(path)
    setup(conn)
    sql = conn.cursor().execute
    seqs = [0] * writers
    started, cpu = time.perf_counter(), time.process_time()
    n = 0
    for size in batches:
        sql("BEGIN IMMEDIATE")
        for i in range(size):
            w = n % writers
            if savepoints and i:
                sql("SAVEPOINT c")
            statement(conn, w, seqs[w])
            if savepoints and i:
                sql("RELEASE c")
            seqs[w] += 1
            n += 1
        sql("COMMIT")
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    conn.close()
    return Run(n / elapsed, cpu / n * 1e6)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def measure(workload: str, args: argparse.Namespace, tmp: Path) -> dict[str, list[Run]]:
    """Runs per kind (`actor`, `raw`, and with --ceiling `raw-savepoints`, `bare-thread`,
    `bare-inline`), alternating."""
    statement = WORKLOADS[workload]
    runs: dict[str, list[Run]] = {"actor": [], "raw": []}
    for rnd in range(args.rounds):
        run = anyio.run(actor_run, tmp / f"{workload}-actor-{rnd}.db", statement, args.rows, args.writers)
        runs["actor"].append(run)
        runs["raw"].append(raw_run(tmp / f"{workload}-raw-{rnd}.db", statement, run.batches, args.writers))
        if args.ceiling:
            runs.setdefault("raw-savepoints", []).append(
                raw_run(tmp / f"{workload}-rawsp-{rnd}.db", statement, run.batches, args.writers, savepoints=True)
            )
            for inline in (False, True):
                kind = "bare-inline" if inline else "bare-thread"
                runs.setdefault(kind, []).append(
                    asyncio.run(
                        bare_run(tmp / f"{workload}-{kind}-{rnd}.db", statement, args.rows, args.writers, inline)
                    )
                )
    return runs


def report(workload: str, runs: dict[str, list[Run]], target: float) -> None:
    actors, raws = runs["actor"], runs["raw"]
    actor_rate = statistics.median(r.rate for r in actors)
    raw_rate = statistics.median(r.rate for r in raws)
    ratio = actor_rate / raw_rate
    latencies = [x for r in actors for x in r.latencies]
    batches = [b for r in actors for b in r.batches]
    print(f"\n== workload {workload}: batch size mean {statistics.mean(batches):.1f}, max {max(batches)}")
    for i, (a, r) in enumerate(zip(actors, raws, strict=True)):
        print(f"  round {i + 1}: actor {a.rate:8,.0f}/s  raw {r.rate:8,.0f}/s  ratio {a.rate / r.rate:.2f}")
    print(f"  actor {actor_rate:,.0f} committed writes/s, raw {raw_rate:,.0f}/s (medians)")
    print(f"  ratio {ratio:.2f} (target {target:.2f}: {'met' if ratio >= target else 'NOT met'})")
    cpu_actor = statistics.median(r.cpu_us for r in actors)
    cpu_raw = statistics.median(r.cpu_us for r in raws)
    print(f"  cpu per write: actor {cpu_actor:.1f} us, raw {cpu_raw:.1f} us (ratio {cpu_raw / cpu_actor:.2f})")
    print(
        f"  commit latency under load: p50 {percentile(latencies, 0.50) * 1e3:.2f} ms, "
        f"p99 {percentile(latencies, 0.99) * 1e3:.2f} ms"
    )
    for kind in ("raw-savepoints", "bare-thread", "bare-inline"):
        if kind in runs:
            rate = statistics.median(r.rate for r in runs[kind])
            cpu = statistics.median(r.cpu_us for r in runs[kind])
            print(f"  ceiling {kind}: {rate:,.0f}/s, ratio {rate / raw_rate:.2f}, cpu per write {cpu:.1f} us")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rows", type=int, default=64_000, help="commands per run")
    parser.add_argument("--writers", type=int, default=64, help="concurrent writer tasks")
    parser.add_argument("--rounds", type=int, default=5, help="alternating actor/raw runs")
    parser.add_argument("--workload", choices=[*WORKLOADS, "all"], default="all")
    parser.add_argument("--target", type=float, default=0.80, help="the ratio the actor should reach")
    parser.add_argument(
        "--ceiling",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also run the bare hand-overs that bound what any actor can reach",
    )
    args = parser.parse_args()
    print(
        f"python {sys.version.split()[0]}, sqlite {sqlite3.sqlite_version}, anyio {version('anyio')}, "
        f"cpus {os.cpu_count()}"
    )
    print(
        f"{args.rows} commands per run, {args.writers} writers, {args.rounds} rounds, load average "
        f"{os.getloadavg()[0]:.2f} at start"
    )
    workloads = list(WORKLOADS) if args.workload == "all" else [args.workload]
    with tempfile.TemporaryDirectory(prefix="bench-actor-") as tmp:
        for workload in workloads:
            report(workload, measure(workload, args, Path(tmp)), args.target)
    print(f"\nload average {os.getloadavg()[0]:.2f} at end")


if __name__ == "__main__":
    main()
