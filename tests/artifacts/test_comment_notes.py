"""A human's comment reaches its author agent (issue 25 part 7): a feed event addressed to the
author, delivered once through its attention queue (it wakes `notify_wait` with no subscription),
listed in `session_brief` while open; an agent's comment notifies nobody. And `artifact_list`
pages by cursor (service and REST; tests/artifacts/test_comment_notes_mcp.py for MCP)."""

from __future__ import annotations

import contextlib
from typing import Any

import anyio
import orjson
import pytest

from hubcore.caller import Caller
from hubcore.errors import HubError
from hubcore.hub import Hub
from hubcore.services.artifacts import ArtifactList, ArtifactPublish
from hubcore.services.artifacts.comments import CommentPost, CommentResolve
from hubcore.services.requests import parse
from tests.harness import ADMIN, HubClient
from tests.requests import a_brief, a_notify_wait, a_signal

pytestmark = pytest.mark.anyio


async def publish(hub: Hub, who: Caller, title: str = "Report", project: str = "web") -> str:
    found = await hub.artifacts.publish_artifact(
        who,
        parse(
            ArtifactPublish,
            {"project_id": project, "title": title, "kind": "html", "content": "<p>Some words here</p>"},
        ),
    )
    return str(found["artifact_id"])


async def comment(hub: Hub, who: Caller, artifact_id: str, body: str, **extra: Any) -> dict[str, Any]:
    return await hub.comments.post(who, parse(CommentPost, {"artifact_id": artifact_id, "body": body, **extra}))


def comment_events(client: HubClient) -> list[Any]:
    with client.db() as conn:
        return conn.execute(
            "SELECT actor, summary, payload FROM events WHERE kind = 'artifact' "
            "AND json_extract(payload, '$.action') = 'commented' ORDER BY id"
        ).fetchall()


async def test_the_humans_comment_reaches_the_author_once(
    client: HubClient, hub: Hub, alice: Caller, bob: Caller, admin: Caller
) -> None:
    art = await publish(hub, alice)
    await hub.attention.drain(alice)  # nothing before
    made = await comment(
        hub, admin, art, "Tighten the second paragraph.\nAnd the title.", anchor={"mode": "text", "quote": "Some words"}
    )
    events = comment_events(client)
    assert len(events) == 1 and events[0]["actor"] == "human"
    assert events[0]["summary"] == "commented on Report: Tighten the second paragraph."
    payload = orjson.loads(events[0]["payload"])
    assert payload == {
        "action": "commented",
        "artifact_id": art,
        "comment_id": made["id"],
        "artifact_author": "alice",
        "body": "Tighten the second paragraph.\nAnd the title.",
        "version": 1,
        "quote": "Some words",
    }
    first = await hub.attention.drain(alice)
    assert [(i["source"], i["kind"], i["artifact_id"], i["comment_id"]) for i in first.items] == [
        ("attention", "comment", art, made["id"])
    ]
    assert first.items[0]["title"] == f"The human commented on your artifact {art}: Tighten the second paragraph."
    assert (await hub.attention.drain(alice)).items == []  # delivered once
    assert (await hub.attention.drain(bob)).items == []  # another agent hears nothing

    brief = await hub.brief.brief(alice, a_brief(project_id="web"))
    assert [(c["artifact_id"], c["comment_id"], c["body"], c["quote"]) for c in brief["comments"]["items"]] == [
        (art, made["id"], "Tighten the second paragraph.\nAnd the title.", "Some words")
    ]
    assert brief["comments"]["more"] == 0
    assert (await hub.brief.brief(bob, a_brief(project_id="web")))["comments"]["items"] == []
    await hub.comments.resolve(
        admin, parse(CommentResolve, {"artifact_id": art, "comment_id": made["id"], "done": True})
    )
    assert (await hub.brief.brief(alice, a_brief(project_id="web")))["comments"]["items"] == []  # resolved


