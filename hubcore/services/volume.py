"""The data directory as the hub measures it: used, capacity and free bytes, and the node.

These belong to the hub itself, not to a part: Home's `storage` and the storage report's volume
numbers read the same whichever parts the hub has. Numbers that cost a syscall are memoised for ten
seconds behind a write counter (hub.db's commands plus every part's own store writes, `Part.writes`),
so any write renews them at once. A number that cannot be measured is null.
"""

from __future__ import annotations

import os
import shutil
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from hubcore.config import HubSettings, is_loopback

MEMO_SECS = 10.0


def node_mode(settings: HubSettings) -> str:
    """How the hub is reached: `tls`, `loopback` (this machine only) or `network` (plain HTTP)."""
    if settings.tls_cert:
        return "tls"
    host, _ = settings.host_port
    return "loopback" if is_loopback(host) else "network"


def node_info(settings: HubSettings) -> dict[str, str]:
    """The node as Home and the storage report show it: host name and how it is reached."""
    return {"host": socket.gethostname(), "mode": node_mode(settings)}


def tree_bytes(root: Path) -> int | None:
    """Bytes of every file under `root` (not following links); None when unreadable."""
    total = 0
    try:
        for dirpath, _dirs, files in os.walk(root, onerror=_raise):
            for name in files:
                try:
                    total += os.lstat(os.path.join(dirpath, name)).st_size
                except FileNotFoundError:
                    continue
    except OSError:
        return None
    return total


def _raise(err: OSError) -> None:
    raise err


def measure_storage(root: Path) -> dict[str, int | None]:
    capacity: int | None = None
    free: int | None = None
    try:
        usage = shutil.disk_usage(root)
        capacity, free = usage.total, usage.free
    except OSError:
        pass
    return {"used_bytes": tree_bytes(root), "capacity_bytes": capacity, "free_bytes": free}


class Memo:
    """Syscall readings reused for ten seconds while no write happened in between."""

    def __init__(self, writes: Callable[[], int], monotonic: Callable[[], float] = time.monotonic) -> None:
        self._writes = writes
        self._monotonic = monotonic
        self._values: dict[str, tuple[int, float, Any]] = {}

    async def get(self, key: str, measure: Callable[[], Any]) -> Any:
        stamp, now = self._writes(), self._monotonic()
        held = self._values.get(key)
        if held is not None and held[0] == stamp and now - held[1] < MEMO_SECS:
            return held[2]
        value = await anyio.to_thread.run_sync(measure)
        self._values[key] = (stamp, now, value)
        return value


class DataDir:
    """The hub's data directory: its volume numbers and the node it is served from."""

    def __init__(self, settings: HubSettings, writes: Callable[[], int]) -> None:
        self.settings = settings
        self.memo = Memo(writes)

    async def volume(self) -> dict[str, int | None]:
        """Data directory size, capacity and free space (memoised behind the write counter)."""
        data = self.settings.data_path
        return dict(await self.memo.get("volume", lambda: measure_storage(data)))

    def node(self) -> dict[str, str]:
        return node_info(self.settings)
