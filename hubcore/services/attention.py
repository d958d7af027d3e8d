"""What asks for an agent's attention: the attention queue, standing subscriptions, their drains
(the `notify_*` tools). Named apart from `changes` (in-process pub/sub) and `webhook` (outbound POST).

Two kinds of item reach an agent, each exactly once:

- attention: the resolution of the caller's own question, approval or request (an answer, a
  decision, or the hub's expiry), titled so the agent knows which; and the human's comment on an
  artifact the caller published (kind `comment`, with `artifact_id` and `comment_id`;
  artifacts/comment_notes.py);
- subscription: a new event matching one of the caller's standing subscriptions (kinds, optional
  project, optional author, optionally dropping the caller's own events).

Delivery cursors are server-side and keyed on actor, one per queue (the attention queue, each
subscription) and per project, in `actor_cursors`. A drain runs in one write command, so two
concurrent calls of one agent never receive the same item. It reads only projects the caller can
read at drain time; an unreadable project's events stay above its cursor. A drain that finds
nothing writes nothing. Waiting (`notify_wait`) wakes on the notifier, never by polling.

Every successful tool call drains, so the common empty case must be cheap: after a drain finds
nothing the actor is remembered as clean, and stays so until the notifier reports a change that
could concern it (a resolution of its own item, an event matching one of its subscriptions), its
subscriptions change, or `CLEAN_SECS` pass (which bounds how late held-back items of a project
that became readable again arrive, since a grant publishes nothing). A per-actor generation
counter closes the race between a read that found nothing and a change landing during it.
"""

from __future__ import annotations

import secrets
import sqlite3
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Annotated, Any

import anyio
import orjson
from pydantic import Field, StringConstraints

from hubcore.caller import HUMAN, Caller
from hubcore.clock import iso
from hubcore.errors import HubError, not_found
from hubcore.services.access import readable_project, visibility
from hubcore.services.changes import Change, Effects, feed_key, owner_key
from hubcore.services.core import Core
from hubcore.services.cursors import advance_cursor
from hubcore.services.fields import WAIT_DEFAULT, ActorName, ProjectId, SubscribedKinds, WaitSeconds
from hubcore.services.inbox import mark_delivered
from hubcore.services.requests import Request

ATTENTION = "notify:attention"
SUB_PREFIX = "notify:sub:"
DRAIN_MAX = 20
SUBSCRIPTIONS_MAX = 50
SUBSCRIPTION_ID_MAX = 64  # ids are `sub_` and 16 hex digits; longer text is never one
CLEAN_SECS = 30.0
ID_PREFIX = "sub_"


@dataclass
class Drained:
    items: list[dict[str, Any]] = field(default_factory=list)
    more: bool = False
    # (cursor name, project id, newest id delivered) to advance in the same command
    advances: dict[tuple[str, str], str] = field(default_factory=dict)


@dataclass(frozen=True)
class Subscription:
    id: str
    actor: str
    kinds: tuple[str, ...]
    project_id: str | None
    from_actor: str | None
    drop_own: bool
    seed: str
    created_at: float

    @classmethod
    def of(cls, row: sqlite3.Row) -> Subscription:
        return cls(
            row["id"],
            row["actor"],
            tuple(orjson.loads(row["kinds"])),
            row["project_id"],
            row["from_actor"],
            bool(row["drop_own"]),
            row["seed"],
            row["created_at"],
        )

    @property
    def cursor_name(self) -> str:
        return SUB_PREFIX + self.id

    def matches(self, change: Change) -> bool:
        return (
            change.topic == "feed"
            and change.kind in self.kinds
            and (self.project_id is None or change.project_id == self.project_id)
            and (self.from_actor is None or change.actor == self.from_actor)
            and not (self.drop_own and change.actor == self.actor)
        )


