"""`GET /api/v1/stream`: the freshness stream, as Server-Sent Events.

Messages carry ids only, never content: `event: feed` and `event: inbox` with
`{"project_id": ..., "event_id": ...}`, and `event: artifact-live` with `{"artifact_id", "version",
"live_rev"}` when a live artifact version moves; the client re-reads what changed. A comment line keeps the
connection alive every 15 seconds. The admin token sees every project; an agent token sees only its
visible projects (re-read when a change names a project it has not seen, and about every minute).

A stream costs the writers nothing per change: it reads the notifier's shared change log when it
runs and sends everything since its last turn as one chunk. Every turn spends one token of a budget
all streams share (`TurnBudget`: `TURNS_PER_SEC` a second, `TURNS_BANKED` banked): while the hub
is quiet a change goes out at once, and when writes keep coming the streams queue for tokens, each
gathering what arrived while it waited, so their total cost stays flat however many are open. The
human's own streams (the admin token's, at most `streams_per_token`) never queue behind agents'
streams: they spend no tokens. After a chunk a stream rests (the human's `COALESCE_SECS`, an
agent's `AGENT_COALESCE_SECS`), so a burst of writes becomes one chunk. A stream that fell
further behind than the log holds (a reader that stopped reading) gets one `event: refresh`: the
client re-reads everything instead of a backlog. At most `streams_per_token` streams per token are
open at once; past that, 429 `rate_limited`.
"""

from __future__ import annotations

import random
import time
from collections import OrderedDict
from collections.abc import AsyncIterator

from quart import Blueprint, Response, current_app

from hubcore.caller import Caller
from hubcore.hub import Hub
from hubcore.services.changes import ChangeLog, Reader, Span
from hubhttp.context import caller, hub

bp = Blueprint("stream", __name__, url_prefix="/api/v1")

CHUNKS_KEY = "agent_hub.stream_chunks"
KEEPALIVE_SECS = 15.0
VISIBILITY_REFRESH_SECS = 60.0
COALESCE_SECS = 0.05  # the least time between two chunks of the human's stream: a burst is one chunk
AGENT_COALESCE_SECS = 1.0  # the same for an agent's stream: agents wait with inbox_wait, not here
# How many chunks a second all the open streams together may send while writes keep coming: with
# more streams than this, each waits longer for its turn, so their total cost stays flat however
# many are open.
TURNS_PER_SEC = 250.0
# Turns a quiet hub banks (a second's worth): agents' streams wake at once after a quiet spell, and
# a hub that keeps changing pays no more than the rate. (The human's streams spend no tokens.)
TURNS_BANKED = TURNS_PER_SEC
BUDGET_KEY = "agent_hub.stream_budget"
# The streams' own clock, for their intervals only (rests, keep-alive, budget, visibility): a turn
# reads it several times, and `anyio.current_time()` first works out which async library runs, which
# made it the costliest call of a turn with 500 streams open (docs/benchmarks.md, "Third session:
# stream fan-out"). The same clock as asyncio's loop.
clock = time.monotonic
CONNECTED = b": connected\n\n"
KEEPALIVE = b": keep-alive\n\n"
REFRESH = b"event: refresh\ndata: {}\n\n"


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
            self._read_at = clock()

    async def allows(self, project_id: str) -> bool:
        if self._caller.is_admin:
            return True
        stale = self._read_at is None or clock() - self._read_at >= self._refresh_secs
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
    """Chunks filtered for streams that may see some of a span's projects and not others, kept
    for the streams that take the same span. A change's SSE frame is encoded once, when the change
    log takes it, and a span carries its frames already end to end, so a stream that may see
    every project its span names sends the span's bytes as they are."""

    SIZE = 16  # spans remembered; streams out of step with the rest just filter their own

    def __init__(self, log: ChangeLog) -> None:
        self.log = log  # positions are numbers in this log only
        self._chunks: OrderedDict[tuple[int, int, frozenset[str]], bytes] = OrderedDict()

    def render(self, span: Span, allowed: frozenset[str] | None) -> bytes | None:
        """The SSE text of the changes in `span` that name a project in `allowed` (None: all);
        None when the log has already overwritten changes a filter needed (the stream refreshes)."""
        if allowed is None or span.projects <= allowed:
            return span.data  # sees all of it: the same chunk as the admin's
        if not span.projects & allowed:
            return b""
        key = (span.start, span.end, allowed)
        found = self._chunks.get(key)
        if found is None:
            found = self.log.filtered(span.start, span.end, allowed)
            if found is None:
                return None
            self._chunks[key] = found
            if len(self._chunks) > self.SIZE:
                self._chunks.popitem(last=False)
        return found


