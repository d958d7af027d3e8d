"""Resolving what waits on the human: answers, decisions and deadline expiries.

A resolution is an `answer` event on the item's thread written in the same transaction as the
inbox change, so nobody ever sees one without the other. A question or approval is answered once,
permanently; after its deadline an answer or decision is refused as a conflict even before the
sweep recorded the expiry. The sweeper resolves due items every few seconds, and every read of open
state settles due items first (`settle`), so an expired item never reads as open.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from typing import Annotated, Any, Literal

import orjson
from pydantic import Field

from hubcore.caller import Caller
from hubcore.clock import iso
from hubcore.errors import HubError, conflict, forbidden, invalid, not_found
from hubcore.services import events as ev
from hubcore.services import forms
from hubcore.services import idempotency as idem
from hubcore.services.changes import Effects
from hubcore.services.core import Core
from hubcore.services.fields import AnswerBody, EventId, IdempotencyKey, Trimmed
from hubcore.services.inbox import item_row
from hubcore.services.periodic import repeat
from hubcore.services.requests import Request

log = logging.getLogger("hubcore.questions")

NOTE_MAX = 2000
SWEEP_INTERVAL_SECS = 2.0
SWEEP_BATCH = 500
DECISIONS = {"approve": "approved", "decline": "declined"}
Decision = Literal["approve", "decline"]  # the keys of DECISIONS

DECIDABLE_KINDS = ("approval", "enrol_request")
# A note keeps its lines; trimmed, and blank means none.
Note = Annotated[str, Trimmed(NOTE_MAX, lines=True)]


class AnswerPost(Request):
    """`answer_post`, `POST /questions/:id/answer`: answer an open question."""

    question_id: EventId
    body: Annotated[AnswerBody | None, Field(description="the answer (required unless the question has a form)")] = None
    value: Annotated[
        dict[str, Any] | None, Field(description="a form question's answer: an object of the form's properties")
    ] = None
    idempotency_key: IdempotencyKey | None = None


def answer_payload(row: sqlite3.Row, body: str | None, value: dict[str, Any] | None) -> dict[str, Any]:
    """The answer event's payload: `body`, and for a form question the checked `value` (a form
    question needs one; the body then defaults to the value as text)."""
    form = orjson.loads(row["payload"]).get("form")
    if form is None:
        if value is not None:
            raise invalid("value: only a form question takes a value", field="value")
        if body is None:
            raise invalid("body: is required", field="body")
        return {"body": body}
    if value is None:
        raise invalid("value: a form question is answered with a value", field="value")
    checked = forms.check_answer(form, value)
    return {"body": body if body is not None else forms.render_text(form, checked), "value": checked}


class DecisionPost(Request):
    """`POST /approvals/:id/decision`: the human approves or declines."""

    approval_id: EventId
    decision: Decision
    note: Note | None = None
    idempotency_key: IdempotencyKey | None = None


def decision_body(decision: str, note: str | None) -> str:
    word = "Approved" if decision == "approved" else "Declined"
    return f"{word}: {note}" if note else word


def _open_item(
    conn: sqlite3.Connection, caller: Caller, item_id: str, kinds: tuple[str, ...], what: str, now: float
) -> sqlite3.Row:
    """The open item the caller may resolve, or the refusal: missing, resolved or past deadline."""
    row = item_row(conn, caller, item_id)
    if row is None or row["kind"] not in kinds:
        raise not_found(f"{what} {item_id!r} not found")
    if row["status"] != "waiting":
        raise conflict(f"{what} {item_id!r} is already resolved", resolution_id=row["resolution_id"])
    if row["expires_at"] is not None and now >= row["expires_at"]:
        raise conflict(
            f"{what} {item_id!r} passed its deadline at {iso(row['expires_at'])}", expires_at=iso(row["expires_at"])
        )
    return row


def resolve(
    conn: sqlite3.Connection,
    row: sqlite3.Row,
    actor: str,
    summary: str,
    payload: dict[str, Any],
    now: float,
    cap: int,
    effects: Effects,
) -> dict[str, Any]:
    """Append the answer event on the item's thread and resolve the item, in one step."""
    answer = ev.insert_event(
        conn,
        ev.NewEvent(
            row["project_id"],
            "answer",
            actor,
            summary[: ev.SUMMARY_MAX],
            payload,
            thread_id=row["event_id"],
            exempt=actor == ev.HUB_ACTOR,
        ),
        now=now,
        cap=cap,
        effects=effects,
    )
    conn.execute(
        "UPDATE inbox SET status = 'resolved', resolution_id = ?, updated_at = ? WHERE event_id = ?",
        (answer["id"], now, row["event_id"]),
    )
    effects.inbox(row["project_id"], row["event_id"], owner=row["actor"], kind=row["kind"], resolved=True)
    return answer


# What a decision's `review` says of the human (issue 29): an expiry carries no human verdict.
VERDICTS = {"approved": "approved", "declined": "changes_requested"}
EXPIRED_VERDICT = "expired"
Review = Callable[[sqlite3.Connection, sqlite3.Row, str], dict[str, Any] | None]


def expire(conn: sqlite3.Connection, row: sqlite3.Row, now: float, effects: Effects, review: Review) -> None:
    """Resolve a due item as the hub: no answer for a question, the `on_expiry` outcome otherwise.
    An approval naming a diff also carries its review with verdict `expired`: no verdict from the
    human, but the line comments they left before the deadline (docs/decisions.md)."""
    payload: dict[str, Any] = {"expired": True}
    if row["kind"] == "question":
        summary = "No answer before the deadline"
    else:
        decision = DECISIONS[row["on_expiry"] or "decline"]
        payload.update(body=decision_body(decision, None), decision=decision)
        summary = f"{decision.capitalize()} by the hub: the deadline passed"
        reviewed = review(conn, row, EXPIRED_VERDICT)
        if reviewed is not None:
            payload["review"] = reviewed
    resolve(conn, row, ev.HUB_ACTOR, summary, payload, now, 0, effects)


