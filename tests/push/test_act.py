"""`POST /api/v1/push/act`: a notification button resolves exactly its item with exactly its choice,
once, as the human; every other use of a capability is refused with nothing written."""

from __future__ import annotations

from typing import Any

import pytest

from hubcore.caller import Caller
from hubcore.clock import FakeClock
from hubcore.services.inbox import InboxWait
from hubcore.services.push import caps
from hubcore.services.requests import parse
from tests.harness import ADMIN, HubClient
from tests.push.conftest import register, settled
from tests.push.receiver import PushService
from tests.push.test_send import ask, post, setup

pytestmark = pytest.mark.anyio


def state(client: HubClient) -> tuple[Any, ...]:
    """What a refusal must leave as it was: events, inbox rows, devices, idempotency keys."""
    with client.db() as conn:
        return tuple(
            tuple(tuple(r) for r in conn.execute(sql))
            for sql in (
                "SELECT id, kind, actor, payload FROM events ORDER BY id",
                "SELECT event_id, status, resolution_id FROM inbox ORDER BY event_id",
                "SELECT id FROM push_devices ORDER BY id",
                "SELECT COUNT(*) FROM idempotency_keys",
            )
        )


async def pushed(client: HubClient, pushes: PushService) -> dict[str, str]:
    message = (await pushes.next())["message"]
    await settled(client)
    return {a["action"]: a["cap"] for a in message["actions"]}


async def act(client: HubClient, cap: str, **headers: str) -> Any:
    return await client.post("/api/v1/push/act", json={"cap": cap}, headers=headers)


async def test_an_option_button_answers_the_question_as_the_human(client: HubClient, pushes: PushService) -> None:
    await setup(client)
    await register(client, pushes.device())
    question = await ask(client, options=["Yes", "Not yet"])
    buttons = await pushed(client, pushes)
    r = await act(client, buttons["o1"])  # no token: the capability is the authority
    assert r.status_code == 200, r.text
    assert r.json()["item_id"] == question and r.json()["action"] == "o1"
    [item] = (await client.get("/api/v1/inbox?status=resolved", headers=ADMIN)).json()["items"]
    assert item["answer"]["body"] == "Not yet" and item["answer"]["actor"] == "human"
    assert item["answer"]["event_id"] == r.json()["event_id"]
    # The same answer event and inbox resolution as one made in the app: the agent's wait sees it.
    waited = await client.app.hub.inbox.wait(Caller.agent("bot"), parse(InboxWait, {"wait_seconds": 0}))
    assert waited["items"][0]["answer"]["body"] == "Not yet"


async def test_approve_and_decline_buttons_decide(client: HubClient, pushes: PushService) -> None:
    await setup(client)
    await register(client, pushes.device())
    approval = await post(client, "approval", "Deploy?")
    buttons = await pushed(client, pushes)
    assert (await act(client, buttons["decline"])).status_code == 200
    [item] = (await client.get("/api/v1/inbox?status=resolved", headers=ADMIN)).json()["items"]
    assert item["event_id"] == approval and item["decision"]["decision"] == "declined"
    assert item["decision"]["actor"] == "human"


async def test_every_refusal_writes_nothing(client: HubClient, pushes: PushService, clock: FakeClock) -> None:
    await setup(client)
    phone = await register(client, pushes.device())
    await register(client, pushes.device(), name="tablet")
    first = await ask(client, "First?", options=["Yes", "No"])
    await pushes.next()
    await pushes.next()
    await settled(client)
    [phone_push] = [p for p in pushes.received if p["path"] == "/push/0"]  # the two devices' sends race
    one = {a["action"]: a["cap"] for a in phone_push["message"]["actions"]}
    second = await ask(client, "Second?", options=["Yes", "No"])
    await pushes.next()
    await pushes.next()
    await settled(client)
    secret = client.app.hub.push.keys.act_secret
    cap = caps.read(secret, one["o0"], clock.now())
    assert cap is not None
    forged_item = one["o0"].replace(first, second)  # the first question's mac on the second question
    tampered_action = one["o0"].replace(".o0.", ".o1.")
    refusals = {
        "wrong item": forged_item,
        "another action": tampered_action,
        "garbage": "a1.x.y.o0.1.zzzzzzzzzzzzzzzzzzzzzz",
        "too long": "a" * 201,
        "an option the question lacks": caps.mint(secret, caps.Capability(phone["id"], first, "o5", cap.expires)),
        "approve on a question": caps.mint(secret, caps.Capability(phone["id"], first, "approve", cap.expires)),
    }
    before = state(client)
    for what, text in refusals.items():
        r = await act(client, text)
        assert r.status_code in (400, 404), what
        assert r.json()["code"] in ("not_found", "invalid_argument"), what
        assert state(client) == before, what
    for body in ({}, {"cap": 5}, {"cap": None}, {"cap": one["o0"], "extra": 1}):
        r = await client.post("/api/v1/push/act", json=body)
        assert r.status_code == 400 and state(client) == before
    # Expired: the capability's expiry passed (the hub's clock).
    clock.advance(7 * 86400 + 1)
    r = await act(client, one["o0"])
    assert r.status_code == 404 and state(client) == before
    clock.advance(-(7 * 86400 + 1))
    # Revoked device: its capabilities die with it.
    assert (await client.delete(f"/api/v1/push/devices/{phone['id']}", headers=ADMIN)).status_code == 204
    before = state(client)
    r = await act(client, one["o0"])
    assert r.status_code == 404 and r.json()["code"] == "not_found" and state(client) == before


async def test_a_resolved_item_is_409_and_a_replay_answers_nothing_twice(
    client: HubClient, pushes: PushService
) -> None:
    await setup(client)
    await register(client, pushes.device())
    question = await ask(client, options=["Yes", "No"])
    buttons = await pushed(client, pushes)
    assert (await act(client, buttons["o0"])).status_code == 200
    await pushes.next()  # the close update
    before = state(client)
    for cap in (buttons["o0"], buttons["o1"]):  # the replay, and the other button
        r = await act(client, cap)
        assert r.status_code == 409 and r.json()["code"] == "conflict"
        assert state(client) == before
    # Answered in the app first: the button then says so too.
    other = await ask(client, "Other?", options=["A", "B"])
    later = await pushed(client, pushes)
    r = await client.post(f"/api/v1/questions/{other}/answer", json={"body": "A"}, headers=ADMIN)
    assert r.status_code == 200
    before = state(client)
    assert (await act(client, later["o1"])).status_code == 409 and state(client) == before
    assert question != other
