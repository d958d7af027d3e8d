"""The notifier and `inbox_wait`: woken after commits, scoped to the caller's own items."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Callable
from typing import Any

import anyio
import pytest

from hubcore.caller import Caller
from hubcore.errors import HubError
from hubcore.hub import Hub
from hubcore.services.changes import Change, Notifier, Reader, feed_key, owner_key
from tests.feed.conftest import approval, ask, signal, wait_through
from tests.harness import HubClient
from tests.requests import a_decision, a_notify_wait, a_subscription, an_answer, an_inbox_wait

pytestmark = pytest.mark.anyio
HUMAN = Caller.admin()


def taken(reader: Reader) -> list[Change] | None:
    """The changes a stream's turn takes; None when it fell behind the ring."""
    log = reader._notifier.log
    span = reader.take()
    return None if span is None else log.changes(span.start, span.end)


@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
async def test_notifier_waiter_and_reader(anyio_backend: str) -> None:
    notifier = Notifier(capacity=2)
    change = Change("inbox", "p", "01", owner="bot", resolved=True)
    reader = notifier.open_stream("admin", 0)
    with notifier.waiter(lambda c: c.owner == "bot", [owner_key("bot")]) as waiter, reader:
        notifier.publish([Change("feed", "p", "00")])
        assert not waiter.fired
        notifier.publish([change])  # published before anyone waits: not lost
        with anyio.fail_after(1):
            await waiter.wait()
        assert taken(reader) == [Change("feed", "p", "00"), change]
        notifier.publish([Change("feed", "p", "02")])
        with anyio.fail_after(1):
            await reader.wait(10)
        assert [c.event_id for c in taken(reader) or []] == ["02"]
        notifier.publish([Change("feed", "p", f"1{n}") for n in range(3)])
        assert taken(reader) is None  # fell behind the ring: refresh, not a backlog
        assert taken(reader) == []
        assert notifier.listeners == 2
    assert notifier.listeners == 0


async def test_a_change_is_offered_only_to_the_waiters_filed_under_its_keys() -> None:
    notifier = Notifier()
    offered: list[str] = []

    def counting(name: str) -> Callable[[Change], bool]:
        def match(change: Change) -> bool:
            offered.append(name)
            return False

        return match

    with contextlib.ExitStack() as stack:
        for n in range(100):  # a hundred other agents waiting on their own items
            stack.enter_context(notifier.waiter(counting(f"w{n}"), [owner_key(f"w{n}")]))
        stack.enter_context(notifier.waiter(counting("mine"), [owner_key("bot")]))
        stack.enter_context(notifier.waiter(counting("proj"), [feed_key("proj")]))
        stack.enter_context(notifier.waiter(counting("any"), [feed_key(None)]))
        for n in range(500):  # and streams
            stack.enter_context(notifier.open_stream(f"agent:a{n}", 8))
        notifier.publish([Change("inbox", "p", "01", owner="bot", resolved=True)])
        assert offered == ["mine"]
        offered.clear()
        notifier.publish([Change("feed", "proj", "02"), Change("feed", "other", "03")])
        assert sorted(offered) == ["any", "any", "proj"]


def test_a_stream_that_never_ran_frees_its_slot() -> None:
    notifier = Notifier()
    reader = notifier.open_stream("agent:bot", 1)
    with pytest.raises(HubError) as err:
        notifier.open_stream("agent:bot", 1)
    assert err.value.code == "rate_limited" and err.value.headers["Retry-After"]
    del reader  # its response was dropped before the body ran: nothing closed it
    gc.collect()
    with notifier.open_stream("agent:bot", 1):
        assert notifier.streams_of("agent:bot") == 1
    assert notifier.streams_of("agent:bot") == 0


def cursors(client: HubClient) -> list[tuple[Any, ...]]:
    with client.db() as conn:
        return [tuple(r) for r in conn.execute("SELECT * FROM actor_cursors ORDER BY actor, name, project_id")]


async def test_shutdown_answers_a_waiting_inbox_wait_at_once(hub: Hub, bot: Caller, client: HubClient) -> None:
    await ask(hub, bot)
    before = cursors(client)
    results: list[dict[str, Any]] = []

    async def waiting() -> None:
        results.append(await hub.inbox.wait(bot, an_inbox_wait(wait_seconds=60)))

    with anyio.fail_after(5):  # a hang guard: without the fix this waits the full 60 s
        async with anyio.create_task_group() as tg:
            tg.start_soon(waiting)
            await anyio.wait_all_tasks_blocked()
            hub.begin_shutdown()
    (result,) = results
    assert result["items"] == [] and result["timed_out"] is True and result["shutdown"] is True
    # A wait that arrives while the hub is stopping answers at once too; neither wrote anything.
    with anyio.fail_after(5):
        assert (await hub.inbox.wait(bot, an_inbox_wait(wait_seconds=60)))["shutdown"] is True
    assert cursors(client) == before


async def test_shutdown_still_hands_over_what_is_there(hub: Hub, bot: Caller) -> None:
    q = await ask(hub, bot)
    await hub.resolutions.answer(HUMAN, an_answer(question_id=q, body="go"))
    hub.begin_shutdown()
    result = await hub.inbox.wait(bot, an_inbox_wait(wait_seconds=60))
    assert [i["event_id"] for i in result["items"]] == [q] and "shutdown" not in result


async def test_shutdown_answers_a_waiting_notify_wait_at_once(hub: Hub, bot: Caller) -> None:
    await hub.attention.subscribe(bot, a_subscription(kinds=["signal"], project_id="proj"))
    results: list[dict[str, Any]] = []

    async def waiting() -> None:
        results.append(await hub.attention.wait(bot, a_notify_wait(wait_seconds=60)))

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(waiting)
            await anyio.wait_all_tasks_blocked()
            hub.begin_shutdown()
    assert results == [{"timed_out": True, "notifications": {"pending": []}, "shutdown": True}]


