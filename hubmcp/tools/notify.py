"""`notify_subscribe`, `notify_unsubscribe`, `notify_list`, `notify_wait`."""

from __future__ import annotations

from typing import Any

from hubcore.services.attention import NotifyWait, Subscribe, Unsubscribe
from hubcore.services.requests import NoArguments
from hubmcp.context import CallContext
from hubmcp.tools.base import CAPPED_OUT, Tool, outputs
from hubmcp.waits import capped_wait

# notify_wait's own result: the trailer the other tools' results may carry (the guide describes
# its items once; this schema gives their shape).
PENDING_ITEM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "source": {"enum": ["attention", "subscription"]},
        "kind": {"type": "string"},
        "id": {"type": "string"},
        "project_id": {"type": "string"},
        "title": {"type": "string"},
        "at": {"type": "string"},
        "subscription_id": {"type": "string"},
        "thread_id": {"type": "string"},
        "expired": {"type": "boolean"},
    },
    "required": ["source", "kind", "id", "project_id", "title", "at"],
}
TRAILER: dict[str, Any] = {
    "type": "object",
    "properties": {"pending": {"type": "array", "items": PENDING_ITEM}, "more": {"type": "boolean"}},
    "required": ["pending"],
}
SUBSCRIPTION: dict[str, Any] = {
    "type": "object",
    "properties": {
        "subscription_id": {"type": "string"},
        "kinds": {"type": "array", "items": {"type": "string"}},
        "project_id": {"type": ["string", "null"]},
        "actor": {"type": ["string", "null"]},
        "drop_own": {"type": "boolean"},
        "cursor": {"type": ["string", "null"], "description": "newest event id already delivered or skipped"},
        "created_at": {"type": "string"},
    },
    "required": ["subscription_id", "kinds", "cursor"],
}


async def subscribe(call: CallContext, req: Subscribe) -> dict[str, Any]:
    return await call.hub.attention.subscribe(call.caller, req)


async def unsubscribe(call: CallContext, req: Unsubscribe) -> dict[str, Any]:
    return await call.hub.attention.unsubscribe(call.caller, req)


async def list_subscriptions(call: CallContext, _: NoArguments) -> dict[str, Any]:
    return await call.hub.attention.list(call.caller)


async def wait(call: CallContext, req: NotifyWait) -> dict[str, Any]:
    async def work(seconds: float) -> dict[str, Any]:
        return await call.hub.attention.wait(call.caller, req.model_copy(update={"wait_seconds": seconds}))

    return await capped_wait(call.report_progress, call.waits, req.wait_seconds, work)


TOOLS = (
    Tool(
        name="notify_subscribe",
        description=(
            "Subscribe to new events of some kinds (optionally of one project or actor); each arrives "
            "once in notifications and notify_wait."
        ),
        input_model=Subscribe,
        output_schema=outputs(
            {
                "subscription_id": {"type": "string"},
                "cursor": {"type": ["string", "null"]},
                "kinds": {"type": "array", "items": {"type": "string"}},
                "project_id": {"type": ["string", "null"]},
                "actor": {"type": ["string", "null"]},
                "drop_own": {"type": "boolean"},
            },
            ("subscription_id", "cursor"),
        ),
        handler=subscribe,
    ),
    Tool(
        name="notify_unsubscribe",
        description="Remove one of your subscriptions.",
        input_model=Unsubscribe,
        output_schema=outputs(
            {"subscription_id": {"type": "string"}, "removed": {"type": "boolean"}}, ("subscription_id", "removed")
        ),
        handler=unsubscribe,
    ),
    Tool(
        name="notify_list",
        description="Your subscriptions.",
        input_model=NoArguments,
        output_schema=outputs({"subscriptions": {"type": "array", "items": SUBSCRIPTION}}, ("subscriptions",)),
        handler=list_subscriptions,
        read_only=True,
    ),
    Tool(
        name="notify_wait",
        description=(
            "Wait up to `wait_seconds` for notifications (answered within 55 s, `capped` if cut); they "
            "come in `notifications.pending`, `timed_out` when none came."
        ),
        input_model=NotifyWait,
        output_schema=outputs(
            {
                "timed_out": {"type": "boolean"},
                "notifications": TRAILER,
                **CAPPED_OUT,
                "shutdown": {"type": "boolean", "description": "true when the hub's shutdown cut the wait short"},
            },
            ("timed_out", "notifications"),
        ),
        handler=wait,
        trailer=False,
        waits=True,
    ),
)
