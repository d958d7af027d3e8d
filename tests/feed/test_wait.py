"""The notifier and `inbox_wait`: woken after commits, scoped to the caller's own items."""

from __future__ import annotations

import anyio
import pytest

from hubcore.caller import Caller
from hubcore.errors import HubError
from hubcore.hub import Hub
from hubcore.services.notifier import Change, Notifier
from tests.feed.conftest import approval, ask, signal
from tests.harness import HubClient

pytestmark = pytest.mark.anyio
HUMAN = Caller.admin()


@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
async def test_notifier_waiter_and_subscription(anyio_backend: str) -> None:
    notifier = Notifier()
    change = Change("inbox", "p", "01", owner="bot", resolved=True)
    with notifier.waiter(lambda c: c.owner == "bot") as waiter, notifier.subscribe(size=2) as sub:
        notifier.publish([Change("feed", "p", "00")])
        assert not waiter.fired
        notifier.publish([change])  # published before anyone waits: not lost
        with anyio.fail_after(1):
            await waiter.wait()
        notifier.publish([Change("feed", "p", "02")])
        with anyio.fail_after(1):
            await sub.wait()
        assert [c.event_id for c in sub.drain()] == ["01", "02"] and sub.dropped == 1
        assert notifier.listeners == 2
    assert notifier.listeners == 0


async def test_wait_wakes_on_the_callers_own_resolution(hub: Hub, bot: Caller, client: HubClient) -> None:
    q = await ask(hub, bot)
    results: list[dict] = []  # type: ignore[type-arg]

    async def waiting() -> None:
        results.append(await hub.inbox.wait(bot, 10))

    async with anyio.create_task_group() as tg:
        tg.start_soon(waiting)
        await anyio.wait_all_tasks_blocked()
        await hub.questions.answer(HUMAN, q, "go")
    (result,) = results
    assert [i["event_id"] for i in result["items"]] == [q] and result["timed_out"] is False
    assert result["items"][0]["answer"]["body"] == "go"
    # Delivered once: the durable cursor moved past it.
    again = await hub.inbox.wait(bot, 0)
    assert again["items"] == [] and again["timed_out"] is True and again["next_since"] == result["next_since"]


async def test_wait_returns_at_once_for_a_resolution_that_came_first(hub: Hub, bot: Caller) -> None:
    q = await ask(hub, bot)
    await hub.questions.answer(HUMAN, q, "already")
    with anyio.fail_after(1):
        result = await hub.inbox.wait(bot, 30)
    assert [i["event_id"] for i in result["items"]] == [q]


async def test_wait_is_scoped_to_the_callers_items(hub: Hub, bot: Caller, client: HubClient) -> None:
    await client.make_agent("bob")
    bob = Caller.agent("bob")
    mine = await ask(hub, bot)
    theirs = await approval(hub, bob)
    await hub.questions.decide(HUMAN, theirs, {"decision": "approve"})
    await signal(hub, bob)
    assert (await hub.inbox.wait(bot, 0))["items"] == []
    got = await hub.inbox.wait(bob, 0)
    assert [i["event_id"] for i in got["items"]] == [theirs]
    await hub.questions.answer(HUMAN, mine, "yes")
    assert [i["event_id"] for i in (await hub.inbox.wait(bot, 0))["items"]] == [mine]


async def test_wait_times_out_and_zero_polls_once(hub: Hub, bot: Caller) -> None:
    await ask(hub, bot)
    start = anyio.current_time()
    result = await hub.inbox.wait(bot, 0.05)
    assert result["items"] == [] and result["timed_out"] is True
    assert anyio.current_time() - start >= 0.05
    assert (await hub.inbox.wait(bot, 0))["timed_out"] is True


async def test_wait_wakes_for_an_expiry(hub: Hub, bot: Caller, clock) -> None:  # type: ignore[no-untyped-def]
    q = await ask(hub, bot, expires_in_seconds=60)
    results: list[dict] = []  # type: ignore[type-arg]

    async def waiting() -> None:
        results.append(await hub.inbox.wait(bot, 10))

    async with anyio.create_task_group() as tg:
        tg.start_soon(waiting)
        await anyio.wait_all_tasks_blocked()
        clock.advance(60)
        await hub.questions.sweep()
    assert results[0]["items"][0]["event_id"] == q and results[0]["items"][0]["expired"] is True


async def test_wait_with_explicit_since(hub: Hub, bot: Caller) -> None:
    q1, q2 = await ask(hub, bot), await ask(hub, bot)
    a1 = (await hub.questions.answer(HUMAN, q1, "one"))["event_id"]
    await hub.questions.answer(HUMAN, q2, "two")
    result = await hub.inbox.wait(bot, 0, since=a1)
    assert [i["event_id"] for i in result["items"]] == [q2]
    assert (await hub.inbox.wait(bot, 0))["items"] == []  # the explicit since advanced the cursor too


@pytest.mark.parametrize("seconds", [-1, 60.001, 61, "5", True])
async def test_wait_seconds_refused(hub: Hub, bot: Caller, seconds: object) -> None:
    with pytest.raises(HubError) as err:
        await hub.inbox.wait(bot, seconds)
    assert err.value.code == "invalid_argument"


async def test_wait_seconds_edges_accepted(hub: Hub, bot: Caller) -> None:
    q = await ask(hub, bot)
    await hub.questions.answer(HUMAN, q, "x")
    with anyio.fail_after(1):
        assert (await hub.inbox.wait(bot, 60))["items"]  # returns at once: something is there
    from hubcore.services.inbox import check_wait

    assert check_wait(None) == 30 and check_wait(0) == 0 and check_wait(60) == 60


async def test_notifier_is_signalled_only_after_commit(hub: Hub, bot: Caller, client: HubClient) -> None:
    seen: list[Change] = []
    with hub.notifier.subscribe() as sub:
        eid = await signal(hub, bot)
        seen = sub.drain()
        # By the time a listener hears of it, a fresh read connection finds it.
        with client.db() as conn:
            assert conn.execute("SELECT 1 FROM events WHERE id = ?", (eid,)).fetchone()
        with pytest.raises(HubError):
            await signal(hub, bot, text="x" * 2000)
        assert sub.drain() == []
    assert [(c.topic, c.event_id) for c in seen] == [("feed", eid)]