def _title(root_kind: str, root_summary: str, payload: dict[str, Any]) -> str:
    expired = payload.get("expired") is True
    decision = payload.get("decision")
    what = {
        "question": "your question",
        "approval": "your approval request",
        "enrol_request": "your enrolment request",
    }.get(root_kind, "your request")
    if decision in ("approved", "declined"):
        verdict = "Approved" if decision == "approved" else "Declined"
        prefix = f"Expired, {verdict.lower()} by its deadline" if expired else verdict
        return f"{prefix}: {what}: {root_summary}"
    if expired:
        return f"Expired without an answer: {what}: {root_summary}"
    return f"Answered: {what}: {root_summary}"


def _cursor_sql(name_param: str, project_col: str) -> str:
    return (
        f"COALESCE((SELECT c.value FROM actor_cursors c WHERE c.actor = :me AND c.name = {name_param} "
        f"AND c.project_id = {project_col}), '')"
    )


def _attention(conn: sqlite3.Connection, caller: Caller, limit: int, out: Drained) -> None:
    """Resolutions of the caller's own items and the human's comments on its artifacts, merged in
    id order (one cursor per project serves both)."""
    cond, params = visibility(caller)
    resolved = conn.execute(
        f"""SELECT a.id, a.project_id, a.kind, a.payload, a.created_at, q.kind AS root_kind,
                   q.summary AS root_summary, q.id AS root_id
            FROM inbox i JOIN events a ON a.id = i.resolution_id JOIN events q ON q.id = i.event_id
            JOIN projects p ON p.id = i.project_id
            WHERE i.actor = :me AND i.resolution_id IS NOT NULL AND {cond}
              AND i.resolution_id > {_cursor_sql(":name", "i.project_id")}
            ORDER BY i.resolution_id LIMIT :limit""",
        {**params, "me": caller.actor, "name": ATTENTION, "limit": limit + 1},
    ).fetchall()
    # The human's comments on the caller's artifacts (comment_notes.py): artifact events by the
    # human, read through the (project, kind, id) index above the cursor.
    commented = conn.execute(
        f"""SELECT e.id, e.project_id, e.kind, e.payload, e.created_at FROM events e
            JOIN projects p ON p.id = e.project_id
            WHERE e.kind = 'artifact' AND e.actor = :human AND {cond}
              AND e.id > {_cursor_sql(":name", "e.project_id")}
              AND json_extract(e.payload, '$.action') = 'commented'
              AND json_extract(e.payload, '$.artifact_author') = :me
            ORDER BY e.id LIMIT :limit""",
        {**params, "me": caller.actor, "name": ATTENTION, "limit": limit + 1, "human": HUMAN},
    ).fetchall()
    merged = sorted([*resolved, *commented], key=lambda r: r["id"])
    for row in merged[:limit]:
        payload = orjson.loads(row["payload"])
        if row["kind"] == "artifact":
            item = {
                "source": "attention",
                "kind": "comment",
                "id": row["id"],
                "project_id": row["project_id"],
                "title": _comment_title(payload),
                "at": iso(row["created_at"]),
                "artifact_id": payload.get("artifact_id"),
                "comment_id": payload.get("comment_id"),
            }
        else:
            item = {
                "source": "attention",
                "kind": row["kind"],
                "id": row["id"],
                "project_id": row["project_id"],
                "title": _title(row["root_kind"], row["root_summary"], payload),
                "at": iso(row["created_at"]),
                "thread_id": row["root_id"],
            }
            if payload.get("expired") is True:
                item["expired"] = True
            if "value" in payload:
                item["value"] = payload["value"]  # a form question's structured answer
        if isinstance(payload.get("review"), dict):  # a diff's verdict and open comments (issue 29)
            item["review"] = payload["review"]
        out.items.append(item)
        out.advances[(ATTENTION, row["project_id"])] = row["id"]
    out.more = out.more or len(merged) > limit


COMMENT_TITLE_CHARS = 120