class ResolutionsService:
    def __init__(self, core: Core) -> None:
        self.core = core

    async def answer(self, caller: Caller, req: AnswerPost) -> dict[str, Any]:
        """Answer an open question (`answer_post`, `POST /questions/:id/answer`) -> {event_id}."""
        question_id, key = req.question_id, req.idempotency_key
        actor, now, cap = caller.actor, self.core.now(), self.core.settings.events_per_project

        def write(conn: sqlite3.Connection) -> tuple[dict[str, Any], Effects]:
            effects = Effects()
            earlier = idem.replayed(conn, actor, "answer", key, question_id)
            if earlier is not None and item_row(conn, caller, question_id) is not None:
                return earlier, effects
            row = _open_item(conn, caller, question_id, ("question",), "question", now)
            payload = answer_payload(row, req.body, req.value)
            summary = (payload["body"].strip().splitlines() or [""])[0].strip() or "(answer)"
            answer = resolve(conn, row, actor, summary, payload, now, cap, effects)
            result = {"event_id": answer["id"]}
            idem.remember(conn, actor, "answer", key, question_id, row["project_id"], result, now)
            return result, effects

        return await self._run(write)

    async def decide(self, caller: Caller, req: DecisionPost) -> dict[str, Any]:
        """Decide an open approval -> {event_id}. Only the human decides; a refused request (its
        note, say) decides nothing."""
        approval_id, note, key = req.approval_id, req.note or None, req.idempotency_key
        decision = DECISIONS[req.decision]
        if not caller.is_admin:
            raise forbidden("only the human decides approvals")
        payload: dict[str, Any] = {"body": decision_body(decision, note), "decision": decision}
        if note is not None:
            payload["note"] = note
        actor, now, cap = caller.actor, self.core.now(), self.core.settings.events_per_project
        hooks = {kind: hook for part in self.core.parts for kind, hook in part.decision_hooks().items()}

        def write(conn: sqlite3.Connection) -> tuple[dict[str, Any], Effects]:
            effects = Effects()
            earlier = idem.replayed(conn, actor, "decision", key, approval_id)
            if earlier is not None and item_row(conn, caller, approval_id) is not None:
                return earlier, effects
            row = _open_item(conn, caller, approval_id, DECIDABLE_KINDS, "approval", now)
            review = self._review(conn, row, VERDICTS[decision])
            answer = resolve(
                conn,
                row,
                actor,
                payload["body"].splitlines()[0],
                payload if review is None else {**payload, "review": review},
                now,
                cap,
                effects,
            )
            hook = hooks.get(row["kind"])
            if hook is not None:
                hook(conn, row, decision, now)
            result = {"event_id": answer["id"]}
            idem.remember(conn, actor, "decision", key, approval_id, row["project_id"], result, now)
            return result, effects

        return await self._run(write)

    def _review(self, conn: sqlite3.Connection, row: sqlite3.Row, verdict: str) -> dict[str, Any] | None:
        """An approval naming a diff: the verdict and the open comments of the version decided on."""
        subject = orjson.loads(row["payload"]).get("review")
        if row["kind"] != "approval" or not isinstance(subject, dict):
            return None
        for part in self.core.parts:
            found = part.review_of(conn, {**subject, "project_id": row["project_id"]}, verdict)
            if found is not None:
                return found
        return None

    async def _run(self, write: Callable[[sqlite3.Connection], tuple[dict[str, Any], Effects]]) -> dict[str, Any]:
        try:
            return await self.core.store.execute_effects(write)
        except HubError as err:
            if err.code == "conflict" and err.details and "expires_at" in err.details:
                await self.settle()  # record the expiry the refusal just observed
            raise

    # -- deadlines ---------------------------------------------------------------------------

    async def sweep(self) -> int:
        """Resolve every item whose deadline has passed; returns how many."""
        total = 0
        while True:
            now = self.core.now()

            def write(conn: sqlite3.Connection, now: float = now) -> tuple[int, Effects]:
                rows = conn.execute(
                    """SELECT i.*, e.payload FROM inbox i JOIN events e ON e.id = i.event_id
                       WHERE i.status = 'waiting' AND i.expires_at IS NOT NULL AND i.expires_at <= ?
                       ORDER BY i.expires_at LIMIT ?""",
                    (now, SWEEP_BATCH),
                ).fetchall()
                effects = Effects()
                for row in rows:
                    expire(conn, row, now, effects, self._review)
                return len(rows), effects

            count = await self.core.store.execute_effects(write)
            total += count
            if count < SWEEP_BATCH:
                return total

    async def due(self) -> bool:
        now = self.core.now()
        row = await self.core.store.read(
            lambda conn: conn.execute(
                "SELECT 1 FROM inbox WHERE status = 'waiting' AND expires_at IS NOT NULL AND expires_at <= ? LIMIT 1",
                (now,),
            ).fetchone()
        )
        return row is not None

    async def settle(self) -> None:
        """Before a read of open state: resolve due items (one indexed read when none are due)."""
        if await self.due():
            await self.sweep()

    async def run_sweeper(self, interval: float | None = None) -> None:
        """Background task: sweep every `interval` seconds (default `SWEEP_INTERVAL_SECS`) until cancelled."""
        await repeat(self.sweep, interval if interval is not None else SWEEP_INTERVAL_SECS, "deadline sweep", log)
