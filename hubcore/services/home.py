"""The one-request Home payload.

Every member is a real measurement or null, never a made-up zero: storage numbers are null when the
volume query fails, and `prunable` is null until the sessions part registers a provider.
`agents_active` counts active agents whose token was used, or whose running session did work, within
the last 15 minutes (900 s, the same window as a live artifact's session).
"""

from __future__ import annotations

import os
import shutil
import socket
import sqlite3
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

from hubcore.caller import Caller
from hubcore.clock import iso
from hubcore.config import HubSettings, is_loopback
from hubcore.services.access import require_admin, visibility
from hubcore.services.core import Core
from hubcore.services.feed import ACTIVE_WINDOW_SECS, PageQuery, read_page
from hubcore.services.inbox import count_items, query_items
from hubcore.services.projects import unseen_counts

WAITING_ON_HOME = 5
RECENT_ON_HOME = 10
MEMO_SECS = 10.0

Settle = Callable[[], Awaitable[None]]
# {"sessions": n, "bytes": n}, registered by the part that prunes sessions.
PrunableProvider = Callable[[], Awaitable[dict[str, int | None]]]


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


class HomeService:
    def __init__(self, core: Core, settle: Settle) -> None:
        self.core = core
        self.settle = settle
        self.prunable_provider: PrunableProvider | None = None
        # The storage part measures the volume behind its write-counter memo; until it registers,
        # Home keeps its own plain ten-second memo.
        self.volume_provider: PrunableProvider | None = None
        self._storage: tuple[float, dict[str, int | None]] | None = None

    async def home(self, caller: Caller) -> dict[str, Any]:
        require_admin(caller, "the Home payload")
        await self.settle()
        active_since = self.core.now() - ACTIVE_WINDOW_SECS
        body = await self.core.store.read(lambda conn: self._read(conn, caller, active_since))
        body["node"] = node_info(self.core.settings)
        body["storage"] = await self.storage()
        body["prunable"] = (await self.prunable_provider() if self.prunable_provider is not None
                            else {"sessions": None, "bytes": None})
        return body

    def _read(self, conn: sqlite3.Connection, caller: Caller, active_since: float) -> dict[str, Any]:
        cond, params = visibility(caller)
        projects = {r["id"]: r["display_name"] for r in
                    conn.execute(f"SELECT p.id, p.display_name FROM projects p WHERE {cond} ORDER BY p.id", params)}
        newest = conn.execute(
            f"SELECT MAX(fs.newest_at) FROM feed_stats fs JOIN projects p ON p.id = fs.project_id WHERE {cond}",
            params,
        ).fetchone()[0]
        recent = read_page(conn, caller, None, PageQuery(limit=RECENT_ON_HOME))["events"]
        unseen = unseen_counts(conn, list(projects))
        return {
            "unread": count_items(conn, caller, "unread"),
            "waiting": count_items(conn, caller, "waiting"),
            "waiting_items": query_items(conn, caller, status="waiting", limit=WAITING_ON_HOME),
            "agents_active": conn.execute(
                """SELECT COUNT(*) FROM agents a WHERE a.status = 'active' AND (a.last_seen_at >= :since
                   OR EXISTS (SELECT 1 FROM sessions s WHERE s.owner = a.id AND s.status = 'active'
                              AND s.pruned_at IS NULL AND s.last_activity_at >= :since))""",
                {"since": active_since},
            ).fetchone()[0],
            "last_event_at": iso(newest) if newest is not None else None,
            "recent": [{**e, "project_display_name": projects.get(e["project_id"])} for e in recent],
            "unseen": [{"project_id": pid, "project_display_name": name, "unseen_events": unseen[pid]}
                       for pid, name in projects.items() if unseen[pid]],
        }

    async def storage(self) -> dict[str, int | None]:
        """Data directory size and volume capacity, memoised for ten seconds (they cost syscalls)."""
        if self.volume_provider is not None:
            return await self.volume_provider()
        now = time.monotonic()
        if self._storage is None or now - self._storage[0] >= MEMO_SECS:
            measured = await anyio.to_thread.run_sync(measure_storage, self.core.settings.data_path)
            self._storage = (now, measured)
        return dict(self._storage[1])
