"""Web Push, server side: keys, devices, and what the hub sends (checked and decrypted by a loopback
push service with the device's own keys)."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

import pytest

from hubcore.caller import Caller
from hubcore.services.push import caps
from hubcore.services.push.keys import KEYS_PATH
from tests.harness import ADMIN, HubClient
from tests.push.conftest import register, sends, settled
from tests.push.receiver import PushService
from tests.requests import a_question, a_signal

pytestmark = pytest.mark.anyio
BOT = Caller.agent("bot")


async def setup(client: HubClient) -> None:
    await client.make_agent("bot")
    await client.make_project("proj", display_name="Web shop")


async def ask(client: HubClient, summary: str = "Ship it?", **body: Any) -> str:
    result = await client.app.hub.posts.question_post(BOT, a_question(project_id="proj", summary=summary, **body))
    return str(result["event_id"])


async def post(client: HubClient, kind: str, summary: str = "Done", **body: Any) -> str:
    result = await client.app.hub.posts.signal_append(
        BOT, a_signal(project_id="proj", kind=kind, summary=summary, **body)
    )
    return str(result["event_id"])


def device_rows(client: HubClient) -> list[dict[str, Any]]:
    with client.db() as conn:
        return [dict(r) for r in conn.execute("SELECT * FROM push_devices ORDER BY id")]


async def test_keys_are_made_once_private_and_served_to_the_admin_only(client: HubClient) -> None:
    path = Path(client.app.settings.data_dir) / KEYS_PATH
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    r = await client.get("/api/v1/push/key", headers=ADMIN)
    assert r.status_code == 200
    key = r.json()["public_key"]
    assert len(key) == 87 and r.json()["contact"].startswith("mailto:")  # 65 bytes, base64url
    assert client.app.hub.push.keys.public_key == key
    for headers in ({}, client.agent(await client.make_agent("bot"))):
        assert (await client.get("/api/v1/push/key", headers=headers)).status_code == 401


async def test_devices_register_replace_rename_and_revoke(client: HubClient, pushes: PushService) -> None:
    phone = pushes.device()
    made = await register(client, phone, name="Pixel")
    assert made["name"] == "Pixel" and made["push_service"] == pushes.origin and made["last_delivered_at"] is None
    assert made["filters"] == {
        "kinds": ["question", "approval", "enrol_request", "finished", "idea"],
        "projects": None,
        "min_priority": "low",
        "quiet_hours": None,
        "content": "full",
    }
    assert "endpoint" not in made  # the endpoint is a capability: never shown back
    again = await client.post("/api/v1/push/devices", json=phone.subscription(name="Pixel 9"), headers=ADMIN)
    assert again.status_code == 200 and again.json()["id"] == made["id"] and again.json()["name"] == "Pixel 9"
    r = await client.patch(
        f"/api/v1/push/devices/{made['id']}",
        headers=ADMIN,
        json={"filters": {"kinds": ["question"], "content": "contentless"}},
    )
    assert r.status_code == 200 and r.json()["filters"]["kinds"] == ["question"]
    assert r.json()["name"] == "Pixel 9"
    listed = (await client.get("/api/v1/push/devices", headers=ADMIN)).json()["devices"]
    assert [d["id"] for d in listed] == [made["id"]]
    assert (await client.delete(f"/api/v1/push/devices/{made['id']}", headers=ADMIN)).status_code == 204
    assert (await client.delete(f"/api/v1/push/devices/{made['id']}", headers=ADMIN)).status_code == 404
    assert device_rows(client) == []


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"endpoint": "ftp://x/y"}, "endpoint"),
        ({"endpoint": "https://user:pw@push.example/x"}, "endpoint"),
        ({"keys": {"p256dh": "AAAA", "auth": "AAAAAAAAAAAAAAAAAAAAAA"}}, "keys.p256dh"),
        ({"keys": {"auth": "AAAAAAAAAAAAAAAAAAAAAA"}}, "keys.p256dh"),
        ({"name": ""}, "name"),
        ({"name": "x" * 81}, "name"),
        ({"filters": {"kinds": []}}, "filters.kinds"),
        ({"filters": {"kinds": ["question", "question"]}}, "filters.kinds"),
        ({"filters": {"kinds": ["signal"]}}, "filters.kinds.0"),
        ({"filters": {"min_priority": "urgent"}}, "filters.min_priority"),
        (
            {"filters": {"quiet_hours": {"start": "24:00", "end": "07:00", "time_zone": "UTC"}}},
            "filters.quiet_hours.start",
        ),
        (
            {"filters": {"quiet_hours": {"start": "22:00", "end": "07:00", "time_zone": "Mars/Olympus"}}},
            "filters.quiet_hours.time_zone",
        ),
        ({"filters": {"projects": ["Not A Slug"]}}, "filters.projects.0"),
        ({"filters": {"content": "some"}}, "filters.content"),
        ({"extra": 1}, "extra"),
    ],
)
async def test_a_bad_subscription_is_refused_naming_the_member(
    client: HubClient, pushes: PushService, change: dict[str, Any], field: str
) -> None:
    body = {**pushes.device().subscription(), **change}
    r = await client.post("/api/v1/push/devices", json=body, headers=ADMIN)
    assert r.status_code == 400, r.text
    assert r.json()["code"] == "invalid_argument" and r.json()["details"]["field"] == field
    assert device_rows(client) == []


async def test_a_question_is_pushed_encrypted_with_its_options_as_actions(
    client: HubClient, pushes: PushService
) -> None:
    await setup(client)
    device = await register(client, pushes.device())
    question = await ask(
        client, "Ship the release?", body="Tests pass.", options=["Yes", "Not yet"], expires_in_seconds=3600
    )
    sent = await pushes.next()
    await settled(client)
    assert sent["headers"]["urgency"] == "high" and sent["headers"]["topic"] == question
    assert sent["headers"]["ttl"] == "3600"
    message = sent["message"]
    assert message["type"] == "item" and message["id"] == question and message["kind"] == "question"
    assert message["title"] == "Ship the release?"
    assert message["body"] == "bot asks · Web shop\nTests pass."
    assert message["url"] == f"/#/inbox?item={question}" and message["badge"] == 1
    assert [(a["action"], a["title"]) for a in message["actions"]] == [("o0", "Yes"), ("o1", "Not yet")]
    for action in message["actions"]:
        cap = caps.read(client.app.hub.push.keys.act_secret, action["cap"], client.app.hub.core.now())
        assert cap is not None and (cap.device_id, cap.item_id, cap.action) == (
            device["id"],
            question,
            action["action"],
        )
    assert sent["claims"]["k"] == client.app.hub.push.keys.public_key
    [row] = device_rows(client)
    assert row["last_result"] == "delivered" and row["last_delivered_at"] is not None
    assert sends(client, "delivered") == 1


async def test_an_answer_closes_the_notification_everywhere_it_was_shown(
    client: HubClient, pushes: PushService
) -> None:
    await setup(client)
    await register(client, pushes.device())
    await register(client, pushes.device(), name="tablet", filters={"kinds": ["approval"]})
    question = await ask(client)
    await pushes.next()
    await settled(client)
    r = await client.post(f"/api/v1/questions/{question}/answer", json={"body": "yes"}, headers=ADMIN)
    assert r.status_code == 200
    closed = await pushes.next()
    await settled(client)
    assert closed["path"] == "/push/0"  # the tablet was never shown the question
    assert closed["message"] == {"v": 1, "type": "close", "id": question, "badge": 0}
    assert closed["headers"]["topic"] == question and closed["headers"]["urgency"] == "normal"
    assert len(pushes.received) == 2


async def test_an_approval_carries_approve_and_decline_and_contentless_hides_the_text(
    client: HubClient, pushes: PushService
) -> None:
    await setup(client)
    await register(client, pushes.device(), filters={"content": "contentless"})
    await post(client, "approval", "Deploy the secret project?", body="It touches billing.")
    message = (await pushes.next())["message"]
    assert message["title"] == "Agent Hub" and message["body"] == "Something is waiting for you in Agent Hub."
    assert [a["action"] for a in message["actions"]] == ["approve", "decline"]
    assert not any(word in str(message) for word in ("secret", "billing", "bot", "proj", "Web shop"))


async def test_a_push_service_that_forgot_the_device_removes_it(client: HubClient, pushes: PushService) -> None:
    await setup(client)
    phone = pushes.device()
    await register(client, phone)
    pushes.status["/push/0"] = [410]
    await ask(client)
    await pushes.next()
    await settled(client)
    assert device_rows(client) == [] and sends(client, "gone") == 1


async def test_busy_push_services_are_retried_with_bounded_backoff(client: HubClient, pushes: PushService) -> None:
    await setup(client)
    await register(client, pushes.device())
    pushes.status["/push/0"] = [429, 503]
    await ask(client)
    for _ in range(3):
        await pushes.next()
    await settled(client)
    assert [r["status"] for r in pushes.received] == [429, 503, 201]
    assert client.slept == [1.0, 4.0]  # type: ignore[attr-defined]
    assert sends(client, "retried") == 2 and sends(client, "delivered") == 1
    pushes.status["/push/0"] = [500, 500, 500, 500, 500]
    await ask(client, "Again?")
    for _ in range(4):
        await pushes.next()
    await settled(client)
    assert sends(client, "failed") == 1 and len(pushes.received) == 7  # 1 try + 3 retries, then it gives up
    [row] = device_rows(client)
    assert row["last_result"] == "failed"
    metrics = await client.get("/metrics", headers=ADMIN)
    assert 'hub_push_sends_total{result="failed"} 1.0' in metrics.text


async def test_a_test_push_reports_its_result(client: HubClient, pushes: PushService) -> None:
    device = await register(client, pushes.device(), name="Pixel")
    r = await client.post(f"/api/v1/push/devices/{device['id']}/test", headers=ADMIN)
    assert r.status_code == 200 and r.json() == {"device_id": device["id"], "result": "delivered"}
    assert (await pushes.next())["message"]["body"] == "Push works on Pixel."
    assert (await client.post("/api/v1/push/devices/dev_0000000000000000/test", headers=ADMIN)).status_code == 404


async def test_nothing_is_sent_to_nobody_and_writes_never_wait(client: HubClient, pushes: PushService) -> None:
    await setup(client)
    await ask(client)
    await settled(client)
    assert pushes.received == [] and sends(client, "delivered") == 0
