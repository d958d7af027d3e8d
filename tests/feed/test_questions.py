"""Questions and approvals: options, deadlines, answers, decisions, expiry, the open-item caps."""

from __future__ import annotations

from typing import Any

import pytest

from hubcore.caller import Caller
from hubcore.clock import FakeClock
from hubcore.errors import HubError
from hubcore.hub import Hub
from tests.feed.conftest import ClientFactory, approval, ask, rows, signal, totals
from tests.harness import ADMIN, HubClient
from tests.requests import a_decision, a_question, a_signal, an_answer, an_inbox_read

pytestmark = pytest.mark.anyio
HUMAN = Caller.admin()


async def refused(client: HubClient, code: str, coro: Any) -> HubError:
    """Await `coro`, expect a refusal with `code`, and check that nothing was written."""
    before = totals(client)
    with pytest.raises(HubError) as err:
        await coro
    assert err.value.code == code, err.value
    assert totals(client) == before
    return err.value


@pytest.mark.parametrize(
    "options",
    [
        ["a", "b"],
        ["a", "b", "c", "d", "e", "f"],
        [" padded ", "x" * 80],
        ["x" * 79 + " ", "y"],
    ],
)
async def test_options_accepted(hub: Hub, bot: Caller, client: HubClient, options: list[str]) -> None:
    q = await ask(hub, bot, options=options)
    items = (await hub.inbox.inbox_read(bot, an_inbox_read()))["items"]
    assert items[0]["event_id"] == q and items[0]["payload"]["options"] == [o.strip() for o in options]


@pytest.mark.parametrize(
    "options",
    [
        [],
        ["only"],
        ["a", "b", "c", "d", "e", "f", "g"],
        ["a", "x" * 81],
        ["a", "  "],
        ["a", "b\nc"],
        ["a", "a"],
        ["a", " a "],
        ["a", 3],
        "a,b",
        {"a": 1},
    ],
)
async def test_options_refused_whole(hub: Hub, bot: Caller, client: HubClient, options: Any) -> None:
    await refused(client, "invalid_argument", ask(hub, bot, options=options))


async def test_options_pick_is_an_ordinary_answer(hub: Hub, bot: Caller, client: HubClient) -> None:
    q = await ask(hub, bot, options=["yes", "no"])
    r = await client.post(f"/api/v1/questions/{q}/answer", json={"body": "yes"}, headers=ADMIN)
    with client.db() as conn:
        payload = conn.execute("SELECT payload FROM events WHERE id = ?", (r.json()["event_id"],)).fetchone()[0]
    assert payload == '{"body":"yes"}'


@pytest.mark.parametrize("seconds", [60, 2_592_000, 3600.0])
async def test_deadline_edges_accepted(hub: Hub, bot: Caller, seconds: float, clock: FakeClock) -> None:
    result = await hub.posts.question_post(bot, a_question(project_id="proj", summary="q?", expires_in_seconds=seconds))
    assert result["expires_at"] and result["event_id"] == result["question_id"] == result["thread_id"]
    result = await hub.posts.signal_append(
        bot, a_signal(project_id="proj", kind="approval", summary="a?", expires_in_seconds=seconds)
    )
    assert result["on_expiry"] == "decline"


@pytest.mark.parametrize(
    "kw",
    [
        {"expires_in_seconds": 59},
        {"expires_in_seconds": 2_592_001},
        {"expires_in_seconds": 0},
        {"expires_in_seconds": "60"},
        {"expires_in_seconds": True},
        {"expires_in_seconds": 60.5},
        {"on_expiry": "decline"},
        {"expires_in_seconds": 60, "on_expiry": "decline"},
    ],
)
async def test_question_deadline_refusals(hub: Hub, bot: Caller, client: HubClient, kw: dict[str, Any]) -> None:
    await refused(client, "invalid_argument", ask(hub, bot, **kw))


