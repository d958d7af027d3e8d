"""`HUB_TRACEMALLOC`: the serve-time memory tracer's switch and its dumps (hubcli/memtrace.py)."""

from __future__ import annotations

import logging
import tracemalloc

import pytest

from hubcli import memtrace


@pytest.mark.parametrize(("value", "frames"), [("", 0), ("0", 0), ("yes", 0), ("-3", 0), ("5", 5), ("900", 64)])
def test_the_switch_names_the_frames_kept(monkeypatch: pytest.MonkeyPatch, value: str, frames: int) -> None:
    monkeypatch.setenv("HUB_TRACEMALLOC", value)
    assert memtrace.frames() == frames


def test_two_dumps_name_the_holders_then_what_grew(caplog: pytest.LogCaptureFixture) -> None:
    assert not tracemalloc.is_tracing()
    tracemalloc.start(4)
    try:
        dumper = memtrace.Dumper()
        with caplog.at_level(logging.WARNING, logger="hubcli.memtrace"):
            dumper.dump()
            grown = [bytearray(10_000) for _ in range(200)]  # 2 MB from this line
            dumper.dump()
    finally:
        tracemalloc.stop()
    text = caplog.text
    assert "tracemalloc: traced" in text and "SQLite holds" in text and "RssAnon" in text
    assert "tracemalloc holds" in text
    grew = [r.getMessage() for r in caplog.records if r.getMessage().startswith("tracemalloc grew")]
    assert grew and "test_memtrace.py" in grew[0] and len(grown) == 200
