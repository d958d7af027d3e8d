"""Background work repeated on an interval, surviving its own failures.

A sweeper that raised once would be gone for the rest of the process, and the state it keeps tidy
(due deadlines, abandoned enrolment requests) would pile up unseen: so a failure is logged and the
work runs again at the next tick; cancellation still ends it.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

import anyio


async def repeat(work: Callable[[], Awaitable[object]], interval: float, what: str, log: logging.Logger) -> None:
    """Run `work` now and then every `interval` seconds until cancelled; a failure is logged
    (naming `what`) and retried at the next tick."""
    while True:
        try:
            await work()
        except anyio.get_cancelled_exc_class():
            raise
        except Exception:
            log.exception("%s failed; retrying in %.0f s", what, interval)
        await anyio.sleep(interval)
