"""Time, injectable so that deadlines, undo windows and staleness are tested without sleeping."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Protocol


class Clock(Protocol):
    def now(self) -> float:
        """Seconds since the epoch (wall clock)."""
        ...


class SystemClock:
    def now(self) -> float:
        return time.time()


class FakeClock:
    """A clock that only moves when told to."""

    def __init__(self, start: float = 1_800_000_000.0) -> None:
        self._now = start

    def now(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        self._now += seconds

    def set(self, when: float) -> None:
        self._now = when


def iso(ts: float) -> str:
    """An ISO 8601 UTC timestamp with millisecond precision: `2026-11-21T14:24:27.123Z`."""
    # isoformat cuts to milliseconds as the format did (no rounding up), at half strftime's cost:
    # every entry and event read formats its times.
    return datetime.fromtimestamp(ts, tz=UTC).isoformat(timespec="milliseconds")[:-6] + "Z"