@pytest.mark.parametrize(
    "kw",
    [
        {"expires_in_seconds": 59},
        {"expires_in_seconds": 2_592_001},
        {"on_expiry": "approve"},
        {"expires_in_seconds": 60, "on_expiry": "maybe"},
    ],
)
async def test_approval_deadline_refusals(hub: Hub, bot: Caller, client: HubClient, kw: dict[str, Any]) -> None:
    await refused(client, "invalid_argument", approval(hub, bot, **kw))


@pytest.mark.parametrize("kind", ["signal", "finished", "idea"])
async def test_deadline_on_other_kinds_refused(hub: Hub, bot: Caller, client: HubClient, kind: str) -> None:
    await refused(client, "invalid_argument", signal(hub, bot, kind=kind, expires_in_seconds=60))


async def test_answer_route_is_permanent(client: HubClient, hub: Hub, bot: Caller) -> None:
    q = await ask(hub, bot)
    r = await client.post(f"/api/v1/questions/{q}/answer", json={"body": "Yes, ship it"}, headers=ADMIN)
    assert r.status_code == 200, r.text
    answer_id = r.json()["event_id"]
    with client.db() as conn:
        row = conn.execute("SELECT kind, actor, thread_id, summary FROM events WHERE id = ?", (answer_id,)).fetchone()
    assert tuple(row) == ("answer", "human", q, "Yes, ship it")
    before = totals(client)
    r = await client.post(f"/api/v1/questions/{q}/answer", json={"body": "No"}, headers=ADMIN)
    assert r.status_code == 409 and r.json()["code"] == "conflict"
    assert totals(client) == before


async def test_answer_refusals(client: HubClient, hub: Hub, bot: Caller) -> None:
    q = await ask(hub, bot)
    a = await approval(hub, bot)
    s = await signal(hub, bot)
    before = totals(client)
    cases = [
        (q, {"body": ""}, 400),
        (q, {"body": "   "}, 400),
        (q, {}, 400),
        (q, {"body": 5}, 400),
        (a, {"body": "x"}, 404),
        (s, {"body": "x"}, 404),
        ("nope", {"body": "x"}, 404),
    ]
    for target, body, status in cases:
        r = await client.post(f"/api/v1/questions/{target}/answer", json=body, headers=ADMIN)
        assert r.status_code == status, (target, body, r.text)
    assert totals(client) == before


async def test_answer_idempotency(client: HubClient, hub: Hub, bot: Caller) -> None:
    q1, q2 = await ask(hub, bot), await ask(hub, bot)
    body = {"body": "yes", "idempotency_key": "ans-1"}
    first = await client.post(f"/api/v1/questions/{q1}/answer", json=body, headers=ADMIN)
    again = await client.post(f"/api/v1/questions/{q1}/answer", json=body, headers=ADMIN)
    assert again.status_code == 200 and again.json() == first.json()
    before = totals(client)
    r = await client.post(f"/api/v1/questions/{q2}/answer", json=body, headers=ADMIN)  # another target
    assert r.status_code == 409
    assert totals(client) == before


async def test_agents_answer_through_the_service(hub: Hub, bot: Caller, client: HubClient) -> None:
    await client.make_agent("bob")
    q = await ask(hub, bot)
    result = await hub.resolutions.answer(Caller.agent("bob"), an_answer(question_id=q, body="I know this one"))
    with client.db() as conn:
        assert conn.execute("SELECT actor FROM events WHERE id = ?", (result["event_id"],)).fetchone()[0] == "bob"
    await client.make_project("secret", confidential=True)
    hidden = await ask(hub, HUMAN, "secret")
    err = await refused(client, "not_found", hub.resolutions.answer(bot, an_answer(question_id=hidden, body="peek")))
    assert "question" in err.message


