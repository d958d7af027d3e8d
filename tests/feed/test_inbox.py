"""The inbox: item shape, listing filters, read state, read-all and the agents' inbox_read."""

from __future__ import annotations

import pytest

from hubcore.caller import Caller
from hubcore.errors import HubError
from hubcore.hub import Hub
from tests.feed.conftest import approval, ask, rows, signal
from tests.harness import ADMIN, HubClient
from tests.requests import a_decision, a_signal, an_answer, an_inbox_mark, an_inbox_read

pytestmark = pytest.mark.anyio


async def inbox(client: HubClient, **params: object) -> list[dict]:  # type: ignore[type-arg]
    r = await client.get("/api/v1/inbox", params=params, headers=ADMIN)
    assert r.status_code == 200, r.text
    return list(r.json()["items"])


async def idea(hub: Hub, who: Caller, project: str = "proj", text: str = "idea") -> str:
    return str(
        (await hub.posts.signal_append(who, a_signal(project_id=project, kind="idea", summary=text)))["event_id"]
    )


async def test_item_shapes(client: HubClient, hub: Hub, bot: Caller) -> None:
    q = await ask(hub, bot, options=["a", "b"], body="Details", expires_in_seconds=600)
    a = await approval(hub, bot, expires_in_seconds=60, on_expiry="approve")
    i = await idea(hub, bot)
    await signal(hub, bot)  # a plain signal has no inbox item
    items = {it["event_id"]: it for it in await inbox(client)}
    assert list(items) == [i, a, q]
    question = items[q]
    assert question["status"] == "waiting" and question["kind"] == "question" and question["actor"] == "bot"
    assert question["project_display_name"] == "proj" and question["answer"] is None
    assert question["payload"] == {"body": "Details", "options": ["a", "b"]}
    assert question["expires_at"] and question["on_expiry"] is None and question["expired"] is False
    assert items[a]["decision"] is None and items[a]["on_expiry"] == "approve"
    assert items[i]["status"] == "unread" and "expires_at" not in items[i]
    for field in (
        "event_id",
        "project_id",
        "project_display_name",
        "kind",
        "actor",
        "summary",
        "payload",
        "status",
        "created_at",
        "updated_at",
    ):
        assert field in items[i]
    await hub.resolutions.answer(Caller.admin(), an_answer(question_id=q, body="a"))
    await hub.resolutions.decide(Caller.admin(), a_decision(approval_id=a, decision="decline", note=" not now "))
    items = {it["event_id"]: it for it in await inbox(client)}
    answer = items[q]["answer"]
    assert items[q]["status"] == "resolved" and answer["body"] == "a" and answer["actor"] == "human"
    assert answer["event_id"] > q and answer["answered_at"]
    decision = items[a]["decision"]
    assert decision["decision"] == "declined" and decision["note"] == "not now" and decision["actor"] == "human"
    assert decision["decided_at"] and decision["event_id"] > a


async def test_listing_filters(client: HubClient, hub: Hub, bot: Caller) -> None:
    await client.make_project("other")
    q = await ask(hub, bot)
    i1 = await idea(hub, bot)
    i2 = await idea(hub, bot, "other")
    assert [it["event_id"] for it in await inbox(client, status="waiting")] == [q]
    assert [it["event_id"] for it in await inbox(client, status="unread")] == [i2, i1]
    assert [it["event_id"] for it in await inbox(client, unread_only="1")] == [i2, i1]
    assert [it["event_id"] for it in await inbox(client, unread_only="true", status="unread")] == [i2, i1]
    assert [it["event_id"] for it in await inbox(client, project="other")] == [i2]
    assert [it["event_id"] for it in await inbox(client, limit=1)] == [i2]
    assert len(await inbox(client, limit=500)) == 3
    for params in (
        {"unread_only": "1", "status": "waiting"},
        {"status": "nope"},
        {"limit": "0"},
        {"limit": "501"},
        {"unread_only": "maybe"},
    ):
        r = await client.get("/api/v1/inbox", params=params, headers=ADMIN)
        assert r.status_code == 400 and r.json()["code"] == "invalid_argument", params


