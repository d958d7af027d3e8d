"""The C allocator's arenas for `hub-cli serve`.

glibc gives each thread that meets contention an arena of its own, up to eight per core, and a
freed block goes back to the arena it came from, where it stays: with the store actors' and the
worker pool's threads taking turns, the hub's resident memory crept up by 3 to 4 MiB a minute under
the soak while Python's own objects and SQLite's allocator held level (tracemalloc and
sqlite3_memory_used; tools/chaos/soak.py, docs/benchmarks.md, issue 28 part 4). Two arenas held it
to about 1 MiB a minute at the same load (the threads hold the GIL while they allocate Python
objects anyway; what they contend on outside it is SQLite's, which allocates little).
`MALLOC_ARENA_MAX` in the environment, when set, is the operator's choice and is left alone.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os

log = logging.getLogger("hubcli.malloc")
M_ARENA_MAX = -8  # glibc's mallopt parameter number
ARENAS = 2


def limit_arenas(arenas: int = ARENAS) -> bool:
    """Cap glibc's malloc arenas before the hub starts its threads; False when not glibc or the
    environment already decides."""
    if "MALLOC_ARENA_MAX" in os.environ:
        return False
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    libc = ctypes.CDLL(name)
    if not hasattr(libc, "mallopt") or not hasattr(libc, "gnu_get_libc_version"):
        return False
    if libc.mallopt(M_ARENA_MAX, arenas) != 1:
        log.warning("could not limit the C allocator to %d arenas", arenas)
        return False
    return True