async def test_decision_route(client: HubClient, hub: Hub, bot: Caller) -> None:
    a1, a2, a3 = await approval(hub, bot), await approval(hub, bot), await approval(hub, bot)

    async def decide(aid: str, body: dict[str, Any]) -> dict[str, Any]:
        r = await client.post(f"/api/v1/approvals/{aid}/decision", json=body, headers=ADMIN)
        assert r.status_code == 200, r.text
        with client.db() as conn:
            import orjson

            row = conn.execute("SELECT payload, thread_id FROM events WHERE id = ?", (r.json()["event_id"],)).fetchone()
        assert row[1] == aid
        return dict(orjson.loads(row[0]))

    assert await decide(a1, {"decision": "approve"}) == {"body": "Approved", "decision": "approved"}
    assert await decide(a2, {"decision": "decline", "note": "  too risky  "}) == {
        "body": "Declined: too risky",
        "decision": "declined",
        "note": "too risky",
    }
    assert await decide(a3, {"decision": "decline", "note": "   "}) == {"body": "Declined", "decision": "declined"}
    r = await client.post(f"/api/v1/approvals/{a1}/decision", json={"decision": "decline"}, headers=ADMIN)
    assert r.status_code == 409


async def test_decision_note_limit_edge(client: HubClient, hub: Hub, bot: Caller) -> None:
    a1, a2 = await approval(hub, bot), await approval(hub, bot)
    r = await client.post(
        f"/api/v1/approvals/{a1}/decision", headers=ADMIN, json={"decision": "approve", "note": " " + "n" * 2000 + " "}
    )
    assert r.status_code == 200
    before = totals(client)
    r = await client.post(
        f"/api/v1/approvals/{a2}/decision", headers=ADMIN, json={"decision": "approve", "note": "n" * 2001}
    )
    assert r.status_code == 413 and r.json()["code"] == "payload_too_large"
    assert totals(client) == before
    assert rows(client, "SELECT COUNT(*) FROM inbox WHERE event_id = ? AND status = 'waiting'", a2) == 1


async def test_decision_refusals(client: HubClient, hub: Hub, bot: Caller) -> None:
    a = await approval(hub, bot)
    q = await ask(hub, bot)
    before = totals(client)
    cases = [
        (a, {"decision": "yes"}, 400),
        (a, {}, 400),
        (a, {"decision": "approve", "note": 3}, 400),
        (q, {"decision": "approve"}, 404),
        ("nope", {"decision": "approve"}, 404),
    ]
    for target, body, status in cases:
        r = await client.post(f"/api/v1/approvals/{target}/decision", json=body, headers=ADMIN)
        assert r.status_code == status, (target, body, r.text)
    await refused(client, "forbidden", hub.resolutions.decide(bot, a_decision(approval_id=a, decision="approve")))
    assert totals(client) == before


async def test_decision_idempotency(client: HubClient, hub: Hub, bot: Caller) -> None:
    a = await approval(hub, bot)
    body = {"decision": "approve", "idempotency_key": "d-1"}
    first = await client.post(f"/api/v1/approvals/{a}/decision", json=body, headers=ADMIN)
    again = await client.post(f"/api/v1/approvals/{a}/decision", json=body, headers=ADMIN)
    assert again.status_code == 200 and again.json() == first.json()
    assert rows(client, "SELECT COUNT(*) FROM events WHERE kind = 'answer'") == 1


async def test_answers_after_the_deadline_are_conflicts_before_the_sweep(
    client: HubClient, hub: Hub, bot: Caller, clock: FakeClock
) -> None:
    q = await ask(hub, bot, expires_in_seconds=60)
    a = await approval(hub, bot, expires_in_seconds=60)
    clock.advance(59.999)
    early = await approval(hub, bot, expires_in_seconds=60)
    r = await client.post(f"/api/v1/approvals/{a}/decision", json={"decision": "approve"}, headers=ADMIN)
    assert r.status_code == 200  # just before the deadline
    clock.advance(0.001)  # now exactly at q's deadline
    for url, body in ((f"/api/v1/questions/{q}/answer", {"body": "late"}),):
        before = rows(client, "SELECT COUNT(*) FROM events WHERE actor = 'human'")
        r = await client.post(url, json=body, headers=ADMIN)
        assert r.status_code == 409 and r.json()["code"] == "conflict"
        assert rows(client, "SELECT COUNT(*) FROM events WHERE actor = 'human'") == before
    # The refusal settled the expiry: the hub answered the question.
    item = next(i for i in (await hub.inbox.inbox_read(bot, an_inbox_read()))["items"] if i["event_id"] == q)
    assert item["status"] == "resolved" and item["expired"] is True and item["answer"]["actor"] == "hub"
    assert item["answer"]["body"] is None
    clock.advance(60)
    r = await client.post(f"/api/v1/approvals/{early}/decision", json={"decision": "approve"}, headers=ADMIN)
    assert r.status_code == 409


