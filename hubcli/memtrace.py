"""Opt-in memory tracing for `hub-cli serve`: what grows between two moments, by source line.

With `HUB_TRACEMALLOC=N` (N frames kept per allocation, 1 to 64; more frames name more and slow
the hub more) in its environment the hub starts tracemalloc before it builds the app,
and each SIGUSR2 writes to its log the allocations that grew most since the first SIGUSR2 (the
first one takes the baseline and writes the largest holders). `tools/chaos/soak.py --trace` sends
the signals at warm and at the end. Tracing slows the hub; it is for finding leaks, never on by
default.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import logging
import os
import signal
import tracemalloc
from pathlib import Path

from hubcli import malloc

log = logging.getLogger("hubcli.memtrace")
FRAMES_MAX = 64
TOP = 25  # lines written per dump


def frames() -> int:
    """The frames asked for by HUB_TRACEMALLOC; 0: tracing is off."""
    value = os.environ.get("HUB_TRACEMALLOC", "")
    return min(int(value), FRAMES_MAX) if value.isdigit() else 0


def start() -> None:
    if frames() and not tracemalloc.is_tracing():
        tracemalloc.start(frames())


class Dumper:
    """The SIGUSR2 handler's state: the baseline snapshot, taken by the first signal."""

    def __init__(self) -> None:
        self.baseline: tracemalloc.Snapshot | None = None

    def snapshot(self) -> tracemalloc.Snapshot:
        return tracemalloc.take_snapshot().filter_traces(
            (
                tracemalloc.Filter(False, tracemalloc.__file__),
                tracemalloc.Filter(False, "<frozen importlib._bootstrap>"),
            )
        )

    def dump(self) -> None:
        now = self.snapshot()
        current, peak = tracemalloc.get_traced_memory()
        log.warning(
            "tracemalloc: traced %.1f MiB (peak %.1f MiB); SQLite holds %s; the process: %s",
            current / 2**20,
            peak / 2**20,
            sqlite_memory(),
            resident(),
        )
        freed = trim()
        log.warning("malloc_trim: %s; the process now: %s", freed, resident())
        if self.baseline is None:
            self.baseline = now
            for stat in now.statistics("traceback")[:TOP]:
                log.warning("tracemalloc holds %s\n%s", stat, "\n".join(stat.traceback.format()))
            return
        for diff in now.compare_to(self.baseline, "traceback")[:TOP]:
            log.warning("tracemalloc grew %s\n%s", diff, "\n".join(diff.traceback.format()))


def sqlite_memory() -> str:
    """What SQLite's allocator holds now and at most (the library the sqlite3 module links, loaded
    once per process), outside what tracemalloc sees."""
    name = ctypes.util.find_library("sqlite3")
    if name is None:
        return "unknown"
    lib = ctypes.CDLL(name)
    lib.sqlite3_memory_used.restype = lib.sqlite3_memory_highwater.restype = ctypes.c_int64
    return f"{lib.sqlite3_memory_used() / 2**20:.1f} MiB (at most {lib.sqlite3_memory_highwater(0) / 2**20:.1f} MiB)"


def resident() -> str:
    status = Path("/proc/self/status")
    if not status.exists():
        return "unknown"
    rows = [line.partition(":") for line in status.read_text().splitlines()]
    return ", ".join(f"{k} {v.strip()}" for k, _, v in rows if k in ("VmRSS", "RssAnon", "RssFile"))


def trim() -> str:
    """Hand the C allocator's free pages back to the system (glibc's malloc_trim): what RSS drops
    by then is memory freed but kept by the allocator, not memory anything holds."""
    released = malloc.release()
    if released is None:
        return "not glibc: no malloc_trim"
    return "released memory" if released else "nothing to release"


def install(loop: asyncio.AbstractEventLoop) -> None:
    """Dump on SIGUSR2 while tracing (a no-op otherwise)."""
    if tracemalloc.is_tracing():
        loop.add_signal_handler(signal.SIGUSR2, Dumper().dump)