async def test_read_and_unread(client: HubClient, hub: Hub, bot: Caller) -> None:
    i = await idea(hub, bot)
    q = await ask(hub, bot)

    async def move(eid: str, to: str) -> dict:  # type: ignore[type-arg]
        r = await client.post(f"/api/v1/inbox/{eid}/{to}", headers=ADMIN)
        assert r.status_code == 200, r.text
        return dict(r.json())

    assert await move(i, "read") == {"event_id": i, "status": "read", "changed": True}
    assert await move(i, "read") == {"event_id": i, "status": "read", "changed": False}
    assert await move(i, "unread") == {"event_id": i, "status": "unread", "changed": True}
    assert await move(q, "read") == {"event_id": q, "status": "waiting", "changed": False}
    await hub.resolutions.answer(Caller.admin(), an_answer(question_id=q, body="ok"))
    assert await move(q, "unread") == {"event_id": q, "status": "resolved", "changed": False}
    plain = await signal(hub, bot)
    for eid in (plain, "01ZZZZZZZZZZZZZZZZZZZZZZZZ", "nonsense"):
        r = await client.post(f"/api/v1/inbox/{eid}/read", headers=ADMIN)
        assert r.status_code == 404 and r.json()["code"] == "not_found"


async def test_read_all(client: HubClient, hub: Hub, bot: Caller) -> None:
    await client.make_project("other")
    await idea(hub, bot)
    await idea(hub, bot)
    await idea(hub, bot, "other")
    await ask(hub, bot)
    r = await client.post("/api/v1/inbox/read-all", json={"project_id": "proj"}, headers=ADMIN)
    assert r.status_code == 200 and r.json() == {"marked": 2}
    r = await client.post("/api/v1/inbox/read-all", headers=ADMIN)
    assert r.json() == {"marked": 1}
    r = await client.post("/api/v1/inbox/read-all", headers=ADMIN)
    assert r.json() == {"marked": 0}
    assert rows(client, "SELECT COUNT(*) FROM inbox WHERE status = 'read'") == 3
    assert rows(client, "SELECT COUNT(*) FROM inbox WHERE status = 'waiting'") == 1


async def test_inbox_read_for_agents(client: HubClient, hub: Hub, bot: Caller) -> None:
    await client.make_project("secret", confidential=True)
    await client.make_agent("bob")
    bob = Caller.agent("bob")
    q1 = await ask(hub, bot)
    q2 = await ask(hub, bob)
    hidden = await idea(hub, Caller.admin(), "secret")
    page = await hub.inbox.inbox_read(bot, an_inbox_read())
    assert [it["event_id"] for it in page["items"]] == [q2, q1] and page["next_since"] == q2
    assert [it["event_id"] for it in (await hub.inbox.inbox_read(bot, an_inbox_read(actor="bob")))["items"]] == [q2]
    assert (await hub.inbox.inbox_read(bot, an_inbox_read(status="unread")))["items"] == []
    assert (await hub.inbox.inbox_read(bot, an_inbox_read(project_id="secret")))["items"] == []
    page = await hub.inbox.inbox_read(bot, an_inbox_read(since=q1))
    assert [it["event_id"] for it in page["items"]] == [q2] and page["next_since"] == q2
    empty = await hub.inbox.inbox_read(bot, an_inbox_read(since=q2))
    assert empty == {"items": [], "next_since": q2}
    admin = await hub.inbox.inbox_read(Caller.admin(), an_inbox_read(since=q2))
    assert [it["event_id"] for it in admin["items"]] == [hidden]
    with pytest.raises(HubError):
        await hub.inbox.inbox_read(bot, an_inbox_read(since="bad"))
    with pytest.raises(HubError) as err:
        await hub.inbox.mark(bot, an_inbox_mark(event_id=hidden), "read")
    assert err.value.code == "forbidden"  # marking is the human's alone, seen or not