async def test_sweep_resolves_due_items(client: HubClient, hub: Hub, bot: Caller, clock: FakeClock) -> None:
    q = await ask(hub, bot, expires_in_seconds=60)
    declined = await approval(hub, bot, expires_in_seconds=120)
    approved = await approval(hub, bot, expires_in_seconds=120, on_expiry="approve")
    later = await approval(hub, bot, expires_in_seconds=3600)
    clock.advance(119)
    assert await hub.resolutions.sweep() == 1
    clock.advance(1)
    assert await hub.resolutions.sweep() == 2
    assert await hub.resolutions.sweep() == 0
    with client.db() as conn:
        import orjson

        answers = {
            r[0]: (r[1], orjson.loads(r[2]))
            for r in conn.execute("SELECT thread_id, actor, payload FROM events WHERE kind = 'answer'")
        }
    assert answers[q] == ("hub", {"expired": True})
    assert answers[declined] == ("hub", {"expired": True, "body": "Declined", "decision": "declined"})
    assert answers[approved] == ("hub", {"expired": True, "body": "Approved", "decision": "approved"})
    assert later not in answers
    items = {i["event_id"]: i for i in (await hub.inbox.inbox_read(bot, an_inbox_read()))["items"]}
    assert items[approved]["decision"]["decision"] == "approved" and items[approved]["expired"] is True
    assert items[approved]["decision"]["actor"] == "hub" and items[later]["expired"] is False


async def test_reads_settle_due_items_first(client: HubClient, hub: Hub, bot: Caller, clock: FakeClock) -> None:
    q = await ask(hub, bot, expires_in_seconds=60)
    clock.advance(60)
    (item,) = (await client.get("/api/v1/inbox", headers=ADMIN)).json()["items"]
    assert item["event_id"] == q and item["status"] == "resolved" and item["expired"] is True
    home = (await client.get("/api/v1/home", headers=ADMIN)).json()
    assert home["waiting"] == 0


async def test_expiry_is_exempt_from_the_ceiling(make_client: ClientFactory, clock: FakeClock) -> None:
    async with make_client(events_per_project=1) as client:
        await client.make_project("proj")
        hub = client.app.hub
        q = (await hub.posts.question_post(HUMAN, a_question(project_id="proj", summary="q?", expires_in_seconds=60)))[
            "event_id"
        ]
        # answers count
        await refused(client, "conflict", hub.resolutions.answer(HUMAN, an_answer(question_id=q, body="full")))
        clock.advance(60)
        assert await hub.resolutions.sweep() == 1  # the hub's resolution is never refused
        assert rows(client, "SELECT COUNT(*) FROM events") == 2


