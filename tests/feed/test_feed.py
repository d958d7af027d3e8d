"""Feed pages, cursors, the seen cursor, ideas, stats, unseen counts and project deletion."""

from __future__ import annotations

import pytest

from hubcore.caller import Caller
from hubcore.errors import HubError
from hubcore.hub import Hub
from hubcore.parts import Part
from tests.feed.conftest import ask, rows, signal
from tests.harness import ADMIN, HubClient
from tests.requests import a_feed_page, a_feed_read, a_signal

pytestmark = pytest.mark.anyio


async def fill(hub: Hub, who: Caller, n: int, project: str = "proj", **kw: object) -> list[str]:
    return [await signal(hub, who, project, f"e{i}", **kw) for i in range(n)]


async def feed(client: HubClient, path: str = "/api/v1/projects/proj/feed", **params: object) -> dict:  # type: ignore[type-arg]
    r = await client.get(path, params=params, headers=ADMIN)
    assert r.status_code == 200, r.text
    return dict(r.json())


async def test_newest_page_and_backward_walk(client: HubClient, hub: Hub, bot: Caller) -> None:
    made = await fill(hub, bot, 5)
    page = await feed(client, limit=2)
    assert [e["id"] for e in page["events"]] == [made[4], made[3]]
    assert page["next_since"] == made[4] and page["next_before"] == made[3] and page["last_seen"] is None
    back = await feed(client, limit=2, before=page["next_before"])
    assert [e["id"] for e in back["events"]] == [made[2], made[1]]
    assert back["next_since"] is None and back["next_before"] == made[1]
    last = await feed(client, limit=2, before=back["next_before"])
    assert [e["id"] for e in last["events"]] == [made[0]]
    empty = await feed(client, before=made[0])
    assert empty["events"] == [] and empty["next_before"] is None


async def test_forward_walk_is_oldest_first_and_empty_poll_returns_since(
    client: HubClient, hub: Hub, bot: Caller
) -> None:
    made = await fill(hub, bot, 4)
    page = await feed(client, since=made[0], limit=2)
    assert [e["id"] for e in page["events"]] == [made[1], made[2]]
    assert page["next_since"] == made[2] and page["next_before"] == made[1]
    poll = await feed(client, since=made[3])
    assert poll["events"] == [] and poll["next_since"] == made[3]
    both = await feed(client, since=made[0], before=made[3])
    assert [e["id"] for e in both["events"]] == [made[2], made[1]]  # with before: newest first


async def test_event_shape(client: HubClient, hub: Hub, bot: Caller) -> None:
    eid = await signal(hub, bot, text="did a thing", payload={"body": "details"}, session_id="s-1")
    (event,) = (await feed(client))["events"]
    assert event == {
        "id": eid,
        "project_id": "proj",
        "kind": "signal",
        "actor": "bot",
        "summary": "did a thing",
        "payload": {"body": "details"},
        "session_id": "s-1",
        "thread_id": None,
        "created_at": event["created_at"],
    }
    assert event["created_at"].endswith("Z")


async def test_kind_and_session_filters(client: HubClient, hub: Hub, bot: Caller) -> None:
    s = await signal(hub, bot, session_id="s-1")
    f = await signal(hub, bot, kind="finished")
    q = await ask(hub, bot)
    assert [e["id"] for e in (await feed(client, kind="finished"))["events"]] == [f]
    assert [e["id"] for e in (await feed(client, kind="signal,question"))["events"]] == [q, s]
    r = await client.get("/api/v1/projects/proj/feed?kind=signal&kind=finished", headers=ADMIN)
    assert [e["id"] for e in r.json()["events"]] == [f, s]
    assert [e["id"] for e in (await feed(client, session_id="s-1"))["events"]] == [s]
    r = await client.get("/api/v1/projects/proj/feed", params={"kind": "bogus"}, headers=ADMIN)
    assert r.status_code == 400 and r.json()["code"] == "invalid_argument"


async def test_page_size_default_and_cap(client: HubClient, hub: Hub) -> None:
    await client.make_project("proj")

    def bulk(conn):  # type: ignore[no-untyped-def]
        from hubcore.services import events as ev

        for i in range(501):
            ev.insert_event(conn, ev.NewEvent("proj", "signal", "human", f"e{i}", {}), now=hub.core.now(), cap=0)

    await hub.core.store.execute(bulk)
    assert len((await feed(client))["events"]) == 50
    assert len((await feed(client, limit=500))["events"]) == 500
    for bad in ("501", "0", "-1", "ten"):
        r = await client.get("/api/v1/projects/proj/feed", params={"limit": bad}, headers=ADMIN)
        assert r.status_code == 400, bad


async def test_bad_cursors_are_refused(client: HubClient, bot: Caller) -> None:
    for param in ("since", "before"):
        r = await client.get("/api/v1/projects/proj/feed", params={param: "nope"}, headers=ADMIN)
        assert r.status_code == 400 and r.json()["code"] == "invalid_argument"


