"""Opt-in memory tracing for `hub-cli serve`: what grows between two moments, by source line.

With `HUB_TRACEMALLOC=1` in its environment the hub starts tracemalloc before it builds the app,
and each SIGUSR2 writes to its log the allocations that grew most since the first SIGUSR2 (the
first one takes the baseline and writes the largest holders). `tools/chaos/soak.py --trace` sends
the signals at warm and at the end. Tracing slows the hub; it is for finding leaks, never on by
default.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import tracemalloc

log = logging.getLogger("hubcli.memtrace")
FRAMES = 12  # traceback depth kept per allocation
TOP = 25  # lines written per dump


def wanted() -> bool:
    return os.environ.get("HUB_TRACEMALLOC") == "1"


def start() -> None:
    if wanted() and not tracemalloc.is_tracing():
        tracemalloc.start(FRAMES)


class Dumper:
    """The SIGUSR2 handler's state: the baseline snapshot, taken by the first signal."""

    def __init__(self) -> None:
        self.baseline: tracemalloc.Snapshot | None = None

    def snapshot(self) -> tracemalloc.Snapshot:
        return tracemalloc.take_snapshot().filter_traces((
            tracemalloc.Filter(False, tracemalloc.__file__),
            tracemalloc.Filter(False, "<frozen importlib._bootstrap>")))

    def dump(self) -> None:
        now = self.snapshot()
        current, peak = tracemalloc.get_traced_memory()
        log.warning("tracemalloc: traced %.1f MiB (peak %.1f MiB)", current / 2**20, peak / 2**20)
        if self.baseline is None:
            self.baseline = now
            for stat in now.statistics("traceback")[:TOP]:
                log.warning("tracemalloc holds %s\n%s", stat, "\n".join(stat.traceback.format(limit=FRAMES)))
            return
        for diff in now.compare_to(self.baseline, "traceback")[:TOP]:
            log.warning("tracemalloc grew %s\n%s", diff, "\n".join(diff.traceback.format(limit=FRAMES)))


def install(loop: asyncio.AbstractEventLoop) -> None:
    """Dump on SIGUSR2 while tracing (a no-op otherwise)."""
    if tracemalloc.is_tracing():
        loop.add_signal_handler(signal.SIGUSR2, Dumper().dump)
