"""The human's inbox: items with a read state (`unread`, `read`) and items waiting on the human
(`waiting`, then `resolved`).

Questions, approvals and enrolment requests wait; ideas arrive unread. The read and unread routes
move only items that have a read state; a waiting or resolved item is returned as it is with
`changed` false. Agents read the inbox through `inbox_read` (confined to their visible projects)
and block on their own items with `wait`.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal

import anyio
import orjson
from pydantic import Field, StringConstraints

from hubcore.caller import Caller
from hubcore.clock import iso
from hubcore.errors import invalid, not_found
from hubcore.services import ids
from hubcore.services.access import require_admin, visibility
from hubcore.services.changes import Change, Effects, owner_key
from hubcore.services.core import Core
from hubcore.services.cursors import advance_cursor, get_cursor
from hubcore.services.fields import (
    FLOAT_REPR_PATTERN,
    PAGE_DEFAULT,
    PAGE_MAX,
    WAIT_DEFAULT,
    ActorName,
    Cursor,
    EventId,
    Limit,
    ProjectId,
    WaitSeconds,
)
from hubcore.services.requests import Request

Status = Literal["unread", "read", "waiting", "resolved"]
WAITING_KINDS = ("question", "approval", "enrol_request")
LIST_DEFAULT, LIST_MAX = PAGE_DEFAULT, PAGE_MAX
WAIT_CURSOR = "inbox_wait"

ITEM_SELECT = """SELECT i.event_id, i.project_id, i.kind, i.actor, i.status, i.created_at, i.updated_at,
       i.expires_at, i.on_expiry, i.resolution_id, i.delivered_at, e.summary, e.payload,
       p.display_name AS project_display_name,
       r.actor AS r_actor, r.payload AS r_payload, r.created_at AS r_at, ag.last_seen_at AS actor_seen_at
  FROM inbox i
  JOIN events e ON e.id = i.event_id
  LEFT JOIN projects p ON p.id = i.project_id
  LEFT JOIN events r ON r.id = i.resolution_id
  LEFT JOIN agents ag ON ag.id = i.actor"""

Settle = Callable[[], Awaitable[None]]


def insert_item(
    conn: sqlite3.Connection,
    event: dict[str, Any],
    status: str,
    now: float,
    *,
    expires_at: float | None = None,
    on_expiry: str | None = None,
) -> None:
    conn.execute(
        """INSERT INTO inbox (event_id, project_id, kind, actor, status, created_at, updated_at,
           expires_at, on_expiry) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)""",
        (event["id"], event["project_id"], event["kind"], event["actor"], status, now, now, expires_at, on_expiry),
    )


def render_item(row: sqlite3.Row) -> dict[str, Any]:
    item: dict[str, Any] = {
        "event_id": row["event_id"],
        "project_id": row["project_id"],
        "project_display_name": row["project_display_name"],
        "kind": row["kind"],
        "actor": row["actor"],
        "summary": row["summary"],
        "payload": orjson.loads(row["payload"]),
        "status": row["status"],
        "created_at": iso(row["created_at"]),
        "updated_at": iso(row["updated_at"]),
    }
    resolution = orjson.loads(row["r_payload"]) if row["resolution_id"] else None
    if row["kind"] == "question":
        item["answer"] = (
            None
            if resolution is None
            else {
                "body": resolution.get("body"),
                "actor": row["r_actor"],
                "event_id": row["resolution_id"],
                "answered_at": iso(row["r_at"]),
            }
        )
        if resolution is not None and "value" in resolution:
            item["answer"]["value"] = resolution["value"]  # a form question's structured answer
    elif row["kind"] in WAITING_KINDS:
        item["decision"] = (
            None
            if resolution is None
            else {
                "decision": resolution.get("decision"),
                "note": resolution.get("note"),
                "actor": row["r_actor"],
                "event_id": row["resolution_id"],
                "decided_at": iso(row["r_at"]),
            }
        )
        if resolution is not None and "review" in resolution:  # a diff's review (issue 29)
            item["decision"]["review"] = resolution["review"]
    if row["kind"] in WAITING_KINDS:
        # When the resolution reached the asking agent (inbox_wait, notify_wait, inbox_read): a receipt.
        item["delivered_at"] = iso(row["delivered_at"]) if row["delivered_at"] is not None else None
        # The asker's presence: its last call (recorded at most once a minute), null for the human.
        item["actor_seen_at"] = iso(row["actor_seen_at"]) if row["actor_seen_at"] is not None else None
    if row["expires_at"] is not None:
        item["expires_at"] = iso(row["expires_at"])
        item["on_expiry"] = row["on_expiry"]
        item["expired"] = bool(resolution and resolution.get("expired"))
    return item


class InboxRead(Request):
    """`inbox_read`: the human's inbox in the caller's visible projects."""

    status: Status | None = None
    project_id: ProjectId | None = None
    actor: ActorName | None = None
    since: Annotated[Cursor | None, Field(description="items after this event id, oldest first")] = None
    limit: Limit = PAGE_DEFAULT


Order = Literal["newest", "oldest", "deadline"]
LIST_CURSOR_MAX = 80  # an order letter, an event id and a deadline's repr fit well inside
# What `encode_cursor` writes: the order's letter and an event id, and for the deadline order the
# deadline (Python's repr of a finite float) or `-`.
_EVENT_ID = ids.ID_RE.pattern.strip("^$")
CURSOR_PATTERN = f"^(?:[no]\\.{_EVENT_ID}|d\\.{_EVENT_ID}\\.(?:-|{FLOAT_REPR_PATTERN}))$"
ListCursor = Annotated[
    str,
    StringConstraints(min_length=1, max_length=LIST_CURSOR_MAX, pattern=CURSOR_PATTERN),
    Field(description="the next_cursor of the previous page, with the same order"),
]


class InboxList(Request):
    """`GET /inbox`: newest first unless `order` says otherwise; `project` is the spec's query
    name (docs/decisions.md). Pages by `cursor` (the `next_cursor` of the page before); `total`
    counts every item the filters match, whatever the page."""

    status: Status | None = None
    project: Annotated[ProjectId | None, Field(description="only this project's items")] = None
    limit: Limit = PAGE_DEFAULT
    unread_only: Annotated[bool, Field(description="only unread items (status=unread)")] = False
    settled: Annotated[bool, Field(description="only items that need nothing more: read or resolved")] = False
    order: Annotated[
        Order,
        Field(
            description="newest first (default), oldest first, or deadline: items "
            "with a deadline first by deadline, then oldest first"
        ),
    ] = "newest"
    cursor: ListCursor | None = None


class ReadAll(Request):
    """`POST /inbox/read-all`: every unread item, or one project's (null or absent: every project)."""

    project_id: ProjectId | None = None


