"""The C allocator's arenas for `hub-cli serve`.

glibc gives each thread that meets contention an arena of its own, up to eight per core, and a
freed block goes back to the arena it came from, where it stays: with the store actors' and the
worker pool's threads taking turns, the hub's resident memory crept up by 3 to 4 MiB a minute under
the soak while Python's own objects and SQLite's allocator held level (tracemalloc and
sqlite3_memory_used; tools/chaos/soak.py, docs/benchmarks.md, issue 28 part 4). Two arenas held it
to about 1 MiB a minute at the same load (the threads hold the GIL while they allocate Python
objects anyway; what they contend on outside it is SQLite's, which allocates little).
`MALLOC_ARENA_MAX` in the environment, when set, is the operator's choice and is left alone.

What the arenas still keep is freed memory, not memory anything holds: a traced soak showed
SQLite's and Python's memory level while RssAnon rose, and `malloc_trim` gave 20 to 24 MiB of it
back. The server hands it back every `TRIM_SECS` (`trim_periodically`), so the hub's resident memory
falls back once a burst is over instead of staying at its high-water mark.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import logging
import os
from typing import Any

log = logging.getLogger("hubcli.malloc")
M_ARENA_MAX = -8  # glibc's mallopt parameter number
ARENAS = 2
TRIM_SECS = 30.0  # a trim walks the free lists: a few ms of a worker thread, twice a minute


def glibc() -> Any | None:
    """The C library when it is glibc (the only one with mallopt's arena cap and malloc_trim)."""
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    libc = ctypes.CDLL(name)
    wanted = ("mallopt", "malloc_trim", "gnu_get_libc_version")
    return libc if all(hasattr(libc, f) for f in wanted) else None


def limit_arenas(arenas: int = ARENAS) -> bool:
    """Cap glibc's malloc arenas before the hub starts its threads; False when not glibc or the
    environment already decides."""
    if "MALLOC_ARENA_MAX" in os.environ:
        return False
    libc = glibc()
    if libc is None:
        return False
    if libc.mallopt(M_ARENA_MAX, arenas) != 1:
        log.warning("could not limit the C allocator to %d arenas", arenas)
        return False
    return True


def release() -> bool | None:
    """Hand the allocator's free pages back to the system now: True when some were, None off glibc."""
    libc = glibc()
    return None if libc is None else bool(libc.malloc_trim(0))


async def trim_periodically(interval: float = TRIM_SECS) -> None:
    """`release` every `interval` seconds, in a worker thread (ctypes lets go of the GIL), until
    cancelled; returns at once off glibc."""
    if glibc() is None:
        return
    while True:
        await asyncio.sleep(interval)
        await asyncio.to_thread(release)