async def test_a_zero_wait_during_shutdown_is_an_ordinary_poll(hub: Hub, bot: Caller) -> None:
    hub.begin_shutdown()
    assert "shutdown" not in await hub.inbox.wait(bot, an_inbox_wait(wait_seconds=0))
    assert "shutdown" not in await hub.attention.wait(bot, a_notify_wait(wait_seconds=0))


async def test_wait_wakes_on_the_callers_own_resolution(hub: Hub, bot: Caller, client: HubClient) -> None:
    q = await ask(hub, bot)
    result = await wait_through(hub, bot, lambda: hub.resolutions.answer(HUMAN, an_answer(question_id=q, body="go")))
    assert [i["event_id"] for i in result["items"]] == [q] and result["timed_out"] is False
    assert result["items"][0]["answer"]["body"] == "go"
    # Delivered once: the durable cursor moved past it.
    again = await hub.inbox.wait(bot, an_inbox_wait(wait_seconds=0))
    assert again["items"] == [] and again["timed_out"] is True and again["next_since"] == result["next_since"]


async def test_wait_returns_at_once_for_a_resolution_that_came_first(hub: Hub, bot: Caller) -> None:
    q = await ask(hub, bot)
    await hub.resolutions.answer(HUMAN, an_answer(question_id=q, body="already"))
    with anyio.fail_after(1):
        result = await hub.inbox.wait(bot, an_inbox_wait(wait_seconds=30))
    assert [i["event_id"] for i in result["items"]] == [q]


async def test_wait_is_scoped_to_the_callers_items(hub: Hub, bot: Caller, client: HubClient) -> None:
    await client.make_agent("bob")
    bob = Caller.agent("bob")
    mine = await ask(hub, bot)
    theirs = await approval(hub, bob)
    await hub.resolutions.decide(HUMAN, a_decision(approval_id=theirs, decision="approve"))
    await signal(hub, bob)
    assert (await hub.inbox.wait(bot, an_inbox_wait(wait_seconds=0)))["items"] == []
    got = await hub.inbox.wait(bob, an_inbox_wait(wait_seconds=0))
    assert [i["event_id"] for i in got["items"]] == [theirs]
    await hub.resolutions.answer(HUMAN, an_answer(question_id=mine, body="yes"))
    assert [i["event_id"] for i in (await hub.inbox.wait(bot, an_inbox_wait(wait_seconds=0)))["items"]] == [mine]


async def test_wait_times_out_and_zero_polls_once(hub: Hub, bot: Caller) -> None:
    await ask(hub, bot)
    start = anyio.current_time()
    result = await hub.inbox.wait(bot, an_inbox_wait(wait_seconds=0.05))
    assert result["items"] == [] and result["timed_out"] is True
    assert anyio.current_time() - start >= 0.05
    assert (await hub.inbox.wait(bot, an_inbox_wait(wait_seconds=0)))["timed_out"] is True


async def test_wait_wakes_for_an_expiry(hub: Hub, bot: Caller, clock) -> None:  # type: ignore[no-untyped-def]
    q = await ask(hub, bot, expires_in_seconds=60)

    async def expire() -> None:
        clock.advance(60)
        await hub.resolutions.sweep()

    result = await wait_through(hub, bot, expire)
    assert result["items"][0]["event_id"] == q and result["items"][0]["expired"] is True


async def test_wait_with_explicit_since(hub: Hub, bot: Caller) -> None:
    q1, q2 = await ask(hub, bot), await ask(hub, bot)
    a1 = (await hub.resolutions.answer(HUMAN, an_answer(question_id=q1, body="one")))["event_id"]
    await hub.resolutions.answer(HUMAN, an_answer(question_id=q2, body="two"))
    result = await hub.inbox.wait(bot, an_inbox_wait(wait_seconds=0, since=a1))
    assert [i["event_id"] for i in result["items"]] == [q2]
    # the explicit since advanced the cursor too
    assert (await hub.inbox.wait(bot, an_inbox_wait(wait_seconds=0)))["items"] == []


@pytest.mark.parametrize("seconds", [-1, 60.001, 61, "5", True])
async def test_wait_seconds_refused(hub: Hub, bot: Caller, seconds: object) -> None:
    with pytest.raises(HubError) as err:
        await hub.inbox.wait(bot, an_inbox_wait(wait_seconds=seconds))
    assert err.value.code == "invalid_argument"


async def test_wait_seconds_edges_accepted(hub: Hub, bot: Caller) -> None:
    q = await ask(hub, bot)
    await hub.resolutions.answer(HUMAN, an_answer(question_id=q, body="x"))
    with anyio.fail_after(1):
        # returns at once: something is there
        assert (await hub.inbox.wait(bot, an_inbox_wait(wait_seconds=60)))["items"]
    waits = [an_inbox_wait(**given).wait_seconds for given in ({}, {"wait_seconds": 0}, {"wait_seconds": 60})]
    assert waits == [30, 0, 60]


async def test_notifier_is_signalled_only_after_commit(hub: Hub, bot: Caller, client: HubClient) -> None:
    with hub.changes.open_stream("test", 0) as reader:
        eid = await signal(hub, bot)
        seen = taken(reader)
        # By the time a listener hears of it, a fresh read connection finds it.
        with client.db() as conn:
            assert conn.execute("SELECT 1 FROM events WHERE id = ?", (eid,)).fetchone()
        with pytest.raises(HubError):
            await signal(hub, bot, text="x" * 2000)
        assert taken(reader) == []
    assert [(c.topic, c.event_id) for c in seen or []] == [("feed", eid)]
