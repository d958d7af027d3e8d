"""Reading feeds: pages by exclusive cursors, the human's seen cursor, agents' durable cursors, stats.

Page rules (spec, Pagination): `since` walks forward, `before` back; with `since` and no `before`
the page is oldest first, otherwise newest first. `next_since` is the newest id on the page (an
empty forward page returns the `since` given; a backward page has none); `next_before` is the
oldest id on the page.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import Field

from hubcore.caller import HUMAN, Caller
from hubcore.services import events as ev
from hubcore.services import ids
from hubcore.services.access import readable_project, require_admin, visibility, visible_project_ids
from hubcore.services.core import Core
from hubcore.services.cursors import advance_cursor, get_cursor
from hubcore.services.fields import Cursor, EventId, Kinds, Limit, ProjectId, SessionId
from hubcore.services.requests import Request

FEED_CURSOR = "feed"
ACTIVE_WINDOW_SECS = 900.0
NOT_AGENTS = (HUMAN, ev.HUB_ACTOR, "public")

Settle = Callable[[], Awaitable[None]]
# The feed's own members of `GET /projects/:id/stats`; the rest are the parts' (`Part.stats_members`),
# and a member of a part this hub lacks reads as null.
STATS_MEMBERS = ("events", "agents_active", "threads", "agents_written", "disk_bytes")


class FeedPage(Request):
    """A page of feed events (`GET /feed`); `since` reads forward (oldest first), `before` back."""

    since: Annotated[Cursor | None, Field(description="exclusive cursor: events after this id, oldest first")] = None
    before: Annotated[Cursor | None, Field(description="exclusive cursor: events before this id, newest first")] = None
    kind: Kinds = ()
    session_id: Annotated[SessionId | None, Field(description="only this session's events")] = None
    limit: Limit = 50


class FeedRead(FeedPage):
    """One project's feed: `feed_read`, `GET /projects/:id/feed`."""

    project_id: ProjectId


class FeedSeen(Request):
    """`POST /projects/:id/feed/seen`: move the human's cursor to this event (absent: the newest)."""

    project_id: ProjectId
    event_id: Annotated[
        EventId | None, Field(description="an event of this project; one that is not leaves the cursor where it is")
    ] = None


@dataclass(frozen=True)
class PageQuery:
    """A checked page request."""

    since: str | None = None
    before: str | None = None
    kinds: tuple[str, ...] = ()
    session_id: str | None = None
    limit: int = 50
    forward: bool = False

    @classmethod
    def of(cls, req: FeedPage, *, forward: bool | None = None) -> PageQuery:
        ahead = forward if forward is not None else (req.since is not None and req.before is None)
        return cls(req.since, req.before, req.kind, req.session_id, req.limit, ahead)


def read_page(conn: sqlite3.Connection, caller: Caller, project_id: str | None, q: PageQuery) -> dict[str, Any]:
    """One page of a project's feed, or of every visible project's when `project_id` is None."""
    conds: list[str] = []
    params: dict[str, Any] = {"limit": q.limit}
    if project_id is not None:
        conds.append("e.project_id = :project")
        params["project"] = project_id
    elif not caller.is_admin:
        # Unary + keeps the planner on the id order: a page stops after `limit` rows.
        visible = visible_project_ids(conn, caller)
        names = [f":v{n}" for n in range(len(visible))]
        conds.append(f"+e.project_id IN ({', '.join(names) or 'NULL'})")
        params.update({f"v{n}": pid for n, pid in enumerate(visible)})
    if q.since:
        conds.append("e.id > :since")
        params["since"] = q.since
    if q.before:
        conds.append("e.id < :before")
        params["before"] = q.before
    if q.kinds:
        conds.append(f"e.kind IN ({', '.join(f':k{n}' for n in range(len(q.kinds)))})")
        params.update({f"k{n}": k for n, k in enumerate(q.kinds)})
    if q.session_id:
        conds.append("e.session_id = :session")
        params["session"] = q.session_id
    where = " AND ".join(conds) or "1"
    order = "ASC" if q.forward else "DESC"
    rows = conn.execute(
        f"SELECT {ev.EVENT_COLUMNS} FROM events e WHERE {where} ORDER BY e.id {order} LIMIT :limit", params
    ).fetchall()
    events = [ev.render_event(r) for r in rows]
    page_ids = [e["id"] for e in events]
    newest = max(page_ids, default=None)
    return {
        "events": events,
        "next_since": None if q.before else (newest or q.since),
        "next_before": min(page_ids, default=None),
    }


