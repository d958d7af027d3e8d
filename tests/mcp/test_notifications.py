"""The notifications domain (hubcore.services.attention) and the active-session registry."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from hubcore.caller import Caller
from hubcore.clock import FakeClock
from hubcore.config import HubSettings
from hubcore.hub import Hub
from hubcore.services.attention import CLEAN_SECS
from hubmcp.active import ActiveSessions, legacy_key, modern_key
from tests.requests import a_decision, a_grant, a_project, a_question, a_signal, a_subscription, an_agent, an_answer

pytestmark = pytest.mark.anyio
ADMIN = Caller.admin()


@pytest.fixture
async def hub(settings: HubSettings, clock: FakeClock) -> AsyncIterator[Hub]:
    async with Hub.open(settings, clock=clock) as h:
        for agent in ("alice", "bob"):
            await h.agents.create(ADMIN, an_agent(id=agent))
        yield h


async def test_unscoped_drain_keeps_to_readable_projects(hub: Hub, clock: FakeClock) -> None:
    alice, bob = Caller.agent("alice"), Caller.agent("bob")
    await hub.projects.create(ADMIN, a_project(id="open"))
    await hub.projects.create(ADMIN, a_project(id="secret", confidential=True))
    await hub.agents.grant(ADMIN, a_grant(agent_id="alice", project_id="secret"))
    await hub.agents.grant(ADMIN, a_grant(agent_id="bob", project_id="secret"))
    await hub.attention.subscribe(alice, a_subscription(kinds=["finished"]))
    hidden = await hub.posts.signal_append(bob, a_signal(project_id="secret", kind="finished", summary="secret work"))
    await hub.agents.revoke_grant(ADMIN, "alice", "secret")
    seen = await hub.posts.signal_append(bob, a_signal(project_id="open", kind="finished", summary="open work"))
    first = await hub.attention.drain(alice)
    assert [i["id"] for i in first.items] == [seen["event_id"]]
    assert (await hub.attention.drain(alice)).items == []
    # The unreadable event stayed above its project's cursor: it arrives once access returns (a
    # grant publishes nothing, so at the latest when the "nothing pending" memo lapses).
    await hub.agents.grant(ADMIN, a_grant(agent_id="alice", project_id="secret"))
    assert (await hub.attention.drain(alice)).items == []
    clock.advance(CLEAN_SECS)
    later = await hub.attention.drain(alice)
    assert [i["id"] for i in later.items] == [hidden["event_id"]]


async def test_empty_drain_writes_nothing_and_a_change_ends_the_clean_memo(hub: Hub) -> None:
    alice, bob = Caller.agent("alice"), Caller.agent("bob")
    await hub.projects.create(ADMIN, a_project(id="open"))
    await hub.attention.subscribe(alice, a_subscription(kinds=["signal"], project_id="open"))
    before = hub.core.store.statistics().commands
    assert (await hub.attention.drain(alice)).items == []
    assert (await hub.attention.drain(alice)).items == []
    assert hub.core.store.statistics().commands == before
    # A matching event and a resolution each reach the next drain at once, memo or not.
    sent = await hub.posts.signal_append(bob, a_signal(project_id="open", kind="signal", summary="hi"))
    assert [i["id"] for i in (await hub.attention.drain(alice)).items] == [sent["event_id"]]
    q = await hub.posts.question_post(alice, a_question(project_id="open", summary="Why?"))
    assert (await hub.attention.drain(alice)).items == []
    await hub.resolutions.answer(ADMIN, an_answer(question_id=q["event_id"], body="because"))
    assert [i["thread_id"] for i in (await hub.attention.drain(alice)).items] == [q["event_id"]]


async def test_expiries_and_decisions_are_titled(hub: Hub, clock: FakeClock) -> None:
    alice = Caller.agent("alice")
    q = await hub.posts.question_post(
        alice, a_question(project_id="space-alice", summary="Deploy now?", expires_in_seconds=60)
    )
    a = await hub.posts.signal_append(
        alice,
        a_signal(
            project_id="space-alice",
            kind="approval",
            summary="Drop the table",
            expires_in_seconds=120,
            on_expiry="approve",
        ),
    )
    d = await hub.posts.signal_append(alice, a_signal(project_id="space-alice", kind="approval", summary="Rename it"))
    await hub.resolutions.decide(ADMIN, a_decision(approval_id=d["event_id"], decision="decline", note="not now"))
    clock.advance(200)
    await hub.resolutions.sweep()
    items = (await hub.attention.drain(alice)).items
    by_thread = {i["thread_id"]: i for i in items}
    assert by_thread[d["event_id"]]["title"].startswith("Declined: your approval request: Rename it")
    assert by_thread[q["event_id"]]["title"] == "Expired without an answer: your question: Deploy now?"
    assert by_thread[q["event_id"]]["expired"] is True
    assert by_thread[a["event_id"]]["title"].startswith("Expired, approved by its deadline")
    assert all(i["source"] == "attention" and i["kind"] == "answer" for i in items)


async def test_subscription_limits_and_validation(hub: Hub) -> None:
    from hubcore.errors import HubError

    alice = Caller.agent("alice")
    with pytest.raises(HubError) as caught:
        await hub.attention.subscribe(alice, a_subscription(kinds=["nonsense"]))
    assert caught.value.code == "invalid_argument"
    with pytest.raises(HubError) as caught:
        await hub.attention.subscribe(alice, a_subscription(kinds=["signal"], project_id="missing"))
    assert caught.value.code == "not_found"
    for _ in range(50):
        await hub.attention.subscribe(alice, a_subscription(kinds=["signal"]))
    with pytest.raises(HubError) as caught:
        await hub.attention.subscribe(alice, a_subscription(kinds=["signal"]))
    assert caught.value.code == "rate_limited"


def test_active_sessions_keys_and_expiry() -> None:
    now = [0.0]
    reg = ActiveSessions(max_keys=2, idle_secs=10, monotonic=lambda: now[0])
    # No Hub-Connection header, or a blank one, names no connection: no implicit active session.
    assert modern_key("bot", None) is None and modern_key("bot", "  ") is None
    a, b, c = legacy_key("s1"), modern_key("bot", "worker-1"), modern_key("bot", "worker-2")
    assert b is not None and c is not None
    assert b != c and modern_key("bot", " worker-1 ") == b
    reg.set(a, "sess-a")
    reg.set(b, "sess-b")
    assert reg.get(a) == "sess-a"
    reg.set(c, "sess-c")  # over the cap: the least recently used (b) goes
    assert reg.get(b) is None and reg.get(c) == "sess-c"
    now[0] = 11
    assert reg.get(a) is None
    reg.set(a, "sess-x")
    reg.forget_session("sess-x")
    assert reg.get(a) is None
