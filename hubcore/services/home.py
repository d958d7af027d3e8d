"""The one-request Home payload.

Every member is a real measurement or null, never a made-up zero: storage numbers are null when the
volume query fails. `storage` (the data directory's volume) and `node` are the hub's own
(`Core.datadir`); `prunable` comes from the part that measures it (`Part.home`), and reads as null
with no such part in the hub.
`agents_active` counts active agents whose token was used, or whose running session did work, within
the last 15 minutes (900 s, the same window as a live artifact's session). `first_run` is true
while no agent has ever called the hub (no agent has a `last_seen_at`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Awaitable, Callable
from typing import Any

from hubcore.caller import Caller
from hubcore.clock import iso
from hubcore.services.access import require_admin, visibility
from hubcore.services.core import Core
from hubcore.services.feed import ACTIVE_WINDOW_SECS, PageQuery, read_page
from hubcore.services.inbox import count_items, query_items
from hubcore.services.projects import unseen_counts

WAITING_ON_HOME = 5
RECENT_ON_HOME = 10
MEMO_SECS = 10.0

Settle = Callable[[], Awaitable[None]]
# The members parts provide (spec: Home), as they read when no part in the hub provides them.
PART_MEMBERS: dict[str, dict[str, int | None]] = {
    "prunable": {"sessions": None, "bytes": None},
}


class HomeService:
    def __init__(self, core: Core, settle: Settle) -> None:
        self.core = core
        self.settle = settle

    async def home(self, caller: Caller) -> dict[str, Any]:
        require_admin(caller, "the Home payload")
        await self.settle()
        active_since = self.core.now() - ACTIVE_WINDOW_SECS
        body = await self.core.store.read(lambda conn: self._read(conn, caller, active_since))
        body["node"] = self.core.datadir.node()
        body["storage"] = await self.core.datadir.volume()
        body.update({name: dict(empty) for name, empty in PART_MEMBERS.items()})
        for part in self.core.parts:
            body.update(await part.home())
        return body

    def _read(self, conn: sqlite3.Connection, caller: Caller, active_since: float) -> dict[str, Any]:
        cond, params = visibility(caller)
        projects = {
            r["id"]: r["display_name"]
            for r in conn.execute(f"SELECT p.id, p.display_name FROM projects p WHERE {cond} ORDER BY p.id", params)
        }
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
            # The web app's first-run guide shows until an agent has called the hub (issue 25 part 6).
            "first_run": conn.execute("SELECT 1 FROM agents WHERE last_seen_at IS NOT NULL LIMIT 1").fetchone() is None,
            "last_event_at": iso(newest) if newest is not None else None,
            "recent": [{**e, "project_display_name": projects.get(e["project_id"])} for e in recent],
            "unseen": [
                {"project_id": pid, "project_display_name": name, "unseen_events": unseen[pid]}
                for pid, name in projects.items()
                if unseen[pid]
            ],
        }