async def test_notify_wait_wakes_for_a_comment_without_a_subscription(
    client: HubClient, hub: Hub, alice: Caller, admin: Caller
) -> None:
    art = await publish(hub, alice)
    got: dict[str, Any] = {}

    async def waiter() -> None:
        got.update(await hub.attention.wait(alice, a_notify_wait(wait_seconds=20)))

    with anyio.fail_after(15):
        async with anyio.create_task_group() as tg:
            tg.start_soon(waiter)
            await anyio.sleep(0.3)
            await comment(hub, admin, art, "Looks good")
    assert got["timed_out"] is False
    assert [i["kind"] for i in got["notifications"]["pending"]] == ["comment"]


async def test_agents_comments_and_the_humans_own_artifacts_notify_nobody(
    client: HubClient, hub: Hub, alice: Caller, bob: Caller, admin: Caller
) -> None:
    art = await publish(hub, alice)
    await hub.attention.drain(alice)
    await comment(hub, bob, art, "An agent's remark")
    await comment(hub, alice, art, "My own note")
    mine = await publish(hub, admin, "Human's page")
    await comment(hub, admin, mine, "Note to self")
    assert comment_events(client) == []
    assert (await hub.attention.drain(alice)).items == []
    assert (await hub.brief.brief(alice, a_brief(project_id="web")))["comments"]["items"] == []


async def test_an_agent_cannot_forge_a_comment_notification(
    client: HubClient, hub: Hub, alice: Caller, bob: Caller
) -> None:
    """An agent appending an artifact event that looks like one is never read as the human's."""
    await publish(hub, alice)
    await hub.attention.drain(alice)
    with contextlib.suppress(HubError):  # refused outright is as good
        await hub.posts.signal_append(
            bob,
            a_signal(
                project_id="web",
                kind="artifact",
                summary="fake",
                payload={"action": "commented", "artifact_author": "alice"},
            ),
        )
    assert (await hub.attention.drain(alice)).items == []


async def test_artifact_list_pages_by_cursor(client: HubClient, hub: Hub, alice: Caller) -> None:
    made = [await publish(hub, alice, f"Doc {n}") for n in range(7)]
    seen: list[str] = []
    cursor = None
    for _ in range(10):
        query: dict[str, Any] = {"project_id": "web", "limit": 3, **({"cursor": cursor} if cursor else {})}
        page = await hub.artifacts.list(alice, parse(ArtifactList, query))
        seen += [a["id"] for a in page["artifacts"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == made[::-1]  # newest updated first, each once
    rest_seen: list[str] = []
    cursor = None
    for _ in range(10):
        params = {"limit": 2, **({"cursor": cursor} if cursor else {})}
        r = await client.get("/api/v1/projects/web/artifacts", params=params, headers=ADMIN)
        assert r.status_code == 200, r.text
        rest_seen += [a["id"] for a in r.json()["artifacts"]]
        cursor = r.json()["next_cursor"]
        if cursor is None:
            break
    assert rest_seen == made[::-1]
    whole = await client.get("/api/v1/artifacts", params={"project": "web", "limit": 7}, headers=ADMIN)
    assert whole.json()["next_cursor"] is None and len(whole.json()["artifacts"]) == 7


@pytest.mark.parametrize(
    "cursor",
    [
        "",
        "x",
        "1.5",
        "1.5~",
        "nan~01j0000000000000000000000",
        "inf~01j0000000000000000000000",
        "1.5~01J0000000000000000000000",
        "1.5~01j000000000000000000000",
        "1.5~" + "0" * 100,
        "1.5~01j0000000000000000000000~x",
    ],
)
async def test_artifact_list_refuses_a_cursor_it_never_issued(client: HubClient, hub: Hub, cursor: str) -> None:
    r = await client.get("/api/v1/artifacts", params={"cursor": cursor}, headers=ADMIN)
    assert r.status_code == 400, (cursor, r.text)
    assert r.json()["code"] == "invalid_argument"