def last_seen(conn: sqlite3.Connection, project_id: str) -> str | None:
    row = conn.execute("SELECT last_seen_event FROM projects WHERE id = ?", (project_id,)).fetchone()
    return row[0] if row else None


def move_last_seen(conn: sqlite3.Connection, project_id: str, current: str | None, target: str) -> None:
    """Move the human's cursor forward from `current` to `target` and keep the project's unseen
    count (`feed_stats.unseen`) true in the same command."""
    conn.execute("UPDATE projects SET last_seen_event = ? WHERE id = ?", (target, project_id))
    row = conn.execute("SELECT newest_id, unseen FROM feed_stats WHERE project_id = ?", (project_id,)).fetchone()
    if row is None:
        return  # no event was ever appended: nothing to count
    newest, unseen = row
    stays = 0 if newest is None or newest <= target else _stays_unseen(conn, project_id, current, target, unseen)
    conn.execute("UPDATE feed_stats SET unseen = ? WHERE project_id = ?", (stays, project_id))


COUNT_FIRST = 256  # the first bound of the alternating counts below; each round takes four times more


def _stays_unseen(conn: sqlite3.Connection, project_id: str, current: str | None, target: str, unseen: int) -> int:
    """The events that stay above the cursor once it moves to `target`: those above `target`, or
    the old count less those the move passed over (with no cursor before, every event was unseen).

    Either range may be the long one (a step forward passes few, a jump to near the newest leaves
    few), so both are walked in turn under a bound that grows until one of them ends under it,
    each resuming where it stopped: a move costs a few times the shorter range, never the backlog
    behind the longer one.
    """
    above, passed = _Range(conn, project_id, target, None), _Range(conn, project_id, current or "", target)
    bound = COUNT_FIRST
    while True:
        if above.ends_under(bound):
            return above.counted
        if passed.ends_under(bound):
            return unseen - passed.counted
        bound *= 4


class _Range:
    """A project's events with ids in (low, high], walked along the (project_id, id) index."""

    def __init__(self, conn: sqlite3.Connection, project_id: str, low: str, high: str | None) -> None:
        self.conn = conn
        self.params = {"project": project_id, "after": low, "high": high}
        self.where = "e.project_id = :project AND e.id > :after" + ("" if high is None else " AND e.id <= :high")
        self.counted = 0

    def ends_under(self, bound: int) -> bool:
        """Walk on until `bound` events are counted in all; True (and the exact count) when the
        range ends first. Stepping over rows with OFFSET costs what counting them does, and
        leaves the id to resume from."""
        skip = bound - self.counted - 1
        row = self.conn.execute(
            f"SELECT e.id FROM events e WHERE {self.where} ORDER BY e.id LIMIT 1 OFFSET :skip",
            {**self.params, "skip": skip},
        ).fetchone()
        if row is not None:
            self.counted, self.params["after"] = bound, row[0]
            return False
        rest = self.conn.execute(f"SELECT COUNT(*) FROM events e WHERE {self.where}", self.params).fetchone()
        self.counted += int(rest[0])
        return True


