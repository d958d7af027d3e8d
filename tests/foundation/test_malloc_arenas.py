"""`hub-cli serve` caps glibc's malloc arenas (hubcli/malloc.py) unless the environment decides."""

from __future__ import annotations

import asyncio
import itertools
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hubcli import malloc, serve

PROBE = "from hubcli.malloc import limit_arenas; print(limit_arenas())"


def probe(**env: str) -> str:
    clean = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}
    done = subprocess.run(
        [sys.executable, "-c", PROBE], env={**clean, **env}, capture_output=True, text=True, timeout=60, check=True
    )
    return done.stdout.strip()


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="the arena cap is glibc's mallopt")
def test_serve_caps_the_arenas_on_glibc() -> None:
    assert probe() == "True"


def test_an_operator_set_arena_count_is_left_alone() -> None:
    assert probe(MALLOC_ARENA_MAX="4") == "False"


def test_serve_caps_them_before_it_builds_the_app_and_starts_threads() -> None:
    source = Path(serve.__file__).read_text()
    assert source.index("malloc.limit_arenas()") < source.index("app = HubASGI(hub)")
    assert malloc.ARENAS == 2


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="malloc_trim is glibc's")
def test_release_hands_free_pages_back_on_glibc() -> None:
    # 128 MiB in blocks under the mmap threshold: freed into the heap
    blocks = [bytearray(64 * 1024) for _ in range(2000)]
    del blocks
    assert malloc.release() in (True, False)  # glibc answered (None is "not glibc")


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="malloc_trim is glibc's")
def test_the_server_trims_on_its_interval_until_cancelled(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[float] = []

    async def run() -> None:
        third = asyncio.Event()
        loop = asyncio.get_running_loop()

        def release() -> bool:  # runs in a worker thread, as the real one does
            calls.append(time.monotonic())
            if len(calls) == 3:
                loop.call_soon_threadsafe(third.set)
            return True

        monkeypatch.setattr(malloc, "release", release)
        task = asyncio.create_task(malloc.trim_periodically(0.01))
        await asyncio.wait_for(third.wait(), 10)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(run())
    assert len(calls) >= 3 and all(b - a >= 0.009 for a, b in itertools.pairwise(calls))
    source = Path(serve.__file__).read_text()
    assert "malloc.trim_periodically()" in source and "trimmer.cancel()" in source
