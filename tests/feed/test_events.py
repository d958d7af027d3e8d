"""Events: kinds, server-set actor, ids, size limits, the ceiling, idempotency, metrics."""

from __future__ import annotations

import pytest

from hubcore.caller import Caller
from hubcore.clock import FakeClock
from hubcore.errors import HubError
from hubcore.hub import Hub
from hubcore.services import events as ev
from hubcore.services import ids
from tests.feed.conftest import ClientFactory, ask, rows, signal, totals
from tests.harness import ADMIN, HubClient
from tests.requests import a_question, a_signal, an_answer

pytestmark = pytest.mark.anyio


def test_ulid_text_round_trip_and_order() -> None:
    a, b = ids.encode(1, 0), ids.encode(2, 0)
    assert len(a) == 26 and ids.is_event_id(a) and a < b
    assert ids.timestamp_ms(ids.encode(1_800_000_000_123, 2**80 - 1)) == 1_800_000_000_123
    assert not ids.is_event_id("not-an-id") and not ids.is_event_id("8" + "0" * 25)


async def test_ids_are_clamped_forward_across_a_clock_step(hub: Hub, bot: Caller, clock: FakeClock) -> None:
    first = await signal(hub, bot)
    second = await signal(hub, bot)  # same clock reading: minted 1 ms past the mark
    assert ids.timestamp_ms(second) == ids.timestamp_ms(first) + 1
    clock.advance(-3600)  # the wall clock steps back an hour
    third = await signal(hub, bot)
    assert third > second and ids.timestamp_ms(third) == ids.timestamp_ms(second) + 1
    clock.advance(7200)
    fourth = await signal(hub, bot)
    assert ids.timestamp_ms(fourth) == int(clock.now() * 1000)


async def test_the_high_water_mark_survives_a_restart(make_client: ClientFactory, clock: FakeClock) -> None:
    async with make_client() as client:
        await client.make_project("proj")
        hub = client.app.hub
        last = (await hub.posts.signal_append(Caller.admin(), a_signal(project_id="proj", summary="x")))["event_id"]
        settings = client.app.settings
    clock.advance(-60)
    from tests.harness import hub_client

    async with hub_client(settings, clock) as again:
        nxt = (await again.app.hub.posts.signal_append(Caller.admin(), a_signal(project_id="proj", summary="y")))[
            "event_id"
        ]
        with again.db() as conn:
            mark = int(conn.execute("SELECT value FROM hub_meta WHERE key = ?", (ids.MARK_KEY,)).fetchone()[0])
    assert nxt > last and mark == ids.timestamp_ms(nxt)


async def test_actor_is_server_set_and_a_client_actor_is_ignored(client: HubClient, hub: Hub, bot: Caller) -> None:
    r = await client.post(
        "/api/v1/projects/proj/ideas",
        headers=ADMIN,
        json={"summary": "idea", "actor": "mallory", "payload": {"actor": "mallory"}},
    )
    assert r.status_code == 201, r.text
    eid = await signal(hub, bot, payload={"actor": "mallory"})
    with client.db() as conn:
        actors = dict(conn.execute("SELECT id, actor FROM events").fetchall())
    assert actors == {r.json()["id"]: "human", eid: "bot"}


@pytest.mark.parametrize("kind", ["signal", "finished", "idea", "approval"])
async def test_signal_append_kinds(hub: Hub, bot: Caller, client: HubClient, kind: str) -> None:
    result = await hub.posts.signal_append(
        bot, a_signal(project_id="proj", kind=kind, summary="s", payload={"body": "b"})
    )
    assert result["kind"] == kind
    assert rows(client, "SELECT COUNT(*) FROM events WHERE kind = ?", kind) == 1


@pytest.mark.parametrize("kind", ["question", "answer", "session", "system", "artifact", "nonsense", ""])
async def test_signal_append_refuses_other_kinds(hub: Hub, bot: Caller, client: HubClient, kind: str) -> None:
    with pytest.raises(HubError) as err:
        await hub.posts.signal_append(bot, a_signal(project_id="proj", kind=kind, summary="s"))
    assert err.value.code == "invalid_argument"
    assert totals(client) == (0, 0, 0)


async def test_summary_limit_edge(hub: Hub, bot: Caller, client: HubClient) -> None:
    await signal(hub, bot, text="x" * ev.SUMMARY_MAX)
    with pytest.raises(HubError) as err:
        await signal(hub, bot, text="x" * (ev.SUMMARY_MAX + 1))
    assert err.value.code == "payload_too_large"
    assert rows(client, "SELECT COUNT(*) FROM events") == 1


async def test_summary_is_one_line_or_taken_from_the_body(hub: Hub, bot: Caller, client: HubClient) -> None:
    with pytest.raises(HubError) as err:
        await signal(hub, bot, text="two\nlines")
    assert err.value.code == "invalid_argument"
    with pytest.raises(HubError):
        await hub.posts.signal_append(bot, a_signal(project_id="proj", summary="  "))
    eid = (await hub.posts.signal_append(bot, a_signal(project_id="proj", payload={"body": " first line\nsecond"})))[
        "event_id"
    ]
    with client.db() as conn:
        assert conn.execute("SELECT summary FROM events WHERE id = ?", (eid,)).fetchone()[0] == "first line"
    assert rows(client, "SELECT COUNT(*) FROM events") == 1


