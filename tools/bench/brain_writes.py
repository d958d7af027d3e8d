"""CPU per committed command when each command goes to a different store file (one actor each, as
session brains are written) against the same commands through one actor (as hub.db's are).

Run from the checkout: `.venv/bin/python -m tools.bench.brain_writes [--files 1,20,200]`.

`--writers` asyncio tasks send `--commands` commands, the n-th to actor n mod `--files`; a command
appends one replay row (the write a recorded tool call makes in its session's brain, and the shape
of a small `brain_put`). With one file the actor group-commits whatever is queued; with many files
each command is mostly a batch of its own: its own commit, its own hand-over to the file's writer
thread and back. Reported per command: the process's CPU (every thread) and the event loop
thread's share, median of `--rounds`. This is the cost the brain paths pay where `signal_append`
shares a batch (issue 27 part 5, docs/benchmarks.md "Third session: brain reads and writes").

Then (`--put-sessions`, 0 to skip) the same through the service, no HTTP: a hub in this process
(a fresh data directory) with that many sessions of one agent, 4 entries of 2 KiB each; a round
writes one entry of every session at once (`BrainsService.write_entry`) and waits until the search
index has followed (`SearchIndex.settled`). Reported: CPU per put, the index's upkeep included.

Then (`--statements`, 0 to skip) what a put's own SQL costs on one connection, no actor: that many
committed puts to a 4-entry brain through `brain.put` (the change counter's bump, the seq, the
tombstone's delete) against the same upsert with none of the counter's bookkeeping.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
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
from hubcore.services.agents import AgentCreate
from hubcore.services.brains import BrainPut
from hubcore.services.projects import ProjectCreate
from hubcore.services.requests import parse
from hubcore.services.sessions import SessionStart
from hubcore.store import brain
from hubcore.store.actor import StoreActor
from hubcore.store.connection import connect
from hubhttp.asgi import HubASGI
from tools.bench.feed import ADMIN_TOKEN, lifespan

ROW = [(1.0, "brain_get", '{"path": "/kv/k0"}', "ok")]
AGENT = Caller.agent("bench")
KEYS = 4


def process_cpu() -> float:
    times = os.times()
    return times.user + times.system


def record_row(conn: sqlite3.Connection) -> None:
    brain.record_calls(conn, ROW)


async def one_round(
    actors: list[StoreActor], commands: int, writers: int, command: Callable[[sqlite3.Connection], Any] = record_row
) -> tuple[float, float]:
    """(process CPU, event loop thread CPU) per `command` sent, in seconds."""

    async def writer(first: int) -> None:
        for n in range(first, commands, writers):
            await actors[n % len(actors)].execute(command)

    cpu, loop_cpu = process_cpu(), time.thread_time()
    async with anyio.create_task_group() as tg:
        for k in range(writers):
            tg.start_soon(writer, k)
    return (process_cpu() - cpu) / commands, (time.thread_time() - loop_cpu) / commands


async def measure(files: int, args: argparse.Namespace) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        actors = [
            StoreActor(Path(tmp) / f"{i}.db", setup=brain.setup, readers=2, mailbox_size=256, name=f"brain {i}")
            for i in range(files)
        ]
        async with anyio.create_task_group() as tg:
            for actor in actors:
                await tg.start(actor.run)
            rounds = [await one_round(actors, args.commands, args.writers) for _ in range(args.rounds)]
            for actor in actors:
                await actor.aclose()
    return statistics.median(r[0] for r in rounds), statistics.median(r[1] for r in rounds)


async def put_all(hub: Hub, ids: list[str], key: int, text: str) -> None:
    async def put(sid: str) -> None:
        body = {"path": f"/kv/k{key}", "content": text, "store": "session", "session_id": sid}
        await hub.brains.write_entry(AGENT, parse(BrainPut, body))

    async with anyio.create_task_group() as tg:
        for sid in ids:
            tg.start_soon(put, sid)
    await hub.search_index.settled()


@asynccontextmanager
async def hub_with_sessions(sessions: int) -> AsyncIterator[tuple[Hub, list[str]]]:
    """A hub in process on a fresh data directory, with `sessions` running sessions of one agent."""
    with tempfile.TemporaryDirectory() as tmp:
        settings = HubSettings(data_dir=str(Path(tmp) / "data"), admin_token=ADMIN_TOKEN, min_free_bytes=0)
        app = HubASGI(settings)
        async with lifespan(app):
            hub = app.hub
            await hub.projects.create(Caller.admin(), parse(ProjectCreate, {"id": "bench"}))
            await hub.agents.create(Caller.admin(), parse(AgentCreate, {"id": "bench"}))
            start = parse(SessionStart, {"project_id": "bench", "name": "s"})
            ids = [
                str((await hub.sessions.start(AGENT, start.model_copy(update={"name": f"s{i}"})))["session_id"])
                for i in range(sessions)
            ]
            yield hub, ids


async def measure_puts(sessions: int, rounds: int) -> tuple[float, float]:
    """(process CPU, event loop thread CPU) per service-level put, the index's upkeep included."""
    async with hub_with_sessions(sessions) as (hub, ids):
        for key in range(KEYS):
            await put_all(hub, ids, key, f"seed{key} " + "word " * 400)
        results = []
        for n in range(rounds):
            cpu, loop_cpu = process_cpu(), time.thread_time()
            await put_all(hub, ids, n % KEYS, f"round{n} " + "word " * 400)
            results.append(((process_cpu() - cpu) / sessions, (time.thread_time() - loop_cpu) / sessions))
    return statistics.median(r[0] for r in results), statistics.median(r[1] for r in results)


