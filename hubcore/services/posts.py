"""Writing to a feed: `signal_append`, `question_post` and the human's ideas.

Every check that reads the store (visibility, idempotency replay, the event ceiling, the open-item
caps) runs inside the one write command that appends, so concurrent posts cannot both pass a cap.
An idempotent replay is answered before any cap or ceiling: a retry is never refused for limits
its original already passed, and it sends no notify.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, replace
from typing import Annotated, Any, Literal, get_args

from pydantic import AfterValidator, ConfigDict, Field, StringConstraints

from hubcore.caller import Caller
from hubcore.clock import iso
from hubcore.errors import HubError, invalid
from hubcore.services import events as ev
from hubcore.services import forms, validate
from hubcore.services import idempotency as idem
from hubcore.services.access import readable_project
from hubcore.services.changes import Effects
from hubcore.services.core import Core
from hubcore.services.cursors import seed_cursor
from hubcore.services.fields import (
    NOT_BLANK_PATTERN,
    Body,
    IdempotencyKey,
    Payload,
    ProjectId,
    SessionId,
    Summary,
    WholeNumber,
)
from hubcore.services.inbox import WAIT_CURSOR, insert_item
from hubcore.services.requests import Request

SignalKind = Literal["signal", "finished", "idea", "approval"]
DEADLINE_MIN, DEADLINE_MAX = 60, 2_592_000
OPTIONS_MIN, OPTIONS_MAX, OPTION_CHARS = 2, 6, 80
OnExpiry = Literal["approve", "decline"]
OUTCOMES = get_args(OnExpiry)
CAP_RETRY_AFTER_SECS = 60


EXPIRES_TEXT = (
    f"deadline in seconds from now ({DEADLINE_MIN} to {DEADLINE_MAX}); when it passes the hub resolves the item"
)
Expires = Annotated[int, WholeNumber(DEADLINE_MIN, DEADLINE_MAX), Field(description=EXPIRES_TEXT)]


class PostRequest(Request):
    """What every post to a feed carries. A blank or missing summary is taken from the body's
    first line; `body` is stored as `payload.body`."""

    project_id: ProjectId
    summary: Summary | None = None
    body: Body | None = None
    payload: Payload | None = None
    session_id: Annotated[
        SessionId | None, Field(description="the session this belongs to (over MCP, default: your active session)")
    ] = None
    idempotency_key: IdempotencyKey | None = None


class IdeaPost(PostRequest):
    """An idea from the human (`POST /projects/:id/ideas`)."""

    # The summary rule (`events.check_summary`) as the schema states it: a summary holding more
    # than whitespace, or a string body to take it from (its first line: no NUL in it).
    model_config = ConfigDict(
        json_schema_extra={
            "anyOf": [
                {"required": ["summary"], "properties": {"summary": {"type": "string", "pattern": NOT_BLANK_PATTERN}}},
                {
                    "required": ["body"],
                    "properties": {"body": {"type": "string", "pattern": f"^[^\\x00]*{NOT_BLANK_PATTERN}[^\\x00]*$"}},
                },
            ]
        }
    )

    # Spec (event fields): a client-supplied actor is ignored; the actor is the caller's.
    actor: Annotated[Any, Field(exclude=True, description="ignored: the actor is always the caller")] = None


class SignalAppend(PostRequest):
    """A signal, finished, idea or approval (which may carry a deadline)."""

    kind: SignalKind = "signal"
    artifact_id: Annotated[
        str | None,
        StringConstraints(min_length=1, max_length=64),
        Field(description="approvals only: the diff artifact under review"),
    ] = None
    expires_in_seconds: Annotated[Expires | None, Field(description=f"approvals only: {EXPIRES_TEXT}")] = None
    on_expiry: Annotated[OnExpiry | None, Field(description="approvals only; default decline")] = None


# An option is not empty as sent (its item is named: `options.1`); the whole list is then held to
# the options rules (trimmed labels, at most 80 characters, no duplicates) by `check_options`.
Option = Annotated[str, StringConstraints(min_length=1)]
Options = Annotated[
    list[Option],
    Field(
        min_length=OPTIONS_MIN,
        max_length=OPTIONS_MAX,
        description=f"choices, {OPTIONS_MIN} to {OPTIONS_MAX} one-line labels of at most {OPTION_CHARS} characters "
        "once trimmed; a pick arrives as an answer whose body is the option text",
    ),
    AfterValidator(lambda value: check_options(value)),
]


Form = Annotated[
    dict[str, Any],
    AfterValidator(forms.check_form),
    Field(
        description=f"typed fields (MCP elicitation subset): {{type: object, properties, required}}; properties "
        f"string (format, min/maxLength), number, integer, boolean, enum or oneOf, array of enum; "
        f"default = your draft; at most {forms.PROPERTIES_MAX} properties; the answer carries `value`"
    ),
]


class QuestionPost(Request):
    """`question_post`: ask the human; the question waits in the inbox until answered or expired."""

    project_id: ProjectId
    summary: Annotated[Summary, Field(description="the question, one line (as on every event)")]
    body: Annotated[Body | None, Field(description="context the human needs to answer")] = None
    options: Options | None = None
    form: Form | None = None
    payload: Payload | None = None
    session_id: Annotated[
        SessionId | None, Field(description="the session this belongs to (over MCP, default: your active session)")
    ] = None
    idempotency_key: IdempotencyKey | None = None
    expires_in_seconds: Expires | None = None


@dataclass(frozen=True)
class Deadline:
    seconds: int
    on_expiry: str | None


def check_deadline(kind: str, expires_in: Any, on_expiry: Any) -> Deadline | None:
    """`expires_in_seconds` (60 to 2592000) on a question or approval; `on_expiry` on an approval
    with a deadline only (default decline). Anything else is refused before anything is written."""
    if expires_in is None:
        if on_expiry is not None:
            raise invalid("on_expiry needs expires_in_seconds", field="on_expiry")
        return None
    if kind not in ("question", "approval"):
        raise invalid(f"a deadline applies only to questions and approvals, not {kind}", field="expires_in_seconds")
    integral = isinstance(expires_in, float) and expires_in.is_integer()
    if isinstance(expires_in, bool) or not (isinstance(expires_in, int) or integral):
        raise invalid("expires_in_seconds must be a whole number of seconds", field="expires_in_seconds")
    seconds = int(expires_in)
    if not DEADLINE_MIN <= seconds <= DEADLINE_MAX:
        raise invalid(f"expires_in_seconds must be from {DEADLINE_MIN} to {DEADLINE_MAX}", field="expires_in_seconds")
    if kind == "question":
        if on_expiry is not None:
            raise invalid("a question takes no on_expiry", field="on_expiry")
        return Deadline(seconds, None)
    if on_expiry is not None and on_expiry not in OUTCOMES:
        raise invalid("on_expiry must be approve or decline", field="on_expiry")
    return Deadline(seconds, on_expiry or "decline")


def check_options(value: Any) -> list[str] | None:
    """2 to 6 one-line options of at most 80 characters after trimming, none blank, no duplicates;
    any fault refuses the whole list."""
    if value is None:
        return None
    if not isinstance(value, list | tuple) or not OPTIONS_MIN <= len(value) <= OPTIONS_MAX:
        raise invalid(f"options must be a list of {OPTIONS_MIN} to {OPTIONS_MAX} strings", field="options")
    options: list[str] = []
    for raw in value:
        if not isinstance(raw, str):
            raise invalid("every option must be a string", field="options")
        text = raw.strip()  # the limit applies to the stored, trimmed option
        if not text or not validate.is_label(text) or len(text) > OPTION_CHARS:
            raise invalid(
                f"every option must be one non-blank line of at most {OPTION_CHARS} characters "
                "without control characters",
                field="options",
                limit=OPTION_CHARS,
            )
        if text in options:
            raise invalid(f"option {text!r} appears twice", field="options")
        options.append(text)
    return options


def cap_error(message: str, cap: int, setting: str) -> HubError:
    return HubError(
        "rate_limited",
        message,
        details={"cap": cap, "setting": setting},
        retryable=True,
        headers={"Retry-After": str(CAP_RETRY_AFTER_SECS)},
    )


def check_open_caps(conn: sqlite3.Connection, project_id: str, actor: str, per_actor: int, per_project: int) -> None:
    """Refuse a new waiting item past the open-item caps (0 disables a cap)."""
    if per_actor > 0:
        n = conn.execute(
            "SELECT COUNT(*) FROM inbox WHERE status = 'waiting' AND project_id = ? AND actor = ?", (project_id, actor)
        ).fetchone()[0]
        if n >= per_actor:
            raise cap_error(
                f"{actor} has {n} open items in project {project_id!r}, the cap "
                f"(inbox_open_per_agent = {per_actor}); nothing was posted",
                per_actor,
                "inbox_open_per_agent",
            )
    if per_project > 0:
        n = conn.execute(
            "SELECT COUNT(*) FROM inbox WHERE status = 'waiting' AND project_id = ?", (project_id,)
        ).fetchone()[0]
        if n >= per_project:
            raise cap_error(
                f"project {project_id!r} has {n} open items, the cap "
                f"(inbox_open_per_project = {per_project}); nothing was posted",
                per_project,
                "inbox_open_per_project",
            )


@dataclass(frozen=True)
class Post:
    """A checked write: everything validated that needs no store."""

    project_id: str
    kind: str
    summary: str
    payload: dict[str, Any]
    session_id: str | None
    key: str | None
    deadline: Deadline | None = None
    artifact_id: str | None = None  # an approval reviewing this diff artifact


class PostsService:
    def __init__(self, core: Core) -> None:
        self.core = core

    async def signal_append(self, caller: Caller, req: SignalAppend) -> dict[str, Any]:
        """Append an event of `kind` (signal, finished, idea, approval). An approval waits on the
        human and may carry a deadline; an idea lands unread in the inbox. The actor is the
        caller's, whatever the client sent."""
        deadline = check_deadline(req.kind, req.expires_in_seconds, req.on_expiry)
        if req.artifact_id is not None and req.kind != "approval":
            raise invalid("artifact_id: only an approval names an artifact to review", field="artifact_id")
        return await self._append(caller, replace(_post(req, req.kind, deadline), artifact_id=req.artifact_id))

    async def question_post(self, caller: Caller, req: QuestionPost) -> dict[str, Any]:
        """Ask the human. The question roots its own thread: `event_id`, `question_id` and
        `thread_id` are equal. Options are stored trimmed as `payload.options`."""
        post = _post(req, "question", check_deadline("question", req.expires_in_seconds, None))
        if req.options is not None and req.form is not None:
            raise invalid("a question takes options or a form, not both", field="form")
        if req.options is not None:
            post = replace(post, payload=ev.check_payload({**post.payload, "options": req.options}))
        if req.form is not None:
            post = replace(post, payload=ev.check_payload({**post.payload, "form": req.form}))
        result = await self._append(caller, post)
        return {**result, "question_id": result["event_id"]}

    async def idea(self, caller: Caller, req: IdeaPost) -> dict[str, Any]:
        """`POST /projects/:id/ideas`: an idea, a needs-action signal that arrives unread."""
        result = await self._append(caller, _post(req, "idea", None))
        return {"id": result["event_id"], **result}

    async def _append(self, caller: Caller, post: Post) -> dict[str, Any]:
        now, settings = self.core.now(), self.core.settings
        actor = caller.actor

        def write(conn: sqlite3.Connection) -> tuple[dict[str, Any], Effects]:
            readable_project(conn, caller, post.project_id)
            effects = Effects()
            scope = f"event:{post.kind}"
            earlier = idem.replayed(conn, actor, scope, post.key, post.project_id)
            if earlier is not None:
                return earlier, effects
            waits = post.kind == "question" or post.kind == "approval"
            if waits:
                check_open_caps(
                    conn, post.project_id, actor, settings.inbox_open_per_agent, settings.inbox_open_per_project
                )
            payload = post.payload
            if post.artifact_id is not None:
                payload = ev.check_payload({**payload, "review": self._subject(conn, post)})
            event = ev.insert_event(
                conn,
                ev.NewEvent(
                    post.project_id, post.kind, actor, post.summary, payload, post.session_id, roots_thread=waits
                ),
                now=now,
                cap=settings.events_per_project,
                effects=effects,
            )
            result: dict[str, Any] = {"event_id": event["id"], "kind": post.kind, "created_at": event["created_at"]}
            if waits:
                result.update(start_waiting(conn, event, post.deadline, now, effects))
            elif post.kind == "idea":
                insert_item(conn, event, "unread", now)
                effects.inbox(post.project_id, event["id"], owner=actor, kind="idea")
            idem.remember(conn, actor, scope, post.key, post.project_id, post.project_id, result, now)
            return result, effects

        return await self.core.store.execute_effects(write)

    def _subject(self, conn: sqlite3.Connection, post: Post) -> dict[str, Any]:
        """The approval's `review`: what the part owning the artifact records of it."""
        assert post.artifact_id is not None
        for part in self.core.parts:
            found = part.review_subject(conn, post.project_id, post.artifact_id)
            if found is not None:
                return found
        raise invalid("artifact_id: this hub reviews no artifacts", field="artifact_id")