class InboxMark(Request):
    """`POST /inbox/:event_id/read` and `/unread`: the item, named by its event id."""

    event_id: EventId


class InboxWait(Request):
    """`inbox_wait`: block until one of the caller's own questions or approvals is resolved."""

    wait_seconds: WaitSeconds = WAIT_DEFAULT
    since: Annotated[Cursor | None, Field(description="resolutions after this event id instead of your cursor")] = None
    limit: Limit = PAGE_DEFAULT


def _filters(
    caller: Caller, *, status: str | None = None, project_id: str | None = None, actor: str | None = None
) -> tuple[list[str], dict[str, Any]]:
    cond, params = visibility(caller)
    conds = [cond]
    if status:
        conds.append("i.status = :status")
        params["status"] = status
    if project_id:
        conds.append("i.project_id = :project")
        params["project"] = project_id
    if actor:
        conds.append("i.actor = :actor")
        params["actor"] = actor
    return conds, params


def query_items(
    conn: sqlite3.Connection,
    caller: Caller,
    *,
    status: str | None = None,
    project_id: str | None = None,
    actor: str | None = None,
    since: str | None = None,
    limit: int = LIST_DEFAULT,
) -> list[dict[str, Any]]:
    """Items the caller may see; newest first, or oldest first above `since`."""
    conds, params = _filters(caller, status=status, project_id=project_id, actor=actor)
    order = "DESC"
    if since:
        conds.append("i.event_id > :since")
        params["since"] = since
        order = "ASC"
    params["limit"] = limit
    sql = f"{ITEM_SELECT} WHERE {' AND '.join(conds)} ORDER BY i.event_id {order} LIMIT :limit"
    return [render_item(r) for r in conn.execute(sql, params)]


