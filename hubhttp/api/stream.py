"""`GET /api/v1/stream`: the freshness stream, as Server-Sent Events.

Messages carry ids only, never content: `event: feed` and `event: inbox` with
`{"project_id": ..., "event_id": ...}`; the client re-reads what changed. A comment line keeps the
connection alive every 15 seconds. The admin token sees every project; an agent token sees only its
visible projects (re-read when a change names a project it has not seen, and about every minute).

A stream costs the writers nothing per change: it reads the notifier's shared change log when it
runs, sends everything since its last turn as one chunk, then rests before its next turn: at least
`COALESCE_SECS`, longer when so many streams are open that together they would take more than
`TURNS_PER_SEC` turns a second. So a busy hub wakes each stream about once a second, not once per
write, and the streams' total cost does not grow with their number. A stream that fell
further behind than the log holds (a reader that stopped reading) gets one `event: refresh`: the
client re-reads everything instead of a backlog. At most `streams_per_token` streams per token are
open at once; past that, 429 `rate_limited`.
"""

from __future__ import annotations

import random
from collections import OrderedDict
from collections.abc import AsyncIterator
from typing import Any

import anyio
from quart import Blueprint, Response, current_app

from hubcore.caller import Caller
from hubcore.hub import Hub
from hubcore.services.changes import Change, ChangeLog, Reader
from hubhttp.context import caller, hub

bp = Blueprint("stream", __name__, url_prefix="/api/v1")

CHUNKS_KEY = "agent_hub.stream_chunks"
KEEPALIVE_SECS = 15.0
VISIBILITY_REFRESH_SECS = 60.0
COALESCE_SECS = 1.0  # the least time between two chunks of one stream
# How many chunks a second all the open streams together may send while writes keep coming: with
# more streams than this, each rests longer, so their total cost stays flat however many open.
TURNS_PER_SEC = 250.0
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
        # Streams opened together must not all re-read together: each waits its own share of
        # the minute (0.75 to 1 of it).
        self._refresh_secs = VISIBILITY_REFRESH_SECS * random.uniform(0.75, 1.0)

    async def load(self) -> None:
        """Read the visible projects now: when the stream opens, so that streams opened together
        do not all read at their first change (which may well be the same change)."""
        if not self._caller.is_admin:
            self._visible = await self._hub.feed.visible_projects(self._caller) or set()
            self._hidden = set()
            self._read_at = anyio.current_time()

    async def allows(self, project_id: str) -> bool:
        if self._caller.is_admin:
            return True
        stale = self._read_at is None or anyio.current_time() - self._read_at >= self._refresh_secs
        if stale or (project_id not in self._visible and project_id not in self._hidden):
            await self.load()
        if project_id in self._visible:
            return True
        self._hidden.add(project_id)
        return False

    async def allowed(self, projects: frozenset[str]) -> frozenset[str] | None:
        """Which of `projects` this stream may hear of; None for all of them (the admin)."""
        if self._caller.is_admin:
            return None
        return frozenset([p for p in projects if await self.allows(p)])


class Chunks:
    """Chunks rendered once and shared by the streams. Streams woken by the same publish take the
    same range of the change log, so a range is rendered once per set of visible projects, not
    once per stream: a stream's turn costs a lookup, whatever the number of changes in it."""

    SIZE = 16  # ranges remembered; streams out of step with the rest just render their own

    def __init__(self, log: ChangeLog) -> None:
        self.log = log  # positions are numbers in this log only
        self._projects: OrderedDict[tuple[int, int], frozenset[str]] = OrderedDict()
        self._chunks: OrderedDict[tuple[int, int, frozenset[str] | None], bytes] = OrderedDict()

    def projects(self, span: tuple[int, int], changes: list[Change]) -> frozenset[str]:
        found = self._projects.get(span)
        if found is None:
            found = self._remember(self._projects, span, frozenset([c.project_id for c in changes]))
        return found

    def render(self, span: tuple[int, int], changes: list[Change], allowed: frozenset[str] | None) -> bytes:
        key = (*span, allowed)
        found = self._chunks.get(key)
        if found is None:
            kept = changes if allowed is None else [c for c in changes if c.project_id in allowed]
            found = self._remember(self._chunks, key, b"".join([sse(c) for c in kept]))
        return found

    def _remember(self, cache: OrderedDict[Any, Any], key: Any, value: Any) -> Any:
        cache[key] = value
        if len(cache) > self.SIZE:
            cache.popitem(last=False)
        return value


def holder(who: Caller) -> str:
    """Whose streams count against one cap: one per token (an agent has one token at a time)."""
    return "admin" if who.is_admin else f"agent:{who.actor}"


async def messages(reader: Reader, visible: Visible, chunks: Chunks) -> AsyncIterator[bytes]:
    with reader:
        yield CONNECTED
        sent_at = anyio.current_time()
        while True:
            await reader.wait(max(0.0, sent_at + KEEPALIVE_SECS - anyio.current_time()))
            if reader.closed:
                return  # the hub is shutting down: end the response so the server can stop
            start = reader.position
            changes = reader.take()
            if changes is None:
                chunk = REFRESH
            elif changes:
                span = (start, reader.position)
                chunk = chunks.render(span, changes, await visible.allowed(chunks.projects(span, changes)))
            else:
                chunk = b""
            if not chunk and anyio.current_time() - sent_at >= KEEPALIVE_SECS:
                chunk = KEEPALIVE
            if chunk:
                yield chunk
                sent_at = anyio.current_time()
            if changes is None or changes:  # let the next changes gather into one chunk
                await reader.pause(max(COALESCE_SECS, reader.streams_open / TURNS_PER_SEC))


@bp.get("/stream")
async def stream() -> Response:
    the_hub, who = hub(), caller()
    reader = the_hub.changes.open_stream(holder(who), the_hub.settings.streams_per_token)
    try:
        visible = Visible(the_hub, who)
        await visible.load()
    except BaseException:
        reader.close()
        raise
    chunks = current_app.extensions.get(CHUNKS_KEY)
    if not isinstance(chunks, Chunks) or chunks.log is not the_hub.changes.log:
        chunks = current_app.extensions[CHUNKS_KEY] = Chunks(the_hub.changes.log)
    response = Response(
        messages(reader, visible, chunks), mimetype="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
    response.timeout = None  # the stream stays open until the client goes away
    return response