async def test_unknown_project_feed_is_404(client: HubClient) -> None:
    r = await client.get("/api/v1/projects/nope/feed", headers=ADMIN)
    assert r.status_code == 404 and r.json()["code"] == "not_found"


async def test_global_feed_keeps_to_visible_projects(client: HubClient, hub: Hub, bot: Caller) -> None:
    await client.make_project("secret", confidential=True)
    mine = await signal(hub, bot)
    hidden = await signal(hub, Caller.admin(), "secret")
    page = await feed(client, "/api/v1/feed")
    assert [e["id"] for e in page["events"]] == [hidden, mine]
    agent_page = await hub.feed.global_feed(bot, a_feed_page())
    assert [e["id"] for e in agent_page["events"]] == [mine]
    since = await feed(client, "/api/v1/feed", since=mine)
    assert [e["id"] for e in since["events"]] == [hidden]
    r = await client.get("/api/v1/feed", headers=client.agent(client.bot_token))  # type: ignore[attr-defined]
    assert r.status_code == 401  # the REST feed is the human's


async def test_seen_moves_forward_only(client: HubClient, hub: Hub, bot: Caller) -> None:
    await client.make_project("other")
    a, b = await fill(hub, bot, 2)
    foreign = await signal(hub, bot, "other")

    async def seen(body: object) -> dict:  # type: ignore[type-arg]
        r = await client.post("/api/v1/projects/proj/feed/seen", json=body, headers=ADMIN)
        assert r.status_code == 200, r.text
        return dict(r.json())

    assert (await client.get("/api/v1/projects/proj", headers=ADMIN)).json()["unseen_events"] == 2
    assert await seen({"event_id": a}) == {"project_id": "proj", "last_seen": a, "advanced": True}
    assert (await client.get("/api/v1/projects/proj", headers=ADMIN)).json()["unseen_events"] == 1
    assert await seen({"event_id": a}) == {"project_id": "proj", "last_seen": a, "advanced": False}
    assert await seen({"event_id": foreign}) == {"project_id": "proj", "last_seen": a, "advanced": False}
    assert (await seen({"event_id": "01ZZZZZZZZZZZZZZZZZZZZZZZZ"}))["advanced"] is False  # names nothing
    assert (await seen({"event_id": "garbage"}))["advanced"] is False
    assert await seen({}) == {"project_id": "proj", "last_seen": b, "advanced": True}  # default: newest
    assert (await feed(client))["last_seen"] == b
    r = await client.post("/api/v1/projects/proj/feed/seen", json={"event_id": 5}, headers=ADMIN)
    assert r.status_code == 400
    r = await client.post("/api/v1/projects/nope/feed/seen", json={}, headers=ADMIN)
    assert r.status_code == 404


async def test_unseen_counts_in_one_listing(client: HubClient, hub: Hub, bot: Caller) -> None:
    await client.make_project("quiet")
    await fill(hub, bot, 3)
    projects = (await client.get("/api/v1/projects", headers=ADMIN)).json()["projects"]
    listing = {p["id"]: p["unseen_events"] for p in projects}
    assert listing == {"proj": 3, "quiet": 0, "space-bot": 0}


async def test_idea_route(client: HubClient, bot: Caller) -> None:
    r = await client.post("/api/v1/projects/proj/ideas", json={"body": "Try caching\nmore text"}, headers=ADMIN)
    assert r.status_code == 201, r.text
    eid = r.json()["id"]
    (item,) = (await client.get("/api/v1/inbox", headers=ADMIN)).json()["items"]
    assert item["event_id"] == eid and item["status"] == "unread" and item["kind"] == "idea"
    assert item["summary"] == "Try caching" and item["payload"] == {"body": "Try caching\nmore text"}
    r = await client.post("/api/v1/projects/proj/ideas", json={"summary": "x", "idempotency_key": "i1"}, headers=ADMIN)
    again = await client.post(
        "/api/v1/projects/proj/ideas", json={"summary": "x", "idempotency_key": "i1"}, headers=ADMIN
    )
    assert again.json()["id"] == r.json()["id"]
    before = rows(client, "SELECT COUNT(*) FROM events")
    for bad in ({}, {"summary": "x" * 1025}, {"summary": "x", "payload": "no"}, []):
        r = await client.post("/api/v1/projects/proj/ideas", json=bad, headers=ADMIN)
        assert r.status_code in (400, 413), bad
    assert rows(client, "SELECT COUNT(*) FROM events") == before
    r = await client.post("/api/v1/projects/nope/ideas", json={"summary": "x"}, headers=ADMIN)
    assert r.status_code == 404


