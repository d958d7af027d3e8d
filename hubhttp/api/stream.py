"""`GET /api/v1/stream`: the freshness stream, as Server-Sent Events.

Messages carry ids only, never content: `event: feed` and `event: inbox` with
`{"project_id": ..., "event_id": ...}`; the client re-reads what changed. A comment line keeps the
connection alive every 15 seconds. The admin token sees every project; an agent token sees only its
visible projects (re-read when a change names a project it has not seen, and every minute).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import orjson
from quart import Blueprint, Response

from hubcore.caller import Caller
from hubcore.hub import Hub
from hubcore.services.notifier import Change
from hubhttp.context import caller, hub

bp = Blueprint("stream", __name__, url_prefix="/api/v1")

KEEPALIVE_SECS = 15.0
VISIBILITY_REFRESH_SECS = 60.0


def sse(change: Change) -> bytes:
    data = orjson.dumps({"project_id": change.project_id, "event_id": change.event_id})
    return b"event: " + change.topic.encode() + b"\ndata: " + data + b"\n\n"


class Visible:
    """The projects one stream may hear of. The admin hears of every project; an agent's visible
    set is re-read every minute and when a change names a project it has never judged, so a busy
    project it cannot see costs no read per change."""

    def __init__(self, the_hub: Hub, who: Caller) -> None:
        self._hub, self._caller = the_hub, who
        self._visible: set[str] = set()
        self._hidden: set[str] = set()
        self._read_at: float | None = None

    async def allows(self, project_id: str) -> bool:
        if self._caller.is_admin:
            return True
        stale = self._read_at is None or anyio.current_time() - self._read_at >= VISIBILITY_REFRESH_SECS
        if stale or (project_id not in self._visible and project_id not in self._hidden):
            self._visible = await self._hub.feed.visible_projects(self._caller) or set()
            self._hidden = set()
            self._read_at = anyio.current_time()
        if project_id in self._visible:
            return True
        self._hidden.add(project_id)
        return False


async def messages(the_hub: Hub, who: Caller) -> AsyncIterator[bytes]:
    visible = Visible(the_hub, who)
    with the_hub.notifier.subscribe() as subscription:
        yield b": connected\n\n"
        while True:
            with anyio.move_on_after(KEEPALIVE_SECS):
                await subscription.wait()
            if subscription.closed:
                return  # the hub is shutting down: end the response so the server can stop
            changes = subscription.drain()
            if not changes:
                yield b": keep-alive\n\n"
                continue
            chunk = b"".join([sse(c) for c in changes if await visible.allows(c.project_id)])
            if chunk:
                yield chunk


@bp.get("/stream")
async def stream() -> Response:
    response = Response(
        messages(hub(), caller()), mimetype="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
    response.timeout = None  # the stream stays open until the client goes away
    return response
