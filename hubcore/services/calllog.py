"""Bookkeeping written behind: the tool-call record (replay) and sessions' last-activity touches.

No caller waits on either (DESIGN section 2), so neither is written on the request's path: `note`
appends to a buffer in memory and returns at once. A background task (`run`) stages what gathered
once the oldest row has waited `delay` seconds, or at once when `max_rows` rows wait: one hub.db
command holding every session's rows (in the order noted) and every session's touch, batched with
the hub's other writes. Every `move_every` seconds, or once `move_rows` rows are staged, the staged
rows are moved into each session's brain file in bulk (`hubcore.services.callstage`): one brain
command per session with rows, not one per session per `delay`. Staged rows are as safe as moved
ones, so moves are rare: each costs every busy session a command on the brain writer's thread,
which the brain writes queue behind (moving every 3 s cost brain_put about a tenth of its rate
with 200 busy sessions, docs/benchmarks.md).

What a `kill -9` can lose: the rows noted during the last `delay` seconds (0.1 s by default) plus
a staging command under way; staged rows are in hub.db and the next start moves them
(`tests/sessions/test_calllog_e2e.py` kills a serving hub to hold that under 200 ms). A clean stop
loses nothing and leaves nothing staged: `run` stages and moves everything when it is cancelled
(the hub cancels background tasks before it closes the stores). Whoever needs a session's record
complete flushes that session first (`flush(session_id)`: its buffered rows staged, then its staged
rows moved): ending, reassigning or pruning it, reading its replay, forking its brain. A session
whose brain is removed has its rows dropped, buffered and staged (`discard`).

The buffer is bounded: past `HARD_LIMIT_FACTOR * max_rows` rows (the writers have stalled) new rows
are dropped and counted in `dropped` rather than growing memory without end.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import anyio

log = logging.getLogger("hubcore.calllog")

DELAY_SECS = 0.1
MOVE_SECS = 30.0
MOVE_ROWS = 16_384  # staged rows that make a move due at once (hub.db's staging table stays small)
MAX_ROWS = 2048
HARD_LIMIT_FACTOR = 8


@dataclass(frozen=True)
class Call:
    """One tool call as replay shows it: when, which tool, its arguments' summary, its outcome."""

    at: float
    tool: str
    arguments: str
    outcome: str


Stage = Callable[[dict[str, list[Call]], dict[str, float]], Awaitable[None]]
"""Stages every session's rows (in order) and moves each session's last activity to the time given,
in one hub.db command."""
Move = Callable[[str | None], Awaitable[object]]
"""Moves the staged rows (of every session, or of the one named) into their brains."""
Drop = Callable[[str], Awaitable[None]]
"""Drops a session's staged rows (its brain is being removed)."""