async def test_payload_limit_edge(hub: Hub, bot: Caller, client: HubClient) -> None:
    overhead = len('{"body":""}')
    await signal(hub, bot, payload={"body": "x" * (ev.PAYLOAD_MAX - overhead)})
    with pytest.raises(HubError) as err:
        await signal(hub, bot, payload={"body": "x" * (ev.PAYLOAD_MAX - overhead + 1)})
    assert err.value.code == "payload_too_large"
    with pytest.raises(HubError) as err:
        await signal(hub, bot, payload=["not", "an", "object"])
    assert err.value.code == "invalid_argument"
    assert rows(client, "SELECT COUNT(*) FROM events") == 1


async def test_ceiling_edge_names_the_cap_and_exempts_lifecycle(make_client: ClientFactory) -> None:
    async with make_client(events_per_project=3) as client:
        await client.make_project("proj")
        hub, human = client.app.hub, Caller.admin()
        for n in range(3):
            await hub.posts.signal_append(human, a_signal(project_id="proj", summary=f"s{n}", idempotency_key=f"k{n}"))
        before = totals(client)
        with pytest.raises(HubError) as err:
            await hub.posts.signal_append(human, a_signal(project_id="proj", summary="one too many"))
        assert err.value.code == "conflict" and "3" in err.value.message
        assert err.value.details == {"cap": 3, "setting": "events_per_project"}
        with pytest.raises(HubError):
            await hub.posts.question_post(human, a_question(project_id="proj", summary="too many?"))
        assert totals(client) == before
        # An idempotent replay is never refused, even at the ceiling.
        again = await hub.posts.signal_append(human, a_signal(project_id="proj", summary="s0", idempotency_key="k0"))
        assert totals(client) == before and again["event_id"]
        # Session lifecycle and audit records are exempt.

        def lifecycle(conn):  # type: ignore[no-untyped-def]
            for kind in ("session", "system"):
                ev.insert_event(
                    conn,
                    ev.NewEvent("proj", kind, "bot", kind, {"action": "started"}),
                    now=client.app.hub.core.now(),
                    cap=3,
                )

        await hub.core.store.execute(lifecycle)
        assert rows(client, "SELECT COUNT(*) FROM events") == 5


async def test_ceiling_zero_disables(make_client: ClientFactory) -> None:
    async with make_client(events_per_project=0) as client:
        await client.make_project("proj")
        for n in range(5):
            await client.app.hub.posts.signal_append(Caller.admin(), a_signal(project_id="proj", summary=f"s{n}"))
        assert rows(client, "SELECT COUNT(*) FROM events") == 5


async def test_idempotency_replays_and_is_scoped(hub: Hub, bot: Caller, client: HubClient) -> None:
    await client.make_project("other")
    first = await hub.posts.signal_append(bot, a_signal(project_id="proj", summary="a", idempotency_key="k"))
    again = await hub.posts.signal_append(bot, a_signal(project_id="proj", summary="a changed", idempotency_key="k"))
    assert again == first
    # Another kind is another scope: the same key makes a new event.
    idea = await hub.posts.signal_append(
        bot, a_signal(project_id="proj", kind="idea", summary="i", idempotency_key="k")
    )
    assert idea["event_id"] != first["event_id"]
    # Another agent's key is its own.
    await client.make_agent("bob")
    other = await hub.posts.signal_append(
        Caller.agent("bob"), a_signal(project_id="proj", summary="a", idempotency_key="k")
    )
    assert other["event_id"] != first["event_id"]
    longest = await hub.posts.signal_append(bot, a_signal(project_id="proj", summary="a", idempotency_key="k" * 200))
    assert longest["event_id"]
    before = totals(client)
    # The same key bound to another target (project) is refused.
    with pytest.raises(HubError) as err:
        await hub.posts.signal_append(bot, a_signal(project_id="other", summary="a", idempotency_key="k"))
    assert err.value.code == "conflict"
    with pytest.raises(HubError) as err:
        await hub.posts.signal_append(bot, a_signal(project_id="proj", summary="a", idempotency_key="x" * 201))
    assert err.value.code == "invalid_argument"
    assert totals(client) == before


async def test_a_replayed_question_sends_no_new_notify(
    hub: Hub, bot: Caller, client: HubClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    pokes: list[int] = []
    monkeypatch.setattr(hub.webhook, "poke", lambda: pokes.append(1))
    first = await ask(hub, bot, idempotency_key="q1")
    again = await ask(hub, bot, idempotency_key="q1")
    assert first == again and pokes == [1]
    assert rows(client, "SELECT COUNT(*) FROM inbox") == 1
    await signal(hub, bot)  # a plain signal waits on nobody
    assert pokes == [1]


async def test_events_appended_are_counted_by_kind(hub: Hub, bot: Caller) -> None:
    await signal(hub, bot)
    await signal(hub, bot)
    q = await ask(hub, bot)
    await hub.resolutions.answer(Caller.admin(), an_answer(question_id=q, body="yes"))
    text = hub.metrics.render().decode()
    assert 'hub_events_appended_total{kind="signal"} 2.0' in text
    assert 'hub_events_appended_total{kind="question"} 1.0' in text
    assert 'hub_events_appended_total{kind="answer"} 1.0' in text


async def test_invisible_project_is_missing(hub: Hub, bot: Caller, client: HubClient) -> None:
    await client.make_project("secret", confidential=True)
    for project in ("secret", "nope"):
        with pytest.raises(HubError) as err:
            await signal(hub, bot, project=project)
        assert err.value.code == "not_found" and project in err.value.message
    assert totals(client) == (0, 0, 0)