def _post(req: PostRequest | QuestionPost, kind: str, deadline: Deadline | None) -> Post:
    """A checked post from a parsed request. The body joins the payload, whose size is checked
    again with it; the summary falls back to the body's first line."""
    payload = dict(req.payload or {})
    if req.body is not None:
        payload = ev.check_payload({**payload, "body": req.body})
    return Post(
        req.project_id,
        kind,
        ev.check_summary(req.summary, payload),
        payload,
        req.session_id,
        req.idempotency_key,
        deadline,
    )


def start_waiting(
    conn: sqlite3.Connection, event: dict[str, Any], deadline: Deadline | None, now: float, effects: Effects
) -> dict[str, Any]:
    """Put a just-appended question, approval or enrolment request in the inbox as waiting.

    Seeds the asker's wait cursor and marks the command as one that starts the notify target.
    Returns the members the post's result adds (`thread_id`, `expires_at`, `on_expiry`).
    """
    expires_at = now + deadline.seconds if deadline else None
    insert_item(conn, event, "waiting", now, expires_at=expires_at, on_expiry=deadline.on_expiry if deadline else None)
    seed_cursor(conn, event["actor"], WAIT_CURSOR, event["id"], now)
    effects.inbox(event["project_id"], event["id"], owner=event["actor"], kind=event["kind"])
    effects.started_waiting = True
    extra: dict[str, Any] = {"thread_id": event["id"]}
    if expires_at is not None and deadline is not None:
        extra["expires_at"] = iso(expires_at)
        if deadline.on_expiry:
            extra["on_expiry"] = deadline.on_expiry
    return extra
