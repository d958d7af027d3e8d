"""Where a call answered from memory lets the event loop take in what has arrived before it goes on.

A brain get whose entry is held on the loop (`hubcore.services.brain_cache`) never waits for a
thread or a store, so without a pause it would run its whole path, from its request's parse to its
reply's send, before the loop read the next request off its sockets. Every other call pauses at
least once (a write at its store's group commit, a read at its thread), and meanwhile the loop
takes in the requests that arrived, so the calls of one busy moment run each part of their path one
after another. Measured served over HTTP (docs/benchmarks.md, "Eleventh session"): a get that
resumes only once the loop has run the I/O callbacks ready after its pause cost the loop about a
tenth less than one that did not pause, in both protocol eras; a plain checkpoint (which resumes
before those callbacks) helped only the 2026-07-28 era, whose calls run in their request's own task.

On asyncio the pause is a timer due at once: the loop runs due timers after its I/O callbacks, and
its poll does not wait for a timer already due, so an idle hub adds no latency. The gets that pause
in one turn share one timer and go on together. On trio (the tests run both) a checkpoint already
resumes after the scheduler's I/O poll.
"""

from __future__ import annotations

import asyncio

import anyio
import anyio.lowlevel


class Intake:
    """One per service whose calls can answer from memory; used on the event loop only."""

    def __init__(self) -> None:
        self._turn: anyio.Event | None = None  # set by the timer the first pause of a turn made

    async def pause(self) -> None:
        """Return once the loop has run the I/O callbacks that are ready now (cancellable)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not asyncio: trio's checkpoint resumes after its I/O poll
            await anyio.lowlevel.checkpoint()
            return
        turn = self._turn
        if turn is None:
            turn = self._turn = anyio.Event()
            loop.call_later(0, self._go_on, turn)
        await turn.wait()

    def _go_on(self, turn: anyio.Event) -> None:
        self._turn = None
        turn.set()
