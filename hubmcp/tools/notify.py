"""`notify_subscribe`, `notify_unsubscribe`, `notify_list`, `notify_wait`."""

from __future__ import annotations

from typing import Any

from hubcore.services.attention import NotifyWait, Subscribe, Unsubscribe
from hubcore.services.requests import NoArguments
from hubmcp.context import CallContext
from hubmcp.tools.base import CAPPED_OUT, TRAILER, Tool, outputs
from hubmcp.waits import capped_wait

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
        title="Subscribe to events",
        description=(
            "Register a standing interest: from now on, new events of the given kinds (optionally in "
            "one project, optionally only by one actor, optionally dropping your own) arrive in the "
            "`notifications` of your tool results and through notify_wait, each once. The cursor "
            "starts at the newest matching event, so nothing old is replayed."
        ),
        input_model=Subscribe,
        output_schema=outputs({
            "subscription_id": {"type": "string"}, "cursor": {"type": ["string", "null"]},
            "kinds": {"type": "array", "items": {"type": "string"}}, "project_id": {"type": ["string", "null"]},
            "actor": {"type": ["string", "null"]}, "drop_own": {"type": "boolean"},
        }, ("subscription_id", "cursor")),
        handler=subscribe,
    ),
    Tool(
        name="notify_unsubscribe",
        title="Remove a subscription",
        description="Remove one of your subscriptions by subscription_id (another agent's is not_found).",
        input_model=Unsubscribe,
        output_schema=outputs({"subscription_id": {"type": "string"}, "removed": {"type": "boolean"}},
                              ("subscription_id", "removed")),
        handler=unsubscribe,
    ),
    Tool(
        name="notify_list",
        title="List your subscriptions",
        description="Your subscriptions with their ids, kinds, scope and delivery cursor.",
        input_model=NoArguments,
        output_schema=outputs({"subscriptions": {"type": "array", "items": SUBSCRIPTION}}, ("subscriptions",)),
        handler=list_subscriptions,
        read_only=True,
    ),
    Tool(
        name="notify_wait",
        title="Wait for notifications",
        description=(
            "Block until something is pending for you (an answer or decision on your own questions "
            "and approvals, or an event matching a subscription), up to `wait_seconds` (default 30, "
            "at most 60; 0 checks once; the hub answers within 55 seconds whatever is asked and says "
            "`capped: true` when it cut the wait; with a progress token it sends progress every 15 "
            "seconds). Returns the items in `notifications.pending`, each delivered "
            "once; `timed_out` is true when nothing came. If the hub shuts down meanwhile it answers "
            "at once, empty, with `shutdown: true`: call again once the hub is back."
        ),
        input_model=NotifyWait,
        output_schema=outputs({
            "timed_out": {"type": "boolean"}, "notifications": TRAILER, **CAPPED_OUT,
            "shutdown": {"type": "boolean", "description": "true when the hub's shutdown cut the wait short"},
        }, ("timed_out", "notifications")),
        handler=wait,
        trailer=False,
        waits=True,
    ),
)
