"""`iso`: the one format every time the hub answers with (milliseconds, cut not rounded, `Z`)."""

from __future__ import annotations

import random
from datetime import UTC, datetime

import pytest

from hubcore.clock import iso


@pytest.mark.parametrize(
    ("ts", "text"),
    [
        (0.0, "1970-01-01T00:00:00.000Z"),
        (1_795_000_000.0, "2026-11-18T11:06:40.000Z"),
        (1_795_000_000.9996, "2026-11-18T11:06:40.999Z"),  # cut, never carried into the next second
        (1_795_000_000.0004, "2026-11-18T11:06:40.000Z"),
        (1_795_000_000.123456, "2026-11-18T11:06:40.123Z"),
        (4_102_444_799.999, "2099-12-31T23:59:59.999Z"),
    ],
)
def test_iso_formats_milliseconds_cut_in_utc(ts: float, text: str) -> None:
    assert iso(ts) == text


def test_iso_agrees_with_the_strftime_form_it_replaced() -> None:
    rng = random.Random(27)
    for ts in (rng.uniform(0, 4e9) for _ in range(20_000)):
        dt = datetime.fromtimestamp(ts, tz=UTC)
        assert iso(ts) == dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"
