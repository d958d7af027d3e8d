"""Waits that fit the MCP clients' clocks (DESIGN section 6).

The common MCP clients give up on a request after 60 seconds, so a wait answers within `cap`
seconds (55) whatever was asked, and its result says so (`capped: true`, `wait_seconds: 55`). While it waits it sends
`notifications/progress` every `progress_every` seconds (15) when the request carried a progress
token, which also tells clients that reset their timeout on progress that the hub is alive.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import anyio

log = logging.getLogger("hubmcp")

# Sends one progress notification for the current request: (progress, total, message).
Report = Callable[[float, "float | None", "str | None"], Awaitable[None]]


@dataclass(frozen=True)
class WaitPolicy:
    cap: float = 55.0
    progress_every: float = 15.0


async def capped_wait(
    report: Report | None, policy: WaitPolicy, asked: float, work: Callable[[float], Awaitable[dict[str, Any]]]
) -> dict[str, Any]:
    """Run `work(seconds)` with the wait cut to the cap, reporting progress while it runs."""
    seconds = min(float(asked), policy.cap)
    if report is None or seconds <= 0:
        result = await work(seconds)
    else:
        result = await _with_progress(report, policy.progress_every, seconds, work)
    if asked > seconds:
        result = {**result, "capped": True, "wait_seconds": seconds}
    return result


async def _with_progress(
    report: Report, every: float, seconds: float, work: Callable[[float], Awaitable[dict[str, Any]]]
) -> dict[str, Any]:
    async def tick() -> None:
        started = anyio.current_time()
        try:
            while True:
                await anyio.sleep(every)
                elapsed = min(anyio.current_time() - started, seconds)
                await report(elapsed, seconds, "waiting")
        except Exception:  # a client gone mid-wait: the wait's own answer still goes out (or not)
            log.debug("progress notification failed", exc_info=True)

    async with anyio.create_task_group() as tg:
        tg.start_soon(tick)
        result = await work(seconds)
        tg.cancel_scope.cancel()
    return result
