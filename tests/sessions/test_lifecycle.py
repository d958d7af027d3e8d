"""Session lifecycle: start, resume, adopt, fork, end, reassign; REST reads."""

from __future__ import annotations

from dataclasses import replace

import anyio
import pytest

from hubcore.caller import Caller
from hubcore.clock import FakeClock
from hubcore.config import HubSettings
from hubcore.errors import HubError
from hubcore.hub import Hub
from tests.foundation.test_gate import assert_problem
from tests.harness import ADMIN, HubClient, hub_client
from tests.requests import a_brain_put, a_session_end, a_session_list, a_session_start, a_signal

pytestmark = pytest.mark.anyio

ALICE, BOB = Caller.agent("alice"), Caller.agent("bob")


def session_events(client: HubClient, session_id: str) -> list[tuple[str, str]]:
    with client.db() as conn:
        rows = conn.execute(
            "SELECT actor, payload FROM events WHERE kind = 'session' AND session_id = ? ORDER BY id", (session_id,)
        ).fetchall()
    import json

    return [(r[0], json.loads(r[1])["action"]) for r in rows]


async def test_start_registers_then_is_idempotent_on_name(client: HubClient, hub: Hub) -> None:
    first = await hub.sessions.start(ALICE, a_session_start("web", "refactor"))
    assert first["started"] == "created" and first["owner"] == "alice" and first["status"] == "active"
    assert first["namespaces"] == ["/fs/", "/kv/"] and first["recovery_path"] == "/fs/recovery.md"
    assert first["handoff"] is None and first["lineage"] is None and first["brain_bytes"] == 0
    again = await hub.sessions.start(ALICE, a_session_start("web", "refactor"))
    assert again["session_id"] == first["session_id"] and again["started"] == "resumed"
    assert session_events(client, first["session_id"]) == [("alice", "started")]
    # Same name, other owner: a different session.
    other = await hub.sessions.start(BOB, a_session_start("web", "refactor"))
    assert other["session_id"] != first["session_id"]


async def test_start_refusals_write_nothing(client: HubClient, hub: Hub) -> None:
    await client.make_project("secret", confidential=True)
    cases = [("ghost", "x"), ("secret", "x"), ("web", ""), ("web", "two\nlines"), ("web", "n" * 101), ("BAD", "x")]
    for project, name in cases:
        with pytest.raises(HubError) as caught:
            await hub.sessions.start(ALICE, a_session_start(project, name))
        assert caught.value.code in ("not_found", "invalid_argument")
    with client.db() as conn:
        assert conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0] == 0
        assert conn.execute("SELECT COUNT(*) FROM events").fetchone()[0] == 0
    ok = await hub.sessions.start(ALICE, a_session_start("web", "n" * 100))
    assert ok["name"] == "n" * 100


async def test_end_with_handoff_then_adopt(client: HubClient, hub: Hub) -> None:
    s = await hub.sessions.start(ALICE, a_session_start("web", "task"))
    ended = await hub.sessions.end(ALICE, a_session_end(session_id=s["session_id"], handoff="next: run the migrations"))
    assert ended["status"] == "ended" and ended["handoff"] == "next: run the migrations"
    with pytest.raises(HubError) as caught:
        await hub.sessions.end(ALICE, a_session_end(session_id=s["session_id"]))
    assert caught.value.code == "conflict"
    adopted = await hub.sessions.start(BOB, a_session_start("web", "task-b", {"session_id": s["session_id"]}))
    assert adopted["started"] == "adopted" and adopted["session_id"] == s["session_id"]
    assert adopted["owner"] == "bob" and adopted["handoff"] == "next: run the migrations"
    assert adopted["previous_owner"] == "alice"
    assert adopted["lineage"] == {"kind": "adopted", "from_session_id": None, "from_owner": "alice"}
    assert session_events(client, s["session_id"]) == [("alice", "started"), ("alice", "ended"), ("bob", "adopted")]


