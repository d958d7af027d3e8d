"""`feed_read` and `signal_append`: thin adapters over hubcore's feed and posts services."""

from __future__ import annotations

from typing import Any, TypeVar

from hubcore.services.feed import FeedRead
from hubcore.services.posts import QuestionPost, SignalAppend
from hubmcp.context import CallContext
from hubmcp.tools.base import Tool, outputs

EVENT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "project_id": {"type": "string"},
        "kind": {"type": "string"},
        "actor": {"type": "string"},
        "summary": {"type": "string"},
        "payload": {"type": "object"},
        "session_id": {"type": ["string", "null"]},
        "thread_id": {"type": ["string", "null"]},
        "created_at": {"type": "string"},
    },
    "required": ["id", "project_id", "kind", "actor", "summary", "payload", "created_at"],
}
P = TypeVar("P", SignalAppend, QuestionPost)


async def feed_read(call: CallContext, req: FeedRead) -> dict[str, Any]:
    return await call.hub.feed.feed_read(call.caller, req)


async def signal_append(call: CallContext, req: SignalAppend) -> dict[str, Any]:
    return await call.hub.posts.signal_append(call.caller, in_session(call, req))


def in_session(call: CallContext, req: P) -> P:
    """The post with its session: an explicit session id, else the connection's active session
    (set by the session tools)."""
    active = call.sessions.get(call.connection) if call.connection is not None and req.session_id is None else None
    return req if active is None else req.model_copy(update={"session_id": active})


TOOLS = (
    Tool(
        name="feed_read",
        description=(
            "Read a project's feed. Without `since` it continues from your durable cursor and moves it; "
            "`since` reads forward from an event id; `before` pages back and moves nothing."
        ),
        input_model=FeedRead,
        output_schema=outputs(
            {
                "events": {"type": "array", "items": EVENT},
                "next_since": {"type": ["string", "null"], "description": "pass as `since` to continue forward"},
                "next_before": {"type": ["string", "null"], "description": "pass as `before` to page back"},
            },
            ("events",),
        ),
        handler=feed_read,
        read_only=True,
    ),
    Tool(
        name="signal_append",
        description=(
            "Append an event to a project's feed: `signal` (progress), `finished`, `idea` (to the "
            "human's inbox) or `approval` (the human decides; `artifact_id` names a diff to review). "
            "Questions go through question_post."
        ),
        input_model=SignalAppend,
        output_schema=outputs(
            {
                "event_id": {"type": "string"},
                "kind": {"type": "string"},
                "created_at": {"type": "string"},
                "thread_id": {"type": "string"},
                "expires_at": {"type": "string"},
                "on_expiry": {"type": "string"},
            },
            ("event_id",),
        ),
        handler=signal_append,
    ),
)
