"""A replay flush over more sessions than it writes at once (issue 27 part 5, third session): the
brains are written in lanes, each session's rows once and in the order noted, and a session whose
write is refused or fails costs only its own rows. Runs on asyncio and trio."""

from __future__ import annotations

import pytest

from hubcore.errors import HubError
from hubcore.services.calllog import CONCURRENT_BRAINS, Call, CallLog

pytestmark = pytest.mark.anyio

SESSIONS = [f"s{n:02d}" for n in range(3 * CONCURRENT_BRAINS + 1)]
REFUSED, BROKEN = SESSIONS[3], SESSIONS[CONCURRENT_BRAINS + 3]  # in the same lane, with others after them


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


class Brains:
    def __init__(self) -> None:
        self.written: dict[str, list[str]] = {}
        self.touches: list[dict[str, float]] = []
        self.writes = 0

    async def write_calls(self, session_id: str, rows: list[Call]) -> None:
        self.writes += 1
        if session_id == REFUSED:
            raise HubError("not_found", f"session {session_id} not found")
        if session_id == BROKEN:
            raise RuntimeError("disk on fire")
        assert session_id not in self.written, "a session's rows were written twice"
        self.written[session_id] = [row.tool for row in rows]

    async def write_touches(self, touches: dict[str, float]) -> None:
        self.touches.append(dict(touches))


async def test_a_flush_writes_every_session_once_in_order_past_a_failed_one() -> None:
    brains = Brains()
    log = CallLog(brains.write_calls, brains.write_touches, delay=3600.0)
    for turn in range(3):
        for n, sid in enumerate(SESSIONS):
            log.note(sid, Call(at=float(turn * 100 + n), tool=f"t{turn}", arguments="{}", outcome="ok"))

    await log.flush()

    assert brains.writes == len(SESSIONS)
    assert brains.written == {sid: ["t0", "t1", "t2"] for sid in SESSIONS if sid not in (REFUSED, BROKEN)}
    assert brains.touches == [{sid: float(200 + n) for n, sid in enumerate(SESSIONS)}]
    assert log.pending == 0 and log.due_in() is None
    await log.flush()  # nothing left: nothing written again
    assert brains.writes == len(SESSIONS) and len(brains.touches) == 1