async def test_adopt_by_agent_and_name(hub: Hub) -> None:
    s = await hub.sessions.start(ALICE, a_session_start("web", "task"))
    await hub.sessions.end(ALICE, a_session_end(session_id=s["session_id"]))
    adopted = await hub.sessions.start(BOB, a_session_start("web", "mine", {"agent": "alice", "name": "task"}))
    assert adopted["session_id"] == s["session_id"] and adopted["name"] == "mine"


async def test_fork_a_running_session_copies_its_brain(hub: Hub) -> None:
    s = await hub.sessions.start(ALICE, a_session_start("web", "task"))
    await hub.brains.write_entry(
        ALICE, a_brain_put(session_id=s["session_id"], path="/fs/notes.md", content="half done", store="session")
    )
    fork = await hub.sessions.start(BOB, a_session_start("web", "task", {"session_id": s["session_id"]}))
    assert fork["started"] == "forked" and fork["session_id"] != s["session_id"]
    assert fork["lineage"] == {"kind": "forked", "from_session_id": s["session_id"], "from_owner": "alice"}
    from hubcore.services.sessions import SessionRef

    copied = await hub.brains.get(BOB, SessionRef(session_id=fork["session_id"]), "/fs/notes.md")
    assert copied["content"] == "half done"
    await hub.brains.write_entry(
        BOB,
        a_brain_put(session_id=fork["session_id"], path="/fs/notes.md", content="changed in the fork", store="session"),
    )
    source = await hub.brains.get(ALICE, SessionRef(session_id=s["session_id"]), "/fs/notes.md")
    assert source["content"] == "half done"
    assert (await hub.sessions.get(ALICE, s["session_id"]))["status"] == "active"


async def test_two_agents_adopting_at_once_exactly_one_adopts(client: HubClient, hub: Hub) -> None:
    s = await hub.sessions.start(ALICE, a_session_start("web", "task"))
    await hub.sessions.end(ALICE, a_session_end(session_id=s["session_id"]))
    await client.make_agent("carol")
    results: dict[str, dict[str, object]] = {}

    async def adopt(agent: str) -> None:
        named = a_session_start("web", "task", {"session_id": s["session_id"]})
        results[agent] = await hub.sessions.start(Caller.agent(agent), named)

    async with anyio.create_task_group() as tg:
        tg.start_soon(adopt, "bob")
        tg.start_soon(adopt, "carol")
    outcomes = sorted(str(r["started"]) for r in results.values())
    assert outcomes == ["adopted", "forked"]
    winner = next(a for a, r in results.items() if r["started"] == "adopted")
    assert (await hub.sessions.get(Caller.admin(), s["session_id"]))["owner"] == winner


async def test_end_needs_owner_or_admin(hub: Hub) -> None:
    s = await hub.sessions.start(ALICE, a_session_start("web", "task"))
    with pytest.raises(HubError) as caught:
        await hub.sessions.end(BOB, a_session_end(session_id=s["session_id"]))
    assert caught.value.code == "forbidden" and "owner=alice" in caught.value.message
    assert (await hub.sessions.get(ALICE, s["session_id"]))["status"] == "active"
    assert (await hub.sessions.end(Caller.admin(), a_session_end(session_id=s["session_id"])))["status"] == "ended"


async def test_handoff_limit(hub: Hub) -> None:
    s = await hub.sessions.start(ALICE, a_session_start("web", "task"))
    with pytest.raises(HubError) as caught:
        await hub.sessions.end(ALICE, a_session_end(session_id=s["session_id"], handoff="x" * 4097))
    assert caught.value.code == "payload_too_large"
    assert (await hub.sessions.get(ALICE, s["session_id"]))["status"] == "active"
    ended = await hub.sessions.end(ALICE, a_session_end(session_id=s["session_id"], handoff="x" * 4096))
    assert ended["handoff"] == "x" * 4096


