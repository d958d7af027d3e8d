"""The `notifications` trailer on successful tool results (spec: Tool result trailer).

It rides inside `structuredContent` (DESIGN section 6) and is present only when something is
pending. The drain itself (cursors keyed on actor, one delivery per item) is the attention
service's (`hubcore.services.attention`); this module only attaches what it hands over.
"""

from __future__ import annotations

from typing import Any

from hubmcp.context import CallContext


async def attach_trailer(call: CallContext, result: dict[str, Any]) -> dict[str, Any]:
    service = getattr(call.hub, "attention", None)
    if service is None:
        return result
    drained = await service.drain(call.caller)
    if not drained.items:
        return result
    trailer: dict[str, Any] = {"pending": drained.items}
    if drained.more:
        trailer["more"] = True
    return {**result, "notifications": trailer}
