"""session_brief: sections, caps, ranking, window bases; it moves no cursor."""

from __future__ import annotations

import pytest

from hubcore.caller import Caller
from hubcore.errors import HubError
from hubcore.hub import Hub
from tests.harness import ADMIN, HubClient
from tests.requests import a_brief, a_feed_read, a_question, a_session_end, a_session_start, a_signal, an_answer

pytestmark = pytest.mark.anyio

ALICE, BOB = Caller.agent("alice"), Caller.agent("bob")


async def signal(hub: Hub, who: Caller, summary: str) -> str:
    return str(
        (await hub.posts.signal_append(who, a_signal(project_id="web", kind="signal", summary=summary)))["event_id"]
    )


async def test_empty_project_brief(hub: Hub) -> None:
    b = await hub.brief.brief(ALICE, a_brief(project_id="web"))
    assert b["since"] == {"basis": "none"} and b["previous_session"] is None
    assert b["answers"] == {"items": [], "more": 0} and b["events"] == {"items": [], "more": 0}
    assert b["stale_pages"] == {"items": [], "more": 0}


async def test_answers_and_events_ranked_and_cut(client: HubClient, hub: Hub) -> None:
    q = await hub.posts.question_post(
        ALICE, a_question(project_id="web", summary="Which database?", options=["sqlite", "postgres"])
    )
    await hub.posts.question_post(ALICE, a_question(project_id="web", summary="Still open?"))
    long = "x" * 300
    await signal(hub, BOB, long)
    own = await signal(hub, ALICE, "my own write")
    answer = await hub.resolutions.answer(Caller.admin(), an_answer(question_id=q["question_id"], body="sqlite"))
    b = await hub.brief.brief(ALICE, a_brief(project_id="web"))
    assert [(a["id"], a["outcome"], a["reply"], a["who"]) for a in b["answers"]["items"]] == [
        (q["question_id"], "answered", "sqlite", "human")
    ]
    assert b["answers"]["items"][0]["answer_id"] == answer["event_id"]
    items = b["events"]["items"]
    assert items[0]["open"] is True and items[0]["summary"] == "Still open?"
    assert items[1]["actor"] == "bob" and items[1]["truncated"] is True and len(items[1]["summary"]) == 200
    assert [i["id"] for i in items].index(own) > 1
    assert answer["event_id"] not in [i["id"] for i in items]


async def test_events_cap_and_more(hub: Hub) -> None:
    for i in range(25):
        await signal(hub, BOB, f"work {i}")
    b = await hub.brief.brief(ALICE, a_brief(project_id="web"))
    assert len(b["events"]["items"]) == 20 and b["events"]["more"] == 5
    assert b["events"]["items"][0]["summary"] == "work 24"


async def test_window_from_feed_cursor_and_no_cursor_moves(hub: Hub) -> None:
    await signal(hub, BOB, "old")
    page = await hub.feed.feed_read(ALICE, a_feed_read(project_id="web"))
    cursor = page["next_since"]
    await signal(hub, BOB, "new")
    b = await hub.brief.brief(ALICE, a_brief(project_id="web"))
    assert b["since"] == {"basis": "feed_cursor", "event_id": cursor}
    assert [i["summary"] for i in b["events"]["items"]] == ["new"]
    again = await hub.brief.brief(ALICE, a_brief(project_id="web"))
    assert again == b
    follow = await hub.feed.feed_read(ALICE, a_feed_read(project_id="web"))
    assert [e["summary"] for e in follow["events"]] == ["new"]


async def test_window_from_previous_session(client: HubClient, hub: Hub) -> None:
    s = await hub.sessions.start(ALICE, a_session_start("web", "first"))
    await hub.sessions.end(ALICE, a_session_end(session_id=s["session_id"], handoff="the full handoff " + "y" * 400))
    client.app.hub.core.clock.advance(5)  # type: ignore[attr-defined]
    await signal(hub, BOB, "after you left")
    b = await hub.brief.brief(ALICE, a_brief(project_id="web"))
    assert b["since"]["basis"] == "previous_session"
    prev = b["previous_session"]
    assert prev["session_id"] == s["session_id"] and prev["status"] == "ended"
    assert prev["handoff"].endswith("y" * 400) and prev["recovery_path"] == "/fs/recovery.md"
    assert [i["summary"] for i in b["events"]["items"]] == ["after you left"]


async def test_needs_read_access(client: HubClient, hub: Hub) -> None:
    await client.make_project("secret", confidential=True)
    with pytest.raises(HubError) as caught:
        await hub.brief.brief(BOB, a_brief(project_id="secret"))
    assert caught.value.code == "not_found"
    r = await client.get("/api/v1/projects/secret", headers=ADMIN)
    assert r.status_code == 200
