"""`GET /api/v1/stream`: the freshness stream, as Server-Sent Events.

Messages carry ids only, never content: `event: feed` and `event: inbox` with
`{"project_id": ..., "event_id": ...}`; the client re-reads what changed. A comment line keeps the
connection alive every 15 seconds. The admin token sees every project; an agent token sees only its
visible projects (re-read when a change names a project it has not seen, and every minute).

A stream costs the writers nothing per change: it reads the notifier's shared change log when it
runs, sends everything since its last turn as one chunk, then rests `COALESCE_SECS` before its next
turn, so a busy hub wakes each stream a few times a second, not once per write. A stream that fell
further behind than the log holds (a reader that stopped reading) gets one `event: refresh`: the
client re-reads everything instead of a backlog. At most `streams_per_token` streams per token are
open at once; past that, 429 `rate_limited`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
from quart import Blueprint, Response

from hubcore.caller import Caller
from hubcore.hub import Hub
from hubcore.services.notifier import Change, Reader
from hubhttp.context import caller, hub

bp = Blueprint("stream", __name__, url_prefix="/api/v1")

KEEPALIVE_SECS = 15.0
VISIBILITY_REFRESH_SECS = 60.0
COALESCE_SECS = 0.5  # the least time between two chunks of one stream
CONNECTED = b": connected\n\n"
KEEPALIVE = b": keep-alive\n\n"
REFRESH = b"event: refresh\ndata: {}\n\n"
_EVENT_PREFIX = {"feed": b"event: feed\ndata: ", "inbox": b"event: inbox\ndata: "}


def sse(change: Change) -> bytes:
    return _EVENT_PREFIX[change.topic] + change.ids + b"\n\n"


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

    async def chunk(self, changes: list[Change]) -> bytes:
        """The SSE messages of the changes this stream may hear of, as one chunk. Each project
        is judged once per chunk, however many changes name it."""
        if self._caller.is_admin:
            return b"".join([sse(c) for c in changes])
        allowed = {p for p in {c.project_id for c in changes} if await self.allows(p)}
        return b"".join([sse(c) for c in changes if c.project_id in allowed])


def holder(who: Caller) -> str:
    """Whose streams count against one cap: one per token (an agent has one token at a time)."""
    return "admin" if who.is_admin else f"agent:{who.actor}"


async def messages(the_hub: Hub, who: Caller, reader: Reader) -> AsyncIterator[bytes]:
    visible = Visible(the_hub, who)
    with reader:
        yield CONNECTED
        sent_at = anyio.current_time()
        while True:
            await reader.wait(max(0.0, sent_at + KEEPALIVE_SECS - anyio.current_time()))
            if reader.closed:
                return  # the hub is shutting down: end the response so the server can stop
            changes = reader.take()
            chunk = REFRESH if changes is None else await visible.chunk(changes)
            if not chunk and anyio.current_time() - sent_at >= KEEPALIVE_SECS:
                chunk = KEEPALIVE
            if chunk:
                yield chunk
                sent_at = anyio.current_time()
            if changes is None or changes:
                await reader.pause(COALESCE_SECS)  # let the next changes gather into one chunk


@bp.get("/stream")
async def stream() -> Response:
    the_hub, who = hub(), caller()
    reader = the_hub.notifier.open_stream(holder(who), the_hub.settings.streams_per_token)
    response = Response(
        messages(the_hub, who, reader), mimetype="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
    response.timeout = None  # the stream stays open until the client goes away
    return response
