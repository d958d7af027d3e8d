"""Profile of the served path: where the hub's CPU goes for a no-op POST, `signal_append`,
`brain_get` and `brain_put` (issue 27, part 5).

Starts the hub like `tools/bench/brains.py` does (its own process, Hypercorn, the no-op route
beside it), prepares an agent with `--sessions` sessions, then for each kind drives `--clients`
keep-alive connections for `--seconds` while py-spy samples the hub process (every thread, idle
frames dropped). For each kind it prints the calls made, the server CPU per call, and the share of
samples by where the time is spent: the groups below (first match, innermost frame outward), then
the top functions by inclusive share. Before the samples, it splits the server CPU per call by
thread (from /proc, every thread's utime + stime, named by `py-spy dump`): the event loop's
thread, the worker threads of reads, hub.db's writer and the brain files' writers. py-spy samples
with `--gil`, so it sees where Python holds the GIL; the thread split also counts what SQLite
does with the GIL released.

    .venv/bin/python -m tools.bench.profile_calls [--sessions 20] [--clients 8] [--seconds 6]

py-spy comes from PyPI (`py-spy`, a dev dependency); it needs to be allowed to read the hub
process (same user, ptrace permitted).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if not __package__:  # run as `python tools/bench/<name>.py`: tools/bench/__init__.py says why
    del sys.path[0]
    if importlib.util.find_spec("tools") is None:
        sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tools.bench.brains import cpu_seconds, prepare, settle_index, worker
from tools.bench.mcp_wire import free_port, hub_process

KINDS = ("noop_post", "signal_append", "brain_get", "brain_put")
# Where a sample's time goes, by the innermost frame that matches (file path fragments).
GROUPS = (
    ("sqlite (store actors)", ("sqlite3", "hubcore/store", "hubcore/actor")),
    ("brains service", ("hubcore/services/brains", "hubcore/services/storage", "hubcore/services/calllog")),
    ("sessions service", ("hubcore/services/sessions",)),
    ("posts/feed services", ("hubcore/services/posts", "hubcore/services/events", "hubcore/services/feed")),
    ("attention (trailer)", ("hubcore/services/attention", "hubmcp/trailer")),
    ("request parsing (pydantic)", ("pydantic", "hubcore/services/requests", "hubcore/services/fields")),
    ("hubmcp tools", ("hubmcp/tools",)),
    ("hubmcp server/framing", ("hubmcp/",)),
    ("mcp SDK", ("/mcp/", "mcp_types", "/anyio/", "jsonschema")),
    ("hub HTTP gate/routing", ("hubhttp/",)),
    ("quart/werkzeug", ("/quart/", "/werkzeug/", "/flask/")),
    ("hypercorn/h11", ("/hypercorn/", "/h11/", "/h2/", "/wsproto/")),
    ("json (orjson/json)", ("orjson", "/json/")),
    ("asyncio/event loop", ("asyncio/", "selectors.py", "/contextvars")),
)


Stat = tuple[float, int]
"""A thread's CPU seconds so far and the times it was switched onto a CPU (`schedstat`)."""


def thread_cpu(pid: int) -> dict[int, Stat]:
    """Each live thread of `pid`: its CPU seconds and its switches onto a CPU so far, from
    `/proc/PID/task/TID/schedstat` (nanoseconds on CPU, time waiting, timeslices run): exact where
    `stat`'s utime + stime are in clock ticks, and the switches show GIL hand-overs."""
    out: dict[int, Stat] = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            on_cpu, _waited, slices = (task / "schedstat").read_text().split()[:3]
        except (OSError, ValueError):  # the thread ended meanwhile
            continue
        out[int(task.name)] = (int(on_cpu) / 1e9, int(slices))
    return out


def thread_names(spy: str, pid: int) -> dict[int, str]:
    """Python's name of each thread of `pid`, by native thread id (`py-spy dump`)."""
    dump = subprocess.run([spy, "dump", "--pid", str(pid)], capture_output=True, text=True, check=False).stdout
    return {int(m.group(1)): m.group(2) for m in re.finditer(r'Thread (\d+) \([^)]*\): "([^"]*)"', dump)}


def thread_group(name: str | None) -> str:
    if name is None:
        return "other threads"
    if name.startswith("store brain "):
        return "brain writer threads"
    if name.startswith(("AnyIO worker", "asyncio")):
        return "worker threads (reads)"
    if name == "MainThread":
        return "event loop thread"
    return name


