"""`Intake.pause`: a call answered from memory resumes only once the event loop has run the I/O
callbacks that were ready when it paused (on asyncio, where a plain checkpoint resumes before
them), every pause of one turn goes on, and a cancelled one leaves the others waiting as before."""

from __future__ import annotations

import asyncio
import socket

import anyio
import pytest

from hubcore.services.intake import Intake

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def read_when_ready(pause: bool) -> list[bytes]:
    """What a reader callback took off a socket that was readable before the task paused (with
    `Intake.pause`, or with a plain checkpoint)."""
    loop = asyncio.get_running_loop()
    ours, theirs = socket.socketpair()
    ours.setblocking(False)
    taken: list[bytes] = []
    loop.add_reader(ours, lambda: taken.append(ours.recv(16)))
    try:
        theirs.send(b"request")
        await anyio.sleep(0.05)  # the loop polls meanwhile and the callback takes it
        assert taken == [b"request"]
        taken.clear()
        theirs.send(b"next")  # ready now, its callback not yet run
        if pause:
            await Intake().pause()
        else:
            await anyio.lowlevel.checkpoint()
        return taken
    finally:
        loop.remove_reader(ours)
        ours.close()
        theirs.close()


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_pause_resumes_after_the_io_ready_when_it_began(anyio_backend: str) -> None:
    assert await read_when_ready(pause=True) == [b"next"]
    assert await read_when_ready(pause=False) == []  # why a plain checkpoint would not do


async def test_every_pause_of_a_turn_goes_on() -> None:
    intake, done = Intake(), []

    async def pause(n: int) -> None:
        await intake.pause()
        done.append(n)

    async with anyio.create_task_group() as tg:
        for n in range(5):
            tg.start_soon(pause, n)
    assert sorted(done) == [0, 1, 2, 3, 4]
    await intake.pause()  # a later turn starts afresh
    assert intake._turn is None


async def test_a_cancelled_pause_leaves_the_others_to_go_on() -> None:
    intake, done = Intake(), []

    async def pause(n: int, scope: anyio.CancelScope) -> None:
        with scope:
            await intake.pause()
            done.append(n)

    scopes = [anyio.CancelScope() for _ in range(3)]
    async with anyio.create_task_group() as tg:
        for n, scope in enumerate(scopes):
            tg.start_soon(pause, n, scope)
        await anyio.lowlevel.checkpoint()  # on asyncio every task has begun its pause by now
        scopes[1].cancel()
    assert sorted(done) == [0, 2]
    assert scopes[1].cancelled_caught
