"""Questions, answers and the inbox: thin adapters over the posts, questions and inbox services."""

from __future__ import annotations

from typing import Any

from hubcore.services.inbox import InboxRead, InboxWait
from hubcore.services.posts import QuestionPost
from hubcore.services.resolutions import AnswerPost
from hubmcp.context import CallContext
from hubmcp.tools.base import CAPPED_OUT, Tool, outputs
from hubmcp.tools.feed import in_session
from hubmcp.waits import capped_wait

ITEM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "event_id": {"type": "string"},
        "project_id": {"type": "string"},
        "project_display_name": {"type": ["string", "null"]},
        "kind": {"type": "string"},
        "actor": {"type": "string"},
        "summary": {"type": "string"},
        "payload": {"type": "object"},
        "status": {"enum": ["unread", "read", "waiting", "resolved"]},
        "created_at": {"type": "string"},
        "updated_at": {"type": "string"},
        "answer": {"type": ["object", "null"]},
        "decision": {"type": ["object", "null"]},
        "expires_at": {"type": ["string", "null"]},
        "on_expiry": {"type": ["string", "null"]},
        "expired": {"type": "boolean"},
        "delivered_at": {"type": ["string", "null"]},  # when the resolution reached the asker
        "actor_seen_at": {"type": ["string", "null"]},
    },
    "required": ["event_id", "project_id", "kind", "status"],
}


async def question_post(call: CallContext, req: QuestionPost) -> dict[str, Any]:
    result = await call.hub.posts.question_post(call.caller, in_session(call, req))
    result.setdefault("question_id", result["event_id"])
    result.setdefault("thread_id", result["event_id"])
    return result


async def answer_post(call: CallContext, req: AnswerPost) -> dict[str, Any]:
    result = await call.hub.resolutions.answer(call.caller, req)
    return {**result, "question_id": req.question_id}


async def inbox_read(call: CallContext, req: InboxRead) -> dict[str, Any]:
    return await call.hub.inbox.inbox_read(call.caller, req)


async def inbox_wait(call: CallContext, req: InboxWait) -> dict[str, Any]:
    async def work(seconds: float) -> dict[str, Any]:
        return await call.hub.inbox.wait(call.caller, req.model_copy(update={"wait_seconds": seconds}))

    return await capped_wait(call.report_progress, call.waits, req.wait_seconds, work)


TOOLS = (
    Tool(
        name="question_post",
        description=(
            "Ask the human a question (2-6 `options` for a pick, or a typed `form`: the answer then "
            "carries `value`). The answer arrives in a later result's notifications, or wait for it "
            "with inbox_wait."
        ),
        input_model=QuestionPost,
        output_schema=outputs(
            {
                "event_id": {"type": "string"},
                "question_id": {"type": "string"},
                "thread_id": {"type": "string"},
                "kind": {"type": "string"},
                "created_at": {"type": "string"},
                "expires_at": {"type": "string"},
            },
            ("event_id", "question_id", "thread_id"),
        ),
        handler=question_post,
    ),
    Tool(
        name="answer_post",
        description=("Answer an open question (a form question takes `value`); the answer closes it."),
        input_model=AnswerPost,
        output_schema=outputs({"event_id": {"type": "string"}, "question_id": {"type": "string"}}, ("event_id",)),
        handler=answer_post,
    ),
    Tool(
        name="inbox_read",
        description=(
            "The human's inbox in your projects: questions, approvals and ideas with their status; "
            "continue with `since` = `next_since`."
        ),
        input_model=InboxRead,
        output_schema=outputs(
            {
                "items": {"type": "array", "items": ITEM},
                "next_since": {"type": ["string", "null"]},
            },
            ("items",),
        ),
        handler=inbox_read,
        read_only=True,
    ),
    Tool(
        name="inbox_wait",
        description=(
            "Wait up to `wait_seconds` for your questions and approvals to resolve (answered within 55 "
            "s, `capped` if cut); `timed_out` when none did, `shutdown`: call again later."
        ),
        input_model=InboxWait,
        output_schema=outputs(
            {
                "items": {"type": "array", "items": ITEM},
                "next_since": {"type": ["string", "null"]},
                "timed_out": {"type": "boolean"},
                **CAPPED_OUT,
                "shutdown": {"type": "boolean", "description": "true when the hub's shutdown cut the wait short"},
            },
            ("items", "timed_out"),
        ),
        handler=inbox_wait,
        read_only=True,
        waits=True,
    ),
)