def count_items(conn: sqlite3.Connection, caller: Caller, status: str) -> int:
    conds, params = _filters(caller, status=status)
    return _count(conn, conds, params)


def _count(conn: sqlite3.Connection, conds: list[str], params: dict[str, Any]) -> int:
    sql = f"""SELECT COUNT(*) FROM inbox i LEFT JOIN projects p ON p.id = i.project_id
              WHERE {" AND ".join(conds)}"""
    return int(conn.execute(sql, params).fetchone()[0])


SETTLED = ("read", "resolved")
ORDER_SQL = {
    "newest": "i.event_id DESC",
    "oldest": "i.event_id ASC",
    "deadline": "(i.expires_at IS NULL), i.expires_at, i.event_id ASC",
}


def encode_cursor(order: str, item_row_: sqlite3.Row) -> str:
    """An opaque position after `item_row_` in `order`: the order's letter, the event id and, for
    the deadline order, the deadline (Python's repr of the stored float round-trips exactly)."""
    head = f"{order[0]}.{item_row_['event_id']}"
    if order != "deadline":
        return head
    expires = item_row_["expires_at"]
    return f"{head}.{'-' if expires is None else repr(float(expires))}"


def decode_cursor(order: str, cursor: str) -> tuple[str, float | None]:
    """(event id, deadline or None) from a cursor this order issued; anything else is refused."""
    parts = cursor.split(".", 2)
    if parts[0] != order[0] or len(parts) < 2 or not ids.ID_RE.match(parts[1]):
        raise invalid(f"cursor is not one this listing issued for order={order}", field="cursor")
    if order != "deadline":
        if len(parts) != 2:
            raise invalid(f"cursor is not one this listing issued for order={order}", field="cursor")
        return parts[1], None
    if len(parts) != 3:
        raise invalid("cursor is not one this listing issued for order=deadline", field="cursor")
    if parts[2] == "-":
        return parts[1], None
    try:
        expires = float(parts[2])
    except ValueError:
        raise invalid("cursor is not one this listing issued for order=deadline", field="cursor") from None
    if not math.isfinite(expires):
        raise invalid("cursor is not one this listing issued for order=deadline", field="cursor")
    return parts[1], expires


def _after(order: str, cursor: str, params: dict[str, Any]) -> str:
    """The condition for rows after the cursor's position in `order`."""
    event_id, expires = decode_cursor(order, cursor)
    params["c_id"] = event_id
    if order == "newest":
        return "i.event_id < :c_id"
    if order == "oldest":
        return "i.event_id > :c_id"
    if expires is None:  # past every item with a deadline
        return "(i.expires_at IS NULL AND i.event_id > :c_id)"
    params["c_exp"] = expires
    return "(i.expires_at IS NULL OR i.expires_at > :c_exp OR (i.expires_at = :c_exp AND i.event_id > :c_id))"


def list_page(conn: sqlite3.Connection, caller: Caller, req: InboxList, status: str | None) -> dict[str, Any]:
    """One page of `GET /inbox`, its true total and the cursor to the next page (null at the end)."""
    conds, params = _filters(caller, status=status, project_id=req.project)
    if req.settled:
        conds.append("i.status IN ('read', 'resolved')")
    total = _count(conn, conds, params)
    if req.cursor is not None:
        conds.append(_after(req.order, req.cursor, params))
    params["limit"] = req.limit + 1  # one more tells whether a next page exists
    sql = f"{ITEM_SELECT} WHERE {' AND '.join(conds)} ORDER BY {ORDER_SQL[req.order]} LIMIT :limit"
    rows = conn.execute(sql, params).fetchall()
    more = len(rows) > req.limit
    rows = rows[: req.limit]
    return {
        "items": [render_item(r) for r in rows],
        "total": total,
        "next_cursor": encode_cursor(req.order, rows[-1]) if more and rows else None,
    }


def item_row(conn: sqlite3.Connection, caller: Caller, event_id: str) -> sqlite3.Row | None:
    cond, params = visibility(caller)
    row: sqlite3.Row | None = conn.execute(
        f"{ITEM_SELECT} WHERE i.event_id = :id AND {cond}", {**params, "id": event_id}
    ).fetchone()
    return row