class FeedService:
    def __init__(self, core: Core, settle: Settle) -> None:
        self.core = core
        self.settle = settle

    async def project_feed(self, caller: Caller, req: FeedRead) -> dict[str, Any]:
        """`GET /projects/:id/feed`: a page plus the human's `last_seen` cursor."""
        q, project_id = PageQuery.of(req), req.project_id
        await self.settle()

        def read(conn: sqlite3.Connection) -> dict[str, Any]:
            readable_project(conn, caller, project_id)
            return {**read_page(conn, caller, project_id, q), "last_seen": last_seen(conn, project_id)}

        return await self.core.store.read(read)

    async def global_feed(self, caller: Caller, req: FeedPage) -> dict[str, Any]:
        """`GET /feed`: a page over every project the caller can see."""
        q = PageQuery.of(req)
        await self.settle()
        return await self.core.store.read(lambda conn: read_page(conn, caller, None, q))

    async def feed_read(self, caller: Caller, req: FeedRead) -> dict[str, Any]:
        """MCP `feed_read`, stateful per caller and project.

        With no `since` it reads forward from the caller's durable cursor (keyed on actor) and
        advances the cursor to `next_since`; an explicit `since` is honoured and advances it too
        (never backwards); a backward read (`before`) returns no `next_since` and moves nothing.
        """
        q, project_id = PageQuery.of(req, forward=req.before is None), req.project_id
        actor = caller.actor
        await self.settle()

        def read(conn: sqlite3.Connection) -> dict[str, Any]:
            readable_project(conn, caller, project_id)
            query = q
            if q.forward and q.since is None:
                cursor = get_cursor(conn, actor, FEED_CURSOR, project_id)
                query = PageQuery(cursor, None, q.kinds, q.session_id, q.limit, True)
            return read_page(conn, caller, project_id, query)

        page = await self.core.store.read(read)
        if q.forward and page["events"]:
            now, newest = self.core.now(), page["next_since"]
            await self.core.store.execute(
                lambda conn: advance_cursor(conn, actor, FEED_CURSOR, newest, now, project_id)
            )
        return page

    async def seen(self, caller: Caller, req: FeedSeen) -> dict[str, Any]:
        """Move the human's cursor forward to `event_id` (default: the project's newest event).

        An id that is not an event of this project, or is not past the cursor, leaves it where
        it is and reports `advanced` false.
        """
        require_admin(caller, "moving the human's feed cursor")
        project_id, event_id = req.project_id, req.event_id

        def write(conn: sqlite3.Connection) -> dict[str, Any]:
            readable_project(conn, caller, project_id)
            current = last_seen(conn, project_id)
            target = event_id
            if target is None:
                row = conn.execute("SELECT newest_id FROM feed_stats WHERE project_id = ?", (project_id,)).fetchone()
                target = row[0] if row else None
            elif (
                not ids.is_event_id(target)
                or not conn.execute(
                    "SELECT 1 FROM events WHERE id = ? AND project_id = ?", (target, project_id)
                ).fetchone()
            ):
                target = None
            advanced = target is not None and (current is None or target > current)
            if advanced:
                move_last_seen(conn, project_id, current, str(target))
            return {"project_id": project_id, "last_seen": target if advanced else current, "advanced": advanced}

        return await self.core.store.execute(write)

    async def stats(self, caller: Caller, project_id: str) -> dict[str, Any]:
        """`GET /projects/:id/stats`. Counts the feed does not own come from the parts that hold
        them (`Part.project_stats`); one no part provides is null, never a made-up zero."""
        require_admin(caller, "project stats")
        since = self.core.now() - ACTIVE_WINDOW_SECS

        def read(conn: sqlite3.Connection) -> dict[str, Any]:
            readable_project(conn, caller, project_id)
            feed = conn.execute("SELECT events, bytes FROM feed_stats WHERE project_id = ?", (project_id,)).fetchone()
            actors = conn.execute(
                f"""SELECT COUNT(*), COALESCE(SUM(last_at >= ?), 0) FROM feed_actors
                    WHERE project_id = ? AND actor NOT IN ({", ".join("?" * len(NOT_AGENTS))})""",
                (since, project_id, *NOT_AGENTS),
            ).fetchone()
            threads = conn.execute(
                """SELECT COUNT(*) FROM events
                   WHERE project_id = ? AND kind IN ('question', 'approval', 'enrol_request')""",
                (project_id,),
            ).fetchone()[0]
            return {
                "events": feed[0] if feed else 0,
                "agents_active": int(actors[1]),
                "threads": threads,
                "agents_written": actors[0],
                "disk_bytes": feed[1] if feed else 0,
            }

        own = await self.core.store.read(read)
        stats: dict[str, Any] = {name: own.get(name) for name in STATS_MEMBERS}
        stats.update({name: None for kind in self.core.part_types for name in kind.stats_members})
        for part in self.core.parts:
            for name, value in (await part.project_stats(project_id)).items():
                if name == "disk_bytes":
                    stats[name] = None if value is None or stats[name] is None else stats[name] + value
                else:
                    stats[name] = value
        return stats

    async def visible_projects(self, caller: Caller) -> set[str] | None:
        """The project ids the caller can see; None for the admin (everything)."""
        if caller.is_admin:
            return None

        def read(conn: sqlite3.Connection) -> set[str]:
            cond, params = visibility(caller)
            return {r[0] for r in conn.execute(f"SELECT p.id FROM projects p WHERE {cond}", params)}

        return await self.core.store.read(read)
