"""Bookkeeping written behind: the tool-call record (replay) and sessions' last-activity touches.

No caller waits on either (DESIGN section 2), so neither is written on the request's path: `note`
appends to a buffer in memory and returns at once. A background task (`run`) writes what gathered
once the oldest row has waited `delay` seconds, or at once when `max_rows` rows wait: one command
per brain file holding all of that session's rows in the order noted, then one hub.db command for
every session's touch. One flush runs at a time, so a session's rows land oldest first.

What a `kill -9` can lose: the rows noted during the last `delay` seconds (0.1 s by default) plus
a flush under way; `tests/sessions/test_calllog.py` kills a serving hub to hold that under 200 ms.
A clean stop loses nothing: `run` flushes everything when it is cancelled (the hub cancels
background tasks before it closes the stores). Whoever needs a session's record complete flushes
that session first (`flush(session_id)`): ending, reassigning or pruning it, reading its replay,
forking its brain. A session whose brain is removed has its rows dropped (`discard`).

The buffer is bounded: past `HARD_LIMIT_FACTOR * max_rows` rows (the writers have stalled) new rows
are dropped and counted in `dropped` rather than growing memory without end.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import anyio

from hubcore.errors import HubError

log = logging.getLogger("hubcore.calllog")

DELAY_SECS = 0.1
MAX_ROWS = 2048
HARD_LIMIT_FACTOR = 8
CONCURRENT_BRAINS = 8  # brain files written at once by one flush


@dataclass(frozen=True)
class Call:
    """One tool call as replay shows it: when, which tool, its arguments' summary, its outcome."""

    at: float
    tool: str
    arguments: str
    outcome: str


WriteCalls = Callable[[str, list[Call]], Awaitable[None]]
"""Appends a session's rows to its brain file, in order, in one command."""
WriteTouches = Callable[[dict[str, float]], Awaitable[None]]
"""Moves each session's last activity to the time given, in one hub.db command."""


class CallLog:
    """The write-behind buffer of replay rows and touches, and the policy that flushes it."""

    def __init__(
        self,
        write_calls: WriteCalls,
        write_touches: WriteTouches,
        *,
        delay: float = DELAY_SECS,
        max_rows: int = MAX_ROWS,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._write_calls = write_calls
        self._write_touches = write_touches
        self.delay = delay
        self.max_rows = max_rows
        self._monotonic = monotonic
        self._calls: dict[str, list[Call]] = {}
        self._touches: dict[str, float] = {}
        self._rows = 0
        self._oldest: float | None = None  # when the oldest unwritten row was noted (monotonic)
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

    def take(self, session_id: str, at: float) -> list[Call]:
        """The rows buffered for a session, handed to a write of its brain that records them (in
        its own command, before the call it records), and the session's touch noted for `at`."""
        rows = self._calls.pop(session_id, [])
        self._rows -= len(rows)
        if not self._calls and not self._touches:
            self._oldest = None
        if self._oldest is None:
            self._oldest = self._monotonic()
        self._touches[session_id] = max(at, self._touches.get(session_id, at))
        return rows

    @property
    def pending(self) -> int:
        """Rows noted and not yet handed to a writer."""
        return self._rows

    def due_in(self) -> float | None:
        """Seconds until the buffer is due to be written (0: now); None while it is empty."""
        if self._oldest is None:
            return None
        if self._rows >= self.max_rows:
            return 0.0
        return max(0.0, self._oldest + self.delay - self._monotonic())

    def discard(self, session_id: str) -> None:
        """Drop what is buffered for a session whose brain is being removed."""
        self._rows -= len(self._calls.pop(session_id, []))
        self._touches.pop(session_id, None)
        if not self._calls and not self._touches:
            self._oldest = None

    # -- writing -----------------------------------------------------------------------------------

    async def run(self) -> None:
        """Write the buffer whenever it is due, until cancelled; then write what is left."""
        try:
            while True:
                wait = self.due_in()
                if wait is not None and wait <= 0:
                    await self.flush()
                    continue
                self._wake = wake = anyio.Event()
                if wait is None:
                    await wake.wait()  # the first row sets it
                else:
                    with anyio.move_on_after(wait):
                        await wake.wait()  # a full buffer sets it early
        finally:
            with anyio.CancelScope(shield=True):
                await self.flush()

    async def flush(self, session_id: str | None = None) -> None:
        """Write everything buffered (or only `session_id`'s rows and touch) and return once it
        is committed. Failures are logged, not raised: no caller waits on this bookkeeping."""
        if self._lock is None:
            self._lock = anyio.Lock()
        async with self._lock:
            calls, touches = self._take(session_id)
            if not calls and not touches:
                return
            # A few lanes, each writing its share of the brains one after the other: the same
            # concurrency as a task per brain under a limiter, without a task and a limiter
            # round per brain (with 200 sessions, a flush writes about one brain per call noted).
            pending = list(calls.items())
            async with anyio.create_task_group() as tg:
                for lane in range(min(CONCURRENT_BRAINS, len(pending))):
                    tg.start_soon(self._write_brains, pending[lane::CONCURRENT_BRAINS])
            if touches:
                try:
                    await self._write_touches(touches)
                except Exception:
                    log.exception("writing %d sessions' last activity failed", len(touches))

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

    async def _write_brains(self, share: list[tuple[str, list[Call]]]) -> None:
        for session_id, rows in share:
            try:
                await self._write_calls(session_id, rows)
            except HubError as err:  # a pruned session's file is going away: its record goes too
                log.debug("replay rows of session %s refused: %s", session_id, err.message)
            except Exception:
                log.exception("writing %d replay rows of session %s failed", len(rows), session_id)