async def test_rest_list_cuts_handoff_and_single_read_carries_events(client: HubClient, hub: Hub) -> None:
    s = await hub.sessions.start(ALICE, a_session_start("web", "task"))
    await hub.sessions.end(ALICE, a_session_end(session_id=s["session_id"], handoff="h" * 300))
    r = await client.get("/api/v1/sessions?project=web", headers=ADMIN)
    assert r.status_code == 200
    listed = r.json()["sessions"][0]
    assert listed["handoff"] == "h" * 200 and listed["handoff_truncated"] is True
    assert listed["brain_bytes"] == 0 and r.json()["truncated"] is False
    r = await client.get(f"/api/v1/sessions/{s['session_id']}", headers=ADMIN)
    one = r.json()
    assert one["handoff"] == "h" * 300 and one["events"] == 2 and "session task ended" in one["last_event"]
    assert_problem(await client.get("/api/v1/sessions/ses_nope", headers=ADMIN), 404, "not_found")
    assert_problem(await client.get("/api/v1/sessions?project=ghost", headers=ADMIN), 404, "not_found")


async def test_rest_end_and_reassign(client: HubClient, hub: Hub) -> None:
    s = await hub.sessions.start(ALICE, a_session_start("web", "task"))
    r = await client.post(f"/api/v1/sessions/{s['session_id']}/reassign", json={"agent": "bob"}, headers=ADMIN)
    assert r.status_code == 200 and r.json()["owner"] == "bob"
    assert session_events(client, s["session_id"])[-1] == ("human", "reassigned")
    r = await client.post(f"/api/v1/sessions/{s['session_id']}/reassign", json={"agent": "ghost"}, headers=ADMIN)
    assert_problem(r, 404, "not_found")
    r = await client.post(f"/api/v1/sessions/{s['session_id']}/end", json={"handoff": "done"}, headers=ADMIN)
    assert r.status_code == 200 and r.json()["status"] == "ended"
    r = await client.post(f"/api/v1/sessions/{s['session_id']}/reassign", json={"agent": "alice"}, headers=ADMIN)
    assert_problem(r, 409, "conflict")
    assert (await hub.sessions.get(Caller.admin(), s["session_id"]))["owner"] == "bob"


async def test_confidential_sessions_are_invisible_without_grant(client: HubClient, hub: Hub) -> None:
    await client.make_project("secret", confidential=True)
    await client.post("/api/v1/agents/alice/grants", json={"project_id": "secret"}, headers=ADMIN)
    s = await hub.sessions.start(ALICE, a_session_start("secret", "hidden"))
    listed = await hub.sessions.list(BOB, a_session_list())
    assert listed["sessions"] == []
    errors = []
    for sid in (s["session_id"], "ses_missing"):
        with pytest.raises(HubError) as caught:
            await hub.sessions.get(BOB, sid)
        errors.append((caught.value.code, caught.value.message.replace(sid, "<id>")))
    assert errors[0] == errors[1]


async def test_rest_end_refuses_a_body_that_is_not_an_object(client: HubClient, hub: Hub) -> None:
    s = await hub.sessions.start(ALICE, a_session_start("web", "task"))
    r = await client.post(f"/api/v1/sessions/{s['session_id']}/end", json=["handoff"], headers=ADMIN)
    assert_problem(r, 400, "invalid_argument")
    assert (await hub.sessions.get(ALICE, s["session_id"]))["status"] == "active"
    r = await client.post(f"/api/v1/sessions/{s['session_id']}/end", headers=ADMIN)
    assert r.status_code == 200 and r.json()["handoff"] is None


async def test_session_events_are_exempt_from_the_feed_ceiling(settings: HubSettings, clock: FakeClock) -> None:
    async with hub_client(replace(settings, events_per_project=1), clock) as client:
        await client.make_agent("alice")
        await client.make_project("web")
        hub = client.app.hub
        await hub.posts.signal_append(ALICE, a_signal(project_id="web", kind="signal", summary="fills the feed"))
        with pytest.raises(HubError) as caught:
            await hub.posts.signal_append(ALICE, a_signal(project_id="web", kind="signal", summary="one too many"))
        assert caught.value.code == "conflict"
        s = await hub.sessions.start(ALICE, a_session_start("web", "task"))
        await hub.sessions.end(ALICE, a_session_end(session_id=s["session_id"], handoff="done"))
        assert session_events(client, s["session_id"]) == [("alice", "started"), ("alice", "ended")]