async def test_stats(client: HubClient, hub: Hub, bot: Caller, clock) -> None:  # type: ignore[no-untyped-def]
    await client.make_agent("bob")
    await signal(hub, bot)
    clock.advance(1000)
    await ask(hub, Caller.agent("bob"))
    await signal(hub, Caller.admin())
    r = await client.get("/api/v1/projects/proj/stats", headers=ADMIN)
    assert r.status_code == 200
    stats = r.json()
    assert stats["events"] == 3 and stats["threads"] == 1
    assert stats["agents_written"] == 2 and stats["agents_active"] == 1  # bot's write is 1000 s old
    assert stats["disk_bytes"] > 0
    assert stats["artifacts"] == 0 and stats["sessions"] == 0 and stats["kb_pages"] == 0

    class ArtifactsPart(Part):
        async def project_stats(self, project_id: str) -> dict[str, int | None]:
            return {"artifacts": 2, "disk_bytes": 100}

    hub.core.parts = (*hub.core.parts, ArtifactsPart())
    again = (await client.get("/api/v1/projects/proj/stats", headers=ADMIN)).json()
    assert again["artifacts"] == 2 and again["disk_bytes"] == stats["disk_bytes"] + 100
    assert (await client.get("/api/v1/projects/nope/stats", headers=ADMIN)).status_code == 404


async def test_project_deletion_removes_events_and_items(client: HubClient, hub: Hub, bot: Caller) -> None:
    await client.make_project("keep")
    await fill(hub, bot, 2, idempotency_key=None)
    await ask(hub, bot, idempotency_key="k")
    await hub.feed.feed_read(bot, a_feed_read(project_id="proj"))
    kept = await signal(hub, bot, "keep")
    r = await client.delete("/api/v1/projects/proj", headers=ADMIN)
    assert r.status_code == 204
    for table in ("events", "inbox", "feed_stats", "feed_actors", "idempotency_keys"):
        assert rows(client, f"SELECT COUNT(*) FROM {table} WHERE project_id = 'proj'") == 0, table
    assert rows(client, "SELECT COUNT(*) FROM actor_cursors WHERE project_id = 'proj'") == 0
    assert rows(client, "SELECT COUNT(*) FROM events WHERE id = ?", kept) == 1


async def test_agent_feed_cursor(client: HubClient, hub: Hub, bot: Caller) -> None:
    made = await fill(hub, bot, 5)
    first = await hub.feed.feed_read(bot, a_feed_read(project_id="proj", limit=2))  # no cursor yet: from the start
    assert [e["id"] for e in first["events"]] == made[:2] and first["next_since"] == made[1]
    second = await hub.feed.feed_read(bot, a_feed_read(project_id="proj", limit=2))
    assert [e["id"] for e in second["events"]] == made[2:4]
    back = await hub.feed.feed_read(bot, a_feed_read(project_id="proj", before=made[4], limit=10))  # moves nothing
    assert [e["id"] for e in back["events"]] == made[3::-1] and back["next_since"] is None
    third = await hub.feed.feed_read(bot, a_feed_read(project_id="proj"))
    assert [e["id"] for e in third["events"]] == [made[4]]
    empty = await hub.feed.feed_read(bot, a_feed_read(project_id="proj"))
    assert empty["events"] == [] and empty["next_since"] == made[4]
    # An explicit since is honoured and advances the cursor (never backwards).
    again = await hub.feed.feed_read(bot, a_feed_read(project_id="proj", since=made[0], limit=1))
    assert [e["id"] for e in again["events"]] == [made[1]]
    assert (await hub.feed.feed_read(bot, a_feed_read(project_id="proj")))["events"] == []
    newer = await signal(hub, bot)
    assert [e["id"] for e in (await hub.feed.feed_read(bot, a_feed_read(project_id="proj")))["events"]] == [newer]
    # The cursor is the caller's own: another agent starts from the beginning.
    await client.make_agent("bob")
    assert len((await hub.feed.feed_read(Caller.agent("bob"), a_feed_read(project_id="proj")))["events"]) == 6
    with pytest.raises(HubError) as err:
        await hub.feed.feed_read(bot, a_feed_read(project_id="nope"))
    assert err.value.code == "not_found"


async def test_removed_events_keep_the_tallies_true(client: HubClient, hub: Hub, bot: Caller) -> None:
    from hubcore.services import events as ev

    a, b, c = await fill(hub, bot, 3)
    idea = (await hub.posts.signal_append(bot, a_signal(project_id="proj", kind="idea", summary="i")))["event_id"]
    assert await hub.core.store.execute(lambda conn: ev.remove_events(conn, [c, idea, "nope"])) == 2
    with client.db() as conn:
        tally = tuple(conn.execute("SELECT events, newest_id FROM feed_stats WHERE project_id = 'proj'").fetchone())
    assert tally == (2, b) and rows(client, "SELECT COUNT(*) FROM inbox") == 0
    assert (await client.get("/api/v1/projects/proj", headers=ADMIN)).json()["unseen_events"] == 2
    await client.post("/api/v1/projects/proj/feed/seen", json={"event_id": a}, headers=ADMIN)
    assert (await client.get("/api/v1/projects/proj", headers=ADMIN)).json()["unseen_events"] == 1
