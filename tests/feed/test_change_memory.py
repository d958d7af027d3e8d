"""The change log's memory is small and bounded: a full ring of changes, with the frames the
streams send, holds well under a kilobyte per change, and appending past the ring's capacity holds
nothing more. (orjson hands back a working buffer of at least 4 KiB for even a short JSON text;
kept in every change, that once grew the hub by 16 MiB under a soak, issue 28 part 4. The log keeps
its frames copied end to end in one buffer, and no change keeps its own.)"""

from __future__ import annotations

import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager

import orjson

from hubcore.services.changes import LOG_CAPACITY, Change, ChangeLog


@contextmanager
def traced() -> Iterator[None]:
    started = not tracemalloc.is_tracing()
    if started:
        tracemalloc.start()
    try:
        yield
    finally:
        if started:
            tracemalloc.stop()


def fill(log: ChangeLog, count: int, start: int = 0) -> None:
    for n in range(start, start + count):
        change = Change("feed", "project-one", f"01JZ{n:022d}", kind="signal", actor="agent")
        assert change.ids == orjson.dumps({"project_id": "project-one", "event_id": f"01JZ{n:022d}"})
        log.append(change)


def test_a_full_change_log_with_rendered_ids_holds_under_a_kilobyte_per_change() -> None:
    with traced():
        before = tracemalloc.get_traced_memory()[0]
        log = ChangeLog(LOG_CAPACITY)
        fill(log, LOG_CAPACITY)
        full = tracemalloc.get_traced_memory()[0] - before
        fill(log, 2 * LOG_CAPACITY, start=LOG_CAPACITY)  # twice round the ring: the old ones are dropped
        later = tracemalloc.get_traced_memory()[0] - before
    assert full < LOG_CAPACITY * 1024, full
    # The byte buffer may hold the frames of changes already gone (up to an eighth of it) and
    # its own spare room: a bounded few percent, never a step per change appended.
    assert later < full * 1.1, (full, later)
    assert log.head == 3 * LOG_CAPACITY and log.since(0) is None