def upsert_only(conn: sqlite3.Connection, path: str, value: bytes) -> None:
    """A put without the change counter (as before brain schema 2): the entry's row alone."""
    conn.execute(
        """INSERT INTO entries (path, value, version, written_at, written_by) VALUES (?, ?, 'v', 1.0, 'a')
           ON CONFLICT (path) DO UPDATE SET value = excluded.value, version = excluded.version,
           written_at = excluded.written_at, written_by = excluded.written_by""",
        (path, value),
    )


def counted(conn: sqlite3.Connection, path: str, value: bytes) -> None:
    brain.put(conn, path, value, version="v", now=1.0, actor="a")


def measure_statements(puts: int) -> dict[str, float]:
    """CPU per committed put (seconds), with and without the counter, alternated three times."""
    value = b"word " * 400
    found: dict[str, list[float]] = {"brain.put": [], "upsert alone": []}
    with tempfile.TemporaryDirectory() as tmp:
        conn = connect(Path(tmp) / "b.db")
        try:
            brain.setup(conn)
            for _ in range(3):
                for name, put in (("brain.put", counted), ("upsert alone", upsert_only)):
                    cpu = time.process_time()
                    for n in range(puts):
                        conn.execute("BEGIN IMMEDIATE")
                        put(conn, f"/kv/k{n % KEYS}", value)
                        conn.execute("COMMIT")
                    found[name].append((time.process_time() - cpu) / puts)
        finally:
            conn.close()
    return {name: statistics.median(runs) for name, runs in found.items()}


async def main_async(args: argparse.Namespace) -> None:
    print(
        f"{args.writers} writers, {args.commands} commands a round, {args.rounds} rounds "
        f"(load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores):"
    )
    for files in (int(f) for f in args.files.split(",")):
        total, loop = await measure(files, args)
        print(f"  {files:4d} files: {total * 1e6:6.0f} us CPU per command, event loop thread {loop * 1e6:5.0f} us")
    if args.put_sessions:
        total, loop = await measure_puts(args.put_sessions, args.rounds)
        print(
            f"  brain puts through the service, {args.put_sessions} sessions at once, the index following: "
            f"{total * 1e6:.0f} us CPU per put, event loop thread {loop * 1e6:.0f} us"
        )
    if args.statements:
        for name, cpu in measure_statements(args.statements).items():
            print(f"  {name} on one connection, {KEYS}-entry brain: {cpu * 1e6:.1f} us CPU per committed put")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--files", default="1,20,200", help="comma-separated numbers of store files")
    parser.add_argument("--commands", type=int, default=6000, help="commands per round")
    parser.add_argument("--writers", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--put-sessions", type=int, default=200, help="sessions written at once by the service (0: skip)"
    )
    parser.add_argument("--statements", type=int, default=3000, help="puts timed on one connection (0: skip)")
    anyio.run(main_async, parser.parse_args())


if __name__ == "__main__":
    main()
