"""The one-request Home payload.

Every member is a real measurement or null, never a made-up zero: storage numbers are null when the
volume query fails, and `prunable` is null until the sessions part registers a provider.
`agents_active` counts active agents whose token was used, or whose running session did work, within
the last 15 minutes (900 s, the same window as a live artifact's session).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from hubcore.caller import Caller
from hubcore.clock import iso
from hubcore.services.access import require_admin, visibility
from hubcore.services.core import Core
from hubcore.services.feed import ACTIVE_WINDOW_SECS, PageQuery, read_page
from hubcore.services.inbox import count_items, query_items
from hubcore.services.projects import unseen_counts
from hubcore.services.storage import measure_storage, node_info

WAITING_ON_HOME = 5
RECENT_ON_HOME = 10
MEMO_SECS = 10.0

Settle = Callable[[], Awaitable[None]]
# {"sessions": n, "bytes": n}, registered by the part that prunes sessions.
PrunableProvider = Callable[[], Awaitable[dict[str, int | None]]]


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
