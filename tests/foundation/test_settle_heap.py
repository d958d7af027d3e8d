"""`settle_heap` (issue 27 part 5): startup's garbage is collected, what is alive is frozen out of
later full collections, full collections come less often, and what is created afterwards is still
collected."""

from __future__ import annotations

import gc
import weakref

from hubhttp.asgi import FULL_COLLECTION_PACE, settle_heap


class Node:
    def __init__(self) -> None:
        self.other: Node | None = None


def a_cycle() -> weakref.ref[Node]:
    a, b = Node(), Node()
    a.other, b.other = b, a
    return weakref.ref(a)


def test_startup_garbage_is_collected_and_the_rest_frozen_then_new_garbage_still_goes() -> None:
    before = a_cycle()  # garbage from "startup"
    kept = Node()
    thresholds = gc.get_threshold()
    try:
        settle_heap(None)  # type: ignore[arg-type]
        assert before() is None  # collected, not frozen for good
        assert gc.get_freeze_count() > 0
        assert gc.is_tracked(kept)
        # full collections paced out; the young generations keep their thresholds
        assert gc.get_threshold() == (thresholds[0], thresholds[1], FULL_COLLECTION_PACE)
        after = a_cycle()
        gc.collect()
        assert after() is None  # what requests leave behind is collected as before
    finally:
        gc.unfreeze()  # this test process starts hub after hub: leave nothing frozen
        gc.set_threshold(*thresholds)