class CallLog:
    """The write-behind buffer of replay rows and touches, and the policy that stages and moves it."""

    def __init__(
        self,
        stage: Stage,
        move: Move,
        drop: Drop,
        *,
        delay: float = DELAY_SECS,
        move_every: float = MOVE_SECS,
        move_rows: int = MOVE_ROWS,
        max_rows: int = MAX_ROWS,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._stage = stage
        self._move = move
        self._drop = drop
        self.delay = delay
        self.move_every = move_every
        self.move_rows = move_rows
        self.max_rows = max_rows
        self._monotonic = monotonic
        self._calls: dict[str, list[Call]] = {}
        self._touches: dict[str, float] = {}
        self._rows = 0
        self._oldest: float | None = None  # when the oldest unstaged row was noted (monotonic)
        # When the oldest row staged and not yet moved was staged; at start, now: a restart after a
        # kill may find rows staged by the process before (moved at the first due move).
        self._unmoved: float | None = monotonic()
        self._staged = 0  # rows staged since the last move of every session's
        self._wake: anyio.Event | None = None
        self._lock: anyio.Lock | None = None
        self.dropped = 0

    # -- noting ------------------------------------------------------------------------------------

    def note(self, session_id: str, call: Call) -> None:
        """Buffer one call made in `session_id` (and its touch); never waits, never raises."""
        if self._rows >= HARD_LIMIT_FACTOR * self.max_rows:
            self.dropped += 1
            if self.dropped == 1 or self.dropped % 1000 == 0:
                log.warning("replay buffer full (%d rows unwritten): %d calls not recorded", self._rows, self.dropped)
            return
        if self._oldest is None:
            self._oldest = self._monotonic()
        self._calls.setdefault(session_id, []).append(call)
        self._touches[session_id] = max(call.at, self._touches.get(session_id, call.at))
        self._rows += 1
        if (self._rows == 1 or self._rows >= self.max_rows) and self._wake is not None:
            self._wake.set()

    @property
    def pending(self) -> int:
        """Rows noted and not yet staged."""
        return self._rows

    def due_in(self) -> float | None:
        """Seconds until the buffer is due to be staged (0: now); None while it is empty."""
        if self._oldest is None:
            return None
        if self._rows >= self.max_rows:
            return 0.0
        return max(0.0, self._oldest + self.delay - self._monotonic())

    def move_due_in(self) -> float | None:
        """Seconds until the staged rows are due to be moved (0: now); None while none are staged."""
        if self._unmoved is None:
            return None
        if self._staged >= self.move_rows:
            return 0.0
        return max(0.0, self._unmoved + self.move_every - self._monotonic())

    async def discard(self, session_id: str) -> None:
        """Drop what is buffered and staged for a session whose brain is being removed (after any
        move under way, so none lands in the file after it goes)."""
        async with self._locked():
            self._rows -= len(self._calls.pop(session_id, []))
            self._touches.pop(session_id, None)
            if not self._calls and not self._touches:
                self._oldest = None
            await self._drop(session_id)

    # -- writing -----------------------------------------------------------------------------------

    async def run(self) -> None:
        """Stage the buffer and move the staged rows whenever due, until cancelled; then stage and
        move what is left."""
        try:
            while True:
                stage, move = self.due_in(), self.move_due_in()
                if stage is not None and stage <= 0:
                    async with self._locked():
                        await self._stage_taken(None)
                    continue
                if move is not None and move <= 0:
                    async with self._locked():
                        await self._move_all(None)
                    continue
                self._wake = wake = anyio.Event()
                waits = [w for w in (stage, move) if w is not None]
                if not waits:
                    await wake.wait()  # the first row sets it
                else:
                    with anyio.move_on_after(min(waits)):
                        await wake.wait()  # a full buffer sets it early
        finally:
            with anyio.CancelScope(shield=True):
                await self.flush()

    async def flush(self, session_id: str | None = None) -> None:
        """Stage and move everything noted (or only `session_id`'s rows and touch) and return
        once it is in the brains. Failures are logged, not raised: no caller waits on this
        bookkeeping."""
        async with self._locked():
            await self._stage_taken(session_id)
            await self._move_all(session_id)

    def exclusive(self) -> anyio.Lock:
        """The lock every staging and move holds: whoever holds it sees no row staged or moved
        meanwhile (with `stage_held`, a caller writing a session's record itself)."""
        return self._locked()

    async def stage_held(self, session_id: str | None) -> None:
        """Stage what is buffered (or `session_id`'s), the lock held (`exclusive`)."""
        await self._stage_taken(session_id)

    def _locked(self) -> anyio.Lock:
        if self._lock is None:
            self._lock = anyio.Lock()
        return self._lock

    async def _stage_taken(self, session_id: str | None) -> None:
        calls, touches = self._take(session_id)
        if not calls and not touches:
            return
        try:
            await self._stage(calls, touches)
        except Exception:
            log.exception("staging %d sessions' replay rows and last activity failed", len(touches))
            return
        if calls and self._unmoved is None:
            self._unmoved = self._monotonic()
        self._staged += sum(map(len, calls.values()))

    async def _move_all(self, session_id: str | None) -> None:
        try:
            await self._move(session_id)
        except Exception:
            log.exception("moving staged replay rows into the brains failed")
            self._unmoved = self._monotonic()  # tried again a move's time later, not at once
            self._staged = 0
            return
        if session_id is None:
            self._unmoved, self._staged = None, 0

    def _take(self, session_id: str | None) -> tuple[dict[str, list[Call]], dict[str, float]]:
        if session_id is None:
            calls, touches = self._calls, self._touches
            self._calls, self._touches, self._rows, self._oldest = {}, {}, 0, None
            return calls, touches
        rows = self._calls.pop(session_id, None)
        touch = self._touches.pop(session_id, None)
        self._rows -= len(rows or ())
        if not self._calls and not self._touches:
            self._oldest = None
        return ({session_id: rows} if rows else {}), ({session_id: touch} if touch is not None else {})