async def test_open_item_cap_per_agent(make_client: ClientFactory) -> None:
    async with make_client(inbox_open_per_agent=2, inbox_open_per_project=0) as client:
        await client.make_agent("bot")
        await client.make_agent("bob")
        await client.make_project("proj")
        await client.make_project("other")
        hub, bot = client.app.hub, Caller.agent("bot")
        q1 = await ask(hub, bot)
        await approval(hub, bot)
        err = await refused(client, "rate_limited", ask(hub, bot))
        assert err.details == {"cap": 2, "setting": "inbox_open_per_agent"} and err.headers["Retry-After"]
        await refused(client, "rate_limited", approval(hub, bot))
        await ask(hub, bot, "other")  # the cap is per project
        await ask(hub, Caller.agent("bob"))  # and per actor
        await signal(hub, bot)  # signals and ideas are not open items
        await signal(hub, bot, kind="idea")
        await hub.resolutions.answer(HUMAN, an_answer(question_id=q1, body="done"))  # resolving frees a slot
        await ask(hub, bot)
        await refused(client, "rate_limited", ask(hub, bot))


async def test_open_item_cap_per_project_over_rest(make_client: ClientFactory) -> None:
    async with make_client(inbox_open_per_agent=0, inbox_open_per_project=2) as client:
        await client.make_agent("bot")
        await client.make_agent("bob")
        await client.make_project("proj")
        hub = client.app.hub
        await ask(hub, Caller.agent("bot"))
        await ask(hub, Caller.agent("bob"))
        err = await refused(client, "rate_limited", ask(hub, HUMAN))
        assert err.details == {"cap": 2, "setting": "inbox_open_per_project"}
        from hubhttp.problems import from_error

        status, headers, _ = from_error(err)
        assert status == 429 and headers["Retry-After"] == "60"


async def test_open_item_caps_zero_disable(make_client: ClientFactory) -> None:
    async with make_client(inbox_open_per_agent=0, inbox_open_per_project=0) as client:
        await client.make_project("proj")
        for _ in range(5):
            await ask(client.app.hub, HUMAN)
        assert rows(client, "SELECT COUNT(*) FROM inbox WHERE status = 'waiting'") == 5


async def test_default_caps_edge(client: HubClient, hub: Hub, bot: Caller) -> None:
    for _ in range(100):
        await ask(hub, bot)
    await refused(client, "rate_limited", ask(hub, bot))


async def test_enrol_request_decision_hook_runs_in_the_same_command(client: HubClient, hub: Hub, bot: Caller) -> None:
    from hubcore.parts import DecisionHook, Part
    from hubcore.services import events as ev
    from hubcore.services.changes import Effects
    from hubcore.services.posts import start_waiting

    seen: list[tuple[str, str]] = []

    class EnrolmentPart(Part):
        def decision_hooks(self) -> dict[str, DecisionHook]:
            return {"enrol_request": lambda conn, row, decision, now: seen.append((row["event_id"], decision))}

    hub.core.parts = (*hub.core.parts, EnrolmentPart())

    def post(conn):  # type: ignore[no-untyped-def]
        event = ev.insert_event(
            conn,
            ev.NewEvent("space-bot", "enrol_request", "bot", "let me in", {}, roots_thread=True),
            now=hub.core.now(),
            cap=0,
        )
        start_waiting(conn, event, None, hub.core.now(), Effects())
        return event["id"]

    rid = await hub.core.store.execute(post)
    r = await client.post(f"/api/v1/approvals/{rid}/decision", json={"decision": "approve"}, headers=ADMIN)
    assert r.status_code == 200 and seen == [(rid, "approved")]


async def test_the_background_sweeper_resolves_due_items(
    make_client: ClientFactory, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    import anyio

    from hubcore.services import resolutions
    from hubcore.services.changes import owner_key

    monkeypatch.setattr(resolutions, "SWEEP_INTERVAL_SECS", 0.02)
    async with make_client() as client:
        await client.make_project("proj")
        hub = client.app.hub
        q = await ask(hub, HUMAN, expires_in_seconds=60)
        with hub.changes.waiter(lambda c: c.resolved and c.event_id == q, [owner_key(HUMAN.actor)]) as waiter:
            clock.advance(3600)
            with anyio.fail_after(5):
                await waiter.wait()  # nobody read or swept: the background task did
        assert rows(client, "SELECT COUNT(*) FROM events WHERE kind = 'answer' AND actor = 'hub'") == 1
