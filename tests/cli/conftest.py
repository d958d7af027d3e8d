"""Command line tests: `hub-cli` run as a real process against a live hub or a local directory."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest

from hubcore.config import HubSettings
from tests.mcp.live import LiveHub, live_hub

HUB_CLI = str(Path(sys.executable).with_name("hub-cli"))


@dataclass(frozen=True)
class Run:
    code: int
    out: str
    err: str


def cli_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The process environment with no HUB_* variable but a config file of its own (absent)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HUB_")}
    env.update({"HUB_CONFIG": str(tmp_path / "client.toml"), **extra})
    return env


async def cli(env: dict[str, str], *args: str, stdin: bytes = b"") -> Run:
    result = await anyio.run_process([HUB_CLI, *args], env=env, check=False, input=stdin)
    return Run(result.returncode, result.stdout.decode(), result.stderr.decode())


@pytest.fixture
async def live(settings: HubSettings) -> AsyncIterator[LiveHub]:
    async with live_hub(settings) as hub:
        yield hub