def by_thread(before: dict[int, Stat], after: dict[int, Stat], names: dict[int, str]) -> dict[str, list[float]]:
    """CPU seconds and switches per thread group over the window; a thread born in the window
    counts from zero, one that ended in it is missing (its row says so)."""
    groups: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0])
    for tid, (cpu, slices) in after.items():
        was_cpu, was_slices = before.get(tid, (0.0, 0))
        group = groups[thread_group(names.get(tid))]
        group[0] += cpu - was_cpu
        group[1] += slices - was_slices
    return groups


def frame_file(frame: str) -> str:
    return frame.rsplit("(", 1)[-1] if "(" in frame else frame


def group_of(stack: list[str]) -> str:
    for frame in reversed(stack):
        where = frame_file(frame)
        for name, marks in GROUPS:
            if any(m in where for m in marks):
                return name
    return "other"


def summarise(raw: Path) -> tuple[int, collections.Counter[str], collections.Counter[str]]:
    groups: collections.Counter[str] = collections.Counter()
    inclusive: collections.Counter[str] = collections.Counter()
    total = 0
    for line in raw.read_text().splitlines():
        stack_text, _, count_text = line.rpartition(" ")
        if not stack_text or not count_text.isdigit():  # py-spy stopped mid-line: a line cut short
            continue
        count = int(count_text)
        stack = [f for f in stack_text.split(";") if not f.startswith(("process ", "thread "))]
        total += count
        groups[group_of(stack)] += count
        for frame in set(stack):
            inclusive[frame] += count
    return total, groups, inclusive


async def drive(port: int, token: str, ids: list[str], kind: str, clients: int, seconds: float) -> int:
    shares = [ids[i::clients] or [ids[i % len(ids)]] for i in range(clients)]
    counts = [0]
    stop = time.perf_counter() + seconds
    await asyncio.gather(*(worker(port, token, kind, share, stop, counts) for share in shares))
    if kind != "noop_post":
        await settle_index(port, token)  # the window's own indexing is counted in it
    return counts[0]


async def profile(args: argparse.Namespace) -> None:
    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    port = free_port()
    with hub_process(port, 0) as server, tempfile.TemporaryDirectory() as scratch:
        tmp = args.keep or scratch
        Path(tmp).mkdir(parents=True, exist_ok=True)
        token, ids = await prepare(port, args.sessions)
        await settle_index(port, token)
        print(
            f"{args.clients} clients, {args.sessions} sessions, {args.seconds:.0f} s per kind, "
            f"py-spy at {args.rate}/s (load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores)"
        )
        for kind in args.kinds.split(","):
            raw = Path(tmp) / f"{kind}.txt"
            sampler = subprocess.Popen(
                [
                    spy,
                    "record",
                    "--pid",
                    str(server.pid),
                    "--format",
                    "raw",
                    "--rate",
                    str(args.rate),
                    "--duration",
                    str(int(args.seconds)),
                    "--threads",
                    "--gil",
                    "--output",
                    str(raw),
                    "--nonblocking",
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            await asyncio.sleep(0.5)  # let py-spy attach before the load starts
            cpu, threads = cpu_seconds(server.pid), thread_cpu(server.pid)
            calls = await drive(port, token, ids, kind, args.clients, args.seconds - 1)
            used, threads_after = cpu_seconds(server.pid) - cpu, thread_cpu(server.pid)
            split = by_thread(threads, threads_after, thread_names(spy, server.pid))
            sampler.wait(60)
            total, groups, inclusive = summarise(raw)
            per_call = 1e6 / max(calls, 1)
            print(f"\n{kind}: {calls} calls, server CPU {used * per_call:.0f} us per call, {total} samples")
            print("  server CPU and switches onto a CPU per call, by thread (threads ended meanwhile not counted):")
            for name, (seconds, slices) in sorted(split.items(), key=lambda kv: -kv[1][0]):
                if seconds > 0:
                    print(f"    {seconds * per_call:6.0f} us  {slices / max(calls, 1):5.1f} switches  {name}")
            for name, n in groups.most_common():
                print(f"  {n / total:6.1%}  {name}")
            print("  top functions (inclusive):")
            shown = 0
            for frame, n in inclusive.most_common():
                if any(m in frame for m in ("asyncio/", "selectors.py", "<module>", "run (", "_run (", "run_forever")):
                    continue
                print(f"    {n / total:6.1%}  {frame}")
                shown += 1
                if shown == args.top:
                    break


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=6.0)
    parser.add_argument("--rate", type=int, default=250, help="py-spy samples per second")
    parser.add_argument("--top", type=int, default=18)
    parser.add_argument("--kinds", default=",".join(KINDS), help="comma-separated kinds to profile")
    parser.add_argument("--keep", help="a directory to keep py-spy's raw stacks in (one file per kind)")
    asyncio.run(profile(parser.parse_args()))


if __name__ == "__main__":
    main()