def undelivered(caller: Caller, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The caller's own resolved items among `items` whose resolution has not reached it yet."""
    if caller.kind == "public":
        return []
    return [
        i
        for i in items
        if i["actor"] == caller.actor and i.get("delivered_at", "") is None and (i.get("answer") or i.get("decision"))
    ]


def mark_delivered(conn: sqlite3.Connection, event_ids: list[str], now: float, effects: Effects) -> list[str]:
    """Record, once, that these items' resolutions reached their asking agent; returns the ids
    that were newly marked (each announced to streams, so the app's receipt updates)."""
    marked = []
    for event_id in event_ids:
        row = conn.execute(
            "UPDATE inbox SET delivered_at = ? WHERE event_id = ? AND delivered_at IS NULL "
            "AND resolution_id IS NOT NULL RETURNING project_id, actor, kind",
            (now, event_id),
        ).fetchone()
        if row is not None:
            effects.inbox(row["project_id"], event_id, owner=row["actor"], kind=row["kind"])
            marked.append(event_id)
    return marked


class InboxService:
    def __init__(self, core: Core, settle: Settle) -> None:
        self.core = core
        self.settle = settle

    async def list_items(self, caller: Caller, req: InboxList) -> dict[str, Any]:
        """`GET /inbox`: a page in `req.order` with the filters' true `total` and `next_cursor`;
        `unread_only` or `settled` contradicting an explicit status (or each other) is refused."""
        wanted = req.status
        if req.unread_only:
            if wanted not in (None, "unread"):
                raise invalid(f"unread_only contradicts status={wanted}", field="unread_only")
            wanted = "unread"
        if req.settled and wanted not in (None, *SETTLED):
            raise invalid(
                f"settled contradicts {'unread_only' if req.unread_only else f'status={wanted}'}", field="settled"
            )
        if req.cursor is not None:
            decode_cursor(req.order, req.cursor)  # refused before any read
        await self.settle()
        return await self.core.store.read(lambda conn: list_page(conn, caller, req, wanted))

    async def inbox_read(self, caller: Caller, req: InboxRead) -> dict[str, Any]:
        """MCP `inbox_read`: the human's inbox in the caller's visible projects.

        With `since` the page is the items above it, oldest first; without, the newest first.
        `next_since` is the newest id on the page, or the `since` given when the page is empty.
        """
        after = req.since
        await self.settle()
        items = await self.core.store.read(
            lambda conn: query_items(
                conn,
                caller,
                status=req.status,
                project_id=req.project_id,
                actor=req.actor,
                since=after,
                limit=req.limit,
            )
        )
        newest = max((i["event_id"] for i in items), default=after)
        await self._deliver(caller, items)
        return {"items": items, "next_since": newest}

    async def _deliver(self, caller: Caller, items: list[dict[str, Any]]) -> None:
        """The receipt: the caller's own resolutions on this page reached it now."""
        mine = undelivered(caller, items)
        if not mine:
            return
        now = self.core.now()

        def write(conn: sqlite3.Connection) -> tuple[list[str], Effects]:
            effects = Effects()
            return mark_delivered(conn, [i["event_id"] for i in mine], now, effects), effects

        await self.core.store.execute_effects(write)
        for item in mine:
            item["delivered_at"] = iso(now)

    async def mark(self, caller: Caller, req: InboxMark, status: Literal["read", "unread"]) -> dict[str, Any]:
        """Move an item with a read state to `read` or `unread` (the route says which); others are
        returned unchanged."""
        require_admin(caller, "marking the human's inbox")
        event_id, now = req.event_id, self.core.now()

        def write(conn: sqlite3.Connection) -> tuple[dict[str, Any], Effects]:
            row = item_row(conn, caller, event_id)
            if row is None:
                raise not_found(f"no inbox item for event {event_id!r}")
            effects = Effects()
            changed = row["status"] in ("read", "unread") and row["status"] != status
            if changed:
                conn.execute("UPDATE inbox SET status = ?, updated_at = ? WHERE event_id = ?", (status, now, event_id))
                effects.inbox(row["project_id"], event_id, owner=row["actor"], kind=row["kind"])
            return {"event_id": event_id, "status": status if changed else row["status"], "changed": changed}, effects

        result = await self.core.store.execute_effects(write)
        return result

    async def read_all(self, caller: Caller, req: ReadAll) -> dict[str, Any]:
        """Mark every unread item read (optionally within one project); `marked` counts them.

        Only an absent (or null) project means every project: the model refuses any other value
        that is not a project id (``[]``, ``""``, ``0``, ``false``) instead of widening the action.
        """
        require_admin(caller, "marking the human's inbox")
        project_id = req.project_id
        now = self.core.now()

        def write(conn: sqlite3.Connection) -> tuple[int, Effects]:
            conds, params = _filters(caller, status="unread", project_id=project_id)
            rows = conn.execute(
                f"""SELECT i.project_id, MAX(i.event_id) AS newest, COUNT(*) AS n FROM inbox i
                    LEFT JOIN projects p ON p.id = i.project_id WHERE {" AND ".join(conds)}
                    GROUP BY i.project_id""",
                params,
            ).fetchall()
            effects = Effects()
            for row in rows:
                conn.execute(
                    "UPDATE inbox SET status = 'read', updated_at = ? WHERE status = 'unread' AND project_id = ?",
                    (now, row["project_id"]),
                )
                # One id per project is enough: the stream carries hints, clients re-read.
                effects.inbox(row["project_id"], row["newest"], owner="")
            return sum(r["n"] for r in rows), effects

        marked = await self.core.store.execute_effects(write)
        return {"marked": marked}

    async def wait(self, caller: Caller, req: InboxWait) -> dict[str, Any]:
        """MCP `inbox_wait`: block until one of the caller's own items is resolved.

        Scoped to the caller's own questions, approvals and requests: returns their resolutions
        (answers, decisions, expiries) newer than `since`, else than the caller's durable wait
        cursor (seeded by its first waiting item), which a delivery advances. `wait_seconds`
        0 polls once. Wakes on the notifier, never by polling the store. When the hub shuts down
        the wait answers at once with what it found, and `shutdown: true` if that was nothing.
        """
        seconds, after, count = req.wait_seconds, req.since, req.limit
        actor = caller.actor
        explicit = after is not None
        if not explicit:
            after = await self.core.store.read(lambda conn: get_cursor(conn, actor, WAIT_CURSOR))

        def mine(change: Change) -> bool:
            return change.topic == "inbox" and change.resolved and change.owner == actor

        deadline = anyio.current_time() + seconds
        with self.core.publisher.changes.waiter(mine, [owner_key(actor)]) as waiter:
            while True:
                waiter.reset()
                await self.settle()
                items = await self.core.store.read(lambda conn: self._resolved(conn, caller, after, count))
                remaining = deadline - anyio.current_time()
                if items or remaining <= 0 or waiter.shutdown:
                    break
                with anyio.move_on_after(remaining):
                    await waiter.wait()
        newest = max((i["_resolution"] for i in items), default=after)
        for item in items:
            del item["_resolution"]
        if items and newest:
            await self._advance(actor, newest)
            await self._deliver(caller, items)
        result: dict[str, Any] = {"items": items, "next_since": newest, "timed_out": not items}
        if waiter.shutdown and not items and remaining > 0:
            result["shutdown"] = True  # cut short: the hub is stopping; call again once it is back
        return result

    def _resolved(
        self, conn: sqlite3.Connection, caller: Caller, after: str | None, limit: int
    ) -> list[dict[str, Any]]:
        conds, params = _filters(caller, actor=caller.actor)
        conds.append("i.resolution_id IS NOT NULL AND i.resolution_id > :after")
        params.update(after=after or "", limit=limit)
        rows = conn.execute(
            f"{ITEM_SELECT} WHERE {' AND '.join(conds)} ORDER BY i.resolution_id LIMIT :limit", params
        ).fetchall()
        return [{**render_item(r), "_resolution": r["resolution_id"]} for r in rows]

    async def _advance(self, actor: str, value: str) -> None:
        now = self.core.now()
        await self.core.store.execute(lambda conn: advance_cursor(conn, actor, WAIT_CURSOR, value, now))