class TurnBudget:
    """A token bucket shared by every stream: `rate` turns a second, up to `banked` saved. A turn
    taken in debt waits until the bucket has refilled past it, so waiting streams queue in order,
    each behind the ones before it, and the streams' turns never exceed `rate` a second for long."""

    def __init__(self, log: ChangeLog, rate: float = TURNS_PER_SEC, banked: float = TURNS_BANKED) -> None:
        self.log = log  # one budget per hub (per change log)
        self.rate, self.banked = rate, banked
        self._tokens = banked
        self._at = clock()

    def take(self) -> float:
        """Spend one turn; the seconds to wait before using it (0 when one was banked)."""
        now = clock()
        self._tokens = min(self.banked, self._tokens + (now - self._at) * self.rate) - 1.0
        self._at = now
        return 0.0 if self._tokens >= 0 else -self._tokens / self.rate


def holder(who: Caller) -> str:
    """Whose streams count against one cap: one per token (an agent has one token at a time)."""
    return "admin" if who.is_admin else f"agent:{who.actor}"


async def messages(
    reader: Reader, visible: Visible, chunks: Chunks, budget: TurnBudget | None, rest: float
) -> AsyncIterator[bytes]:
    with reader:
        yield CONNECTED
        sent_at = clock()
        queued = False  # this stream already holds its budget turn for the changes waiting
        while True:
            await reader.wait(max(0.0, sent_at + KEEPALIVE_SECS - clock()))
            if reader.closed:
                return  # the hub is shutting down: end the response so the server can stop
            if reader.pending and budget is not None and not queued:
                delay = budget.take()
                if delay > 0:
                    await reader.pause(delay)  # what arrives meanwhile joins this turn's chunk
                    if reader.closed:
                        return
            queued = False
            span = reader.take()
            chunk: bytes | None = b""
            if span is not None and span.count:
                chunk = chunks.render(span, await visible.allowed(span.projects))
            if span is None or chunk is None:  # fell behind the ring, or it wrapped past what a filter needed
                chunk, span = REFRESH, None
            now = clock()
            if not chunk and now - sent_at >= KEEPALIVE_SECS:
                chunk = KEEPALIVE
            if chunk:
                yield chunk
                sent_at = now
            if span is None or span.count:  # let the next changes of a burst gather into one chunk
                delay = rest
                if budget is not None and reader.pending:
                    # Changes already wait: queue for the next turn while resting, one pause
                    # instead of two (a turn's pauses were half of what 500 streams cost).
                    delay, queued = max(rest, budget.take()), True
                await reader.pause(delay)


def paced(reader: Reader, visible: Visible, chunks: Chunks, budget: TurnBudget, who: Caller) -> AsyncIterator[bytes]:
    """The human's streams spend no turns and rest briefly; agents' streams share the budget."""
    if who.is_admin:
        return messages(reader, visible, chunks, None, COALESCE_SECS)
    return messages(reader, visible, chunks, budget, AGENT_COALESCE_SECS)


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
    log = the_hub.changes.log
    chunks = current_app.extensions.get(CHUNKS_KEY)
    if not isinstance(chunks, Chunks) or chunks.log is not log:
        chunks = current_app.extensions[CHUNKS_KEY] = Chunks(log)
    budget = current_app.extensions.get(BUDGET_KEY)
    if not isinstance(budget, TurnBudget) or budget.log is not log:
        budget = current_app.extensions[BUDGET_KEY] = TurnBudget(log)
    response = Response(
        paced(reader, visible, chunks, budget, who),
        mimetype="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
    response.timeout = None  # the stream stays open until the client goes away
    return response
