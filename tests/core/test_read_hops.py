"""Reads that share a worker-thread hop (hubcore.store.hops, issue 27 part 5): every read gets its
own answer or its own error, reads that arrive during a hop share the next one, and a caller
cancelled while waiting or while leading leaves no read without a hop. Runs on asyncio and trio."""

from __future__ import annotations

import threading

import anyio
import pytest

from hubcore.store.hops import ReadHops

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


class Gate:
    """A job that blocks its worker thread until released, and records which thread ran what."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.started = threading.Event()
        self.threads: dict[int, int] = {}

    def job(self, n: int, *, hold: bool = False, fail: bool = False) -> int:
        self.threads[n] = threading.get_ident()
        if hold:
            self.started.set()
            self.release.wait(10)
        if fail:
            raise ValueError(f"read {n} failed")
        return n * 10


async def test_each_read_gets_its_own_answer_or_error() -> None:
    hops, gate = ReadHops(1), Gate()
    limiter = anyio.CapacityLimiter(4)
    answers: dict[int, object] = {}

    async def read(n: int) -> None:
        try:
            answers[n] = await hops.run(lambda: gate.job(n, fail=n == 3), limiter)
        except ValueError as err:
            answers[n] = str(err)

    async with anyio.create_task_group() as tg:
        for n in range(6):
            tg.start_soon(read, n)
    assert answers == {0: 0, 1: 10, 2: 20, 3: "read 3 failed", 4: 40, 5: 50}


async def test_reads_arriving_during_a_hop_share_the_next_one() -> None:
    hops, gate = ReadHops(1), Gate()
    limiter = anyio.CapacityLimiter(4)
    answers: dict[int, int] = {}

    async def read(n: int, hold: bool = False) -> None:
        answers[n] = await hops.run(lambda: gate.job(n, hold=hold), limiter)

    async with anyio.create_task_group() as tg:
        tg.start_soon(read, 0, True)  # the first hop, held on its thread
        await anyio.to_thread.run_sync(gate.started.wait, 10)
        for n in range(1, 5):
            tg.start_soon(read, n)
        await anyio.sleep(0.05)
        assert answers == {}  # they wait for the hop under way
        gate.release.set()
    assert answers == {0: 0, 1: 10, 2: 20, 3: 30, 4: 40}
    assert len({gate.threads[n] for n in range(1, 5)}) == 1  # one hop ran the four of them


async def test_a_cancelled_waiter_is_withdrawn_and_the_others_still_run() -> None:
    hops, gate = ReadHops(1), Gate()
    limiter = anyio.CapacityLimiter(4)
    answers: dict[int, int] = {}

    async def read(n: int, hold: bool = False) -> None:
        answers[n] = await hops.run(lambda: gate.job(n, hold=hold), limiter)

    async with anyio.create_task_group() as tg:
        tg.start_soon(read, 0, True)
        await anyio.to_thread.run_sync(gate.started.wait, 10)
        with anyio.move_on_after(0.05):
            await read(1)  # waits for the held hop, then gives up
        tg.start_soon(read, 2)
        await anyio.sleep(0.01)
        gate.release.set()
    assert answers == {0: 0, 2: 20}
    assert 1 not in gate.threads  # withdrawn: never run


async def test_a_cancelled_leader_still_answers_its_batch_and_hands_the_lead_on() -> None:
    hops, gate = ReadHops(1), Gate()
    limiter = anyio.CapacityLimiter(4)
    answers: dict[int, int] = {}

    async def read(n: int, hold: bool = False) -> None:
        answers[n] = await hops.run(lambda: gate.job(n, hold=hold), limiter)

    async with anyio.create_task_group() as tg:
        async with anyio.create_task_group() as leader:
            leader.start_soon(read, 0, True)
            await anyio.to_thread.run_sync(gate.started.wait, 10)
            tg.start_soon(read, 1)  # waits for the next hop
            await anyio.sleep(0.01)
            leader.cancel_scope.cancel()  # the leader's caller goes away mid-hop
            gate.release.set()
        tg.start_soon(read, 2)
    # The lead passed on: nobody left waiting. (Whether the cancelled caller still took its own
    # answer depends on when the backend delivers a cancel to a task waiting on a thread.)
    assert answers[1] == 10 and answers[2] == 20 and answers.get(0, 0) == 0
    assert 0 in gate.threads  # the cancelled leader's read ran (its hop was not abandoned)
    assert await hops.run(lambda: 7, limiter) == 7  # and the hop it held is free again