def _comment_title(payload: dict[str, Any]) -> str:
    body = str(payload.get("body") or "")
    first = body.splitlines()[0] if body else ""
    if len(first) > COMMENT_TITLE_CHARS:
        first = first[: COMMENT_TITLE_CHARS - 1] + "…"
    return f"The human commented on your artifact {payload.get('artifact_id')}: {first}"


def _matching(caller: Caller, sub: Subscription) -> tuple[list[str], dict[str, Any]]:
    """Conditions (on events `e`, joined to projects `p`) for what a subscription matches and the
    caller may read, with their parameters."""
    cond, params = visibility(caller)
    conds = [cond, f"e.kind IN ({', '.join(f':k{n}' for n in range(len(sub.kinds)))})"]
    params.update({f"k{n}": k for n, k in enumerate(sub.kinds)}, me=caller.actor)
    if sub.project_id is not None:
        conds.append("e.project_id = :project")
        params["project"] = sub.project_id
    if sub.from_actor is not None:
        conds.append("e.actor = :author")
        params["author"] = sub.from_actor
    if sub.drop_own:
        conds.append("e.actor != :me")
    return conds, params


def _subscription(conn: sqlite3.Connection, caller: Caller, sub: Subscription, limit: int, out: Drained) -> None:
    conds, params = _matching(caller, sub)
    conds.append(f"e.id > MAX(:seed, {_cursor_sql(':name', 'e.project_id')})")
    params.update(name=sub.cursor_name, seed=sub.seed, limit=limit + 1)
    rows = conn.execute(
        f"""SELECT e.id, e.project_id, e.kind, e.actor, e.summary, e.created_at FROM events e
            JOIN projects p ON p.id = e.project_id WHERE {" AND ".join(conds)} ORDER BY e.id LIMIT :limit""",
        params,
    ).fetchall()
    for row in rows[:limit]:
        out.items.append(
            {
                "source": "subscription",
                "kind": row["kind"],
                "id": row["id"],
                "project_id": row["project_id"],
                "title": f"{row['actor']}: {row['summary']}",
                "at": iso(row["created_at"]),
                "subscription_id": sub.id,
            }
        )
        out.advances[(sub.cursor_name, row["project_id"])] = row["id"]
    out.more = out.more or len(rows) > limit


def _subscriptions(conn: sqlite3.Connection, actor: str) -> list[Subscription]:
    rows = conn.execute("SELECT * FROM notify_subscriptions WHERE actor = ? ORDER BY id", (actor,)).fetchall()
    return [Subscription.of(r) for r in rows]


def collect(conn: sqlite3.Connection, caller: Caller, limit: int = DRAIN_MAX) -> Drained:
    """What is pending for the caller, attention first, at most `limit` items."""
    out = Drained()
    _attention(conn, caller, limit, out)
    for sub in _subscriptions(conn, caller.actor):
        room = limit - len(out.items)
        if room <= 0:
            out.more = True
            break
        _subscription(conn, caller, sub, room, out)
    return out


class Subscribe(Request):
    """`notify_subscribe`: new events of these kinds (optionally in one project, by one actor,
    dropping your own) are delivered to you once each."""

    kinds: Annotated[tuple[str, ...], SubscribedKinds()]
    project_id: ProjectId | None = None
    actor: ActorName | None = None
    drop_own: Annotated[bool, Field(description="skip events you wrote")] = False


class Unsubscribe(Request):
    """`notify_unsubscribe`: remove one of your subscriptions."""

    subscription_id: Annotated[str, StringConstraints(min_length=1, max_length=SUBSCRIPTION_ID_MAX)]


class NotifyWait(Request):
    """`notify_wait`: block until something is pending for you."""

    wait_seconds: WaitSeconds = WAIT_DEFAULT


