"""`hub-cli serve` caps glibc's malloc arenas (hubcli/malloc.py) unless the environment decides."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
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