class AttentionService:
    def __init__(self, core: Core, settle: Callable[[], Awaitable[None]] | None = None) -> None:
        self.core = core
        self.changes = core.publisher.changes
        self.settle = settle
        self._clean: dict[str, float] = {}  # actor -> when it was last seen with nothing pending
        self._generation: dict[str, int] = {}
        self._subscriptions: dict[str, list[Subscription]] = {}  # cache for actors marked clean

    def on_commit(self, effects: Effects) -> None:
        """Every committed write's effects (the attention part observes commits): a change that
        could concern a clean actor makes it look again."""
        for change in effects.changes:
            self._observe(change)

    def _observe(self, change: Change) -> None:
        if change.topic == "inbox":
            if change.resolved and change.owner:
                self._touch(change.owner)
        elif change.topic == "feed":  # a live artifact's moves concern no subscription
            if change.owner:  # addressed to one agent (a comment on its artifact): its attention queue
                self._touch(change.owner)
            for actor, subs in list(self._subscriptions.items()):
                if any(s.matches(change) for s in subs):
                    self._touch(actor)

    def _touch(self, actor: str) -> None:
        self._clean.pop(actor, None)
        self._generation[actor] = self._generation.get(actor, 0) + 1

    def _is_clean(self, actor: str) -> bool:
        since = self._clean.get(actor)
        return since is not None and self.core.now() - since < CLEAN_SECS

    async def drain(self, caller: Caller) -> Drained:
        """Hand over (and mark delivered) what is pending; an empty drain writes nothing."""
        if caller.kind == "public":
            return Drained()
        actor = caller.actor
        if self._is_clean(actor):
            return Drained()
        if actor not in self._subscriptions:
            self._subscriptions[actor] = await self.core.store.read(lambda conn: _subscriptions(conn, actor))
        generation = self._generation.get(actor, 0)
        peek = await self.core.store.read(lambda conn: collect(conn, caller, 1))
        if not peek.items:
            if self._generation.get(actor, 0) == generation:
                self._clean[actor] = self.core.now()
            return Drained()
        now = self.core.now()

        def write(conn: sqlite3.Connection) -> tuple[Drained, Effects]:
            drained = collect(conn, caller)
            for (name, project_id), newest in drained.advances.items():
                advance_cursor(conn, actor, name, newest, now, project_id)
            effects = Effects()
            # The receipt: a resolution handed over here reached its asking agent (a comment note,
            # the other attention item, answers no thread and so has no receipt).
            threads = [i["thread_id"] for i in drained.items if i["source"] == "attention" and "thread_id" in i]
            mark_delivered(conn, threads, now, effects)
            return drained, effects

        return await self.core.store.execute_effects(write)

    async def wait(self, caller: Caller, req: NotifyWait) -> dict[str, Any]:
        """Block until something is pending (then deliver it) or `wait_seconds` pass. When the hub
        shuts down the wait answers at once, with `shutdown: true` if nothing was pending."""
        seconds = req.wait_seconds
        actor = caller.actor
        subs = await self.core.store.read(lambda conn: _subscriptions(conn, actor))

        def wakes(change: Change) -> bool:
            if change.topic == "inbox":
                return change.resolved and change.owner == actor
            return change.owner == actor or any(s.matches(change) for s in subs)

        keys = [owner_key(actor), *{feed_key(s.project_id) for s in subs}]
        deadline = anyio.current_time() + seconds
        with self.changes.waiter(wakes, keys) as waiter:
            while True:
                waiter.reset()
                if self.settle is not None:
                    await self.settle()  # due deadlines resolve before a wait reads
                drained = await self.drain(caller)
                remaining = deadline - anyio.current_time()
                if drained.items or remaining <= 0 or waiter.shutdown:
                    break
                with anyio.move_on_after(remaining):
                    await waiter.wait()
        trailer: dict[str, Any] = {"pending": drained.items}
        if drained.more:
            trailer["more"] = True
        result: dict[str, Any] = {"timed_out": not drained.items, "notifications": trailer}
        if waiter.shutdown and not drained.items and remaining > 0:
            result["shutdown"] = True  # cut short: the hub is stopping; call again once it is back
        return result

    async def subscribe(self, caller: Caller, req: Subscribe) -> dict[str, Any]:
        checked, project_id, actor, drop_own = req.kinds, req.project_id, req.actor, req.drop_own
        me, now = caller.actor, self.core.now()
        sub_id = ID_PREFIX + secrets.token_hex(8)

        def write(conn: sqlite3.Connection) -> dict[str, Any]:
            if project_id is not None:
                readable_project(conn, caller, project_id)
            count = conn.execute("SELECT COUNT(*) FROM notify_subscriptions WHERE actor = ?", (me,)).fetchone()[0]
            if count >= SUBSCRIPTIONS_MAX:
                raise HubError(
                    "rate_limited",
                    f"{me} already holds {SUBSCRIPTIONS_MAX} subscriptions; remove one with notify_unsubscribe",
                    details={"limit": SUBSCRIPTIONS_MAX},
                )
            draft = Subscription(sub_id, me, checked, project_id, actor, drop_own, "", now)
            seed = _newest_matching(conn, caller, draft)
            conn.execute(
                """INSERT INTO notify_subscriptions (id, actor, kinds, project_id, from_actor, drop_own, seed,
                   created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)""",
                (sub_id, me, orjson.dumps(list(checked)).decode(), project_id, actor, int(drop_own), seed, now),
            )
            return {"subscription_id": sub_id, "cursor": seed or None, **_scope(draft)}

        try:
            return await self.core.store.execute(write)
        finally:
            self._forget(me)

    async def unsubscribe(self, caller: Caller, req: Unsubscribe) -> dict[str, Any]:
        subscription_id, me = req.subscription_id, caller.actor

        def write(conn: sqlite3.Connection) -> dict[str, Any]:
            gone = conn.execute(
                "DELETE FROM notify_subscriptions WHERE id = ? AND actor = ?", (subscription_id, me)
            ).rowcount
            if not gone:
                raise not_found(f"no subscription {subscription_id!r} of yours")
            conn.execute("DELETE FROM actor_cursors WHERE actor = ? AND name = ?", (me, SUB_PREFIX + subscription_id))
            return {"subscription_id": subscription_id, "removed": True}

        try:
            return await self.core.store.execute(write)
        finally:
            self._forget(me)

    def _forget(self, actor: str) -> None:
        """The actor's subscriptions changed: drop the cache and the clean mark."""
        self._subscriptions.pop(actor, None)
        self._touch(actor)

    async def list(self, caller: Caller) -> dict[str, Any]:
        me = caller.actor

        def read(conn: sqlite3.Connection) -> dict[str, Any]:
            out = []
            for sub in _subscriptions(conn, me):
                row = conn.execute(
                    "SELECT MAX(value) FROM actor_cursors WHERE actor = ? AND name = ?", (me, sub.cursor_name)
                ).fetchone()
                cursor = max(sub.seed, row[0] or "")
                out.append(
                    {
                        "subscription_id": sub.id,
                        "kinds": list(sub.kinds),
                        **_scope(sub),
                        "cursor": cursor or None,
                        "created_at": iso(sub.created_at),
                    }
                )
            return {"subscriptions": out}

        return await self.core.store.read(read)


def _scope(sub: Subscription) -> dict[str, Any]:
    return {"kinds": list(sub.kinds), "project_id": sub.project_id, "actor": sub.from_actor, "drop_own": sub.drop_own}


def _newest_matching(conn: sqlite3.Connection, caller: Caller, sub: Subscription) -> str:
    conds, params = _matching(caller, sub)
    row = conn.execute(
        f"SELECT MAX(e.id) FROM events e JOIN projects p ON p.id = e.project_id WHERE {' AND '.join(conds)}",
        params,
    ).fetchone()
    return str(row[0] or "")


def purge_subscriptions(conn: sqlite3.Connection, project_id: str) -> None:
    """A deleted project takes its scoped subscriptions with it (inside the delete's command)."""
    conn.execute("DELETE FROM notify_subscriptions WHERE project_id = ?", (project_id,))
