"""Self-enrolment end to end over REST: ask, wait, be admitted or refused, and the limits."""

from __future__ import annotations

import anyio
import pytest

from hubcore.clock import FakeClock
from tests.enrol.conftest import ClientFactory, ask, fingerprint, from_peer
from tests.harness import ADMIN, HubClient

pytestmark = pytest.mark.anyio


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def test_a_request_waits_in_the_humans_inbox_as_a_pending_agent(client: HubClient) -> None:
    r = await client.post("/api/v1/enrol", json=ask(suggested_id="scout"))
    assert r.status_code == 202, r.text
    body = r.json()
    assert body["agent_id"] == "scout" and body["status"] == "pending" and body["token"].startswith("hub_")
    with client.db() as conn:
        agent = conn.execute("SELECT * FROM agents WHERE id = 'scout'").fetchone()
        assert agent["status"] == "pending" and agent["enrol_note"] == "I index the build logs for the team"
        assert conn.execute("SELECT personal_of FROM projects WHERE id = 'space-scout'").fetchone()[0] == "scout"
    inbox = (await client.get("/api/v1/inbox", params={"status": "waiting"}, headers=ADMIN)).json()["items"]
    assert [(i["kind"], i["project_id"], i["actor"]) for i in inbox] == [("enrol_request", "space-scout", "scout")]
    agents = (await client.get("/api/v1/agents", headers=ADMIN)).json()["agents"]
    assert [(a["id"], a["status"], a["enrol_note"]) for a in agents] == [
        ("scout", "pending", "I index the build logs for the team")
    ]
    status = await client.get("/api/v1/enrol/status", headers=bearer(body["token"]))
    assert status.status_code == 200 and status.json() == {"status": "pending"}
    # The pending token is not a token anywhere else yet.
    assert (await client.get("/api/v1/projects", headers=bearer(body["token"]))).status_code == 401


async def test_the_long_poll_wakes_on_the_decision_and_the_token_then_works(client: HubClient) -> None:
    token = (await client.post("/api/v1/enrol", json=ask(suggested_id="scout"))).json()["token"]
    item = (await client.get("/api/v1/inbox", headers=ADMIN)).json()["items"][0]
    answers: list[dict[str, object]] = []

    async def poll() -> None:
        r = await client.get("/api/v1/enrol/status", params={"wait": 30}, headers=bearer(token))
        answers.append({"status_code": r.status_code, **r.json()})

    with anyio.fail_after(10):  # far under the 30 s asked for: the decision wakes it
        async with anyio.create_task_group() as tg:
            tg.start_soon(poll)
            await anyio.sleep(0.2)
            assert answers == []  # still waiting
            r = await client.post(
                f"/api/v1/approvals/{item['event_id']}/decision", json={"decision": "approve"}, headers=ADMIN
            )
            assert r.status_code == 200, r.text
    assert answers == [{"status_code": 200, "status": "approved", "agent_id": "scout"}]
    r = await client.get("/api/v1/projects", headers=bearer(token))
    assert r.status_code == 200 and "space-scout" in [p["id"] for p in r.json()["projects"]]
    with client.db() as conn:
        assert conn.execute("SELECT status FROM agents WHERE id = 'scout'").fetchone()[0] == "active"
        answer = conn.execute("SELECT payload FROM events WHERE kind = 'answer'").fetchone()[0]
    assert '"decision":"approved"' in answer
    # Decided once: the route now has nothing waiting, the decision route a conflict.
    assert (await client.post("/api/v1/enrol/scout/approve", headers=ADMIN)).status_code == 404
    again = await client.post(
        f"/api/v1/approvals/{item['event_id']}/decision", json={"decision": "decline"}, headers=ADMIN
    )
    assert again.status_code == 409


async def test_approve_and_refuse_routes(client: HubClient) -> None:
    first = (await client.post("/api/v1/enrol", json=ask("First"))).json()
    async with from_peer(client, "10.0.0.2") as other:
        second = (await other.post("/api/v1/enrol", json=ask("Second"))).json()
    assert (first["agent_id"], second["agent_id"]) == ("first", "second")
    r = await client.post("/api/v1/enrol/first/approve", json={"note": "welcome"}, headers=ADMIN)
    assert r.status_code == 200, r.text
    assert r.json()["agent_id"] == "first" and r.json()["status"] == "approved"
    r = await client.post("/api/v1/enrol/second/refuse", headers=ADMIN)
    assert r.status_code == 200 and r.json()["status"] == "refused"
    assert (await client.get("/api/v1/enrol/status", headers=bearer(first["token"]))).json() == {
        "status": "approved",
        "agent_id": "first",
    }
    refused = await client.get("/api/v1/enrol/status", headers=bearer(second["token"]))
    unknown = await client.get("/api/v1/enrol/status", headers=bearer("hub_never-issued-token"))
    assert refused.status_code == 401 and (refused.content, refused.headers.get("content-type")) == (
        unknown.content,
        unknown.headers.get("content-type"),
    )
    assert (await client.get("/api/v1/projects", headers=bearer(second["token"]))).status_code == 401
    with client.db() as conn:
        rows = dict(conn.execute("SELECT id, status FROM agents").fetchall())
        assert rows == {"first": "active", "second": "pending"}
        assert conn.execute("SELECT token_hash FROM agents WHERE id = 'second'").fetchone()[0] is None
    # Only the admin decides; an agent token (even the one just admitted) is refused at the gate.
    assert (await client.post("/api/v1/enrol/first/refuse", headers=bearer(first["token"]))).status_code == 401


async def test_the_ask_and_the_poll_without_a_token(client: HubClient) -> None:
    for headers in ({}, {"Authorization": "Basic eDp5"}, bearer("hub_unknown")):
        r = await client.get("/api/v1/enrol/status", headers=headers)
        assert r.status_code == 401 and r.json()["code"] == "unauthenticated"
    token = (await client.post("/api/v1/enrol", json=ask())).json()["token"]
    for wait in ("61", "-1", "x", "1.5", "9" * 30):
        r = await client.get("/api/v1/enrol/status", params={"wait": wait}, headers=bearer(token))
        assert r.status_code == 400 and r.json()["code"] == "invalid_argument", wait


async def test_one_pending_request_per_peer(client: HubClient) -> None:
    assert (await client.post("/api/v1/enrol", json=ask("One"))).status_code == 202
    before = fingerprint(client)
    r = await client.post("/api/v1/enrol", json=ask("Two"))
    assert r.status_code == 429 and r.json()["code"] == "rate_limited" and r.headers["retry-after"] == "60"
    assert fingerprint(client) == before
    async with from_peer(client, "192.0.2.7") as other:
        assert (await other.post("/api/v1/enrol", json=ask("Two"))).status_code == 202
    async with from_peer(client, "::ffff:192.0.2.7") as other:  # the same peer in another spelling
        assert (await other.post("/api/v1/enrol", json=ask("Four"))).status_code == 429
    async with from_peer(client, "192.0.2.7") as other:
        # A forwarded header from an untrusted peer changes nothing: still the socket peer.
        r = await other.post("/api/v1/enrol", json=ask("Three"), headers={"X-Forwarded-For": "198.51.100.1"})
        assert r.status_code == 429
    # Once the first request is decided, its peer may ask again.
    await client.post("/api/v1/enrol/one/refuse", headers=ADMIN)
    assert (await client.post("/api/v1/enrol", json=ask("Three"))).status_code == 202


async def test_a_trusted_proxy_names_the_client_by_the_hop_it_appended(make_client: ClientFactory) -> None:
    async with make_client(trust_proxy=["10.9.0.0/16"]) as client, from_peer(client, "10.9.0.1") as proxy:
        fwd = "X-Forwarded-For"
        assert (await proxy.post("/api/v1/enrol", json=ask("A"), headers={fwd: "203.0.113.5"})).status_code == 202
        # The last hop is the one the proxy appended; earlier hops are the client's own word.
        r = await proxy.post("/api/v1/enrol", json=ask("B"), headers={fwd: "198.51.100.9, 203.0.113.5"})
        assert r.status_code == 429
        r = await proxy.post("/api/v1/enrol", json=ask("B"), headers={fwd: "203.0.113.5, 203.0.113.6"})
        assert r.status_code == 202
        # No usable hop: the proxy's own address is the identity (all such clients share it).
        assert (await proxy.post("/api/v1/enrol", json=ask("C"))).status_code == 202
        assert (await proxy.post("/api/v1/enrol", json=ask("D"), headers={fwd: "not-an-ip"})).status_code == 429
        with client.db() as conn:
            peers = sorted(
                r[0]
                for r in conn.execute("SELECT json_extract(payload, '$.peer') FROM events WHERE kind = 'enrol_request'")
            )
        assert peers == ["10.9.0.1", "203.0.113.5", "203.0.113.6"]


async def test_the_hub_wide_cap_on_pending_requests(make_client: ClientFactory) -> None:
    async with make_client(enrol_pending_max=2) as client:
        for n, peer in enumerate(("192.0.2.1", "192.0.2.2")):
            async with from_peer(client, peer) as http:
                assert (await http.post("/api/v1/enrol", json=ask(f"Agent {n}"))).status_code == 202
        before = fingerprint(client)
        async with from_peer(client, "192.0.2.3") as http:
            r = await http.post("/api/v1/enrol", json=ask("Agent 3"))
        assert r.status_code == 429 and "enrol_pending_max" in r.json()["detail"]
        assert fingerprint(client) == before


async def test_enrol_off_closes_both_routes_with_404(make_client: ClientFactory) -> None:
    async with make_client() as client:
        token = (await client.post("/api/v1/enrol", json=ask())).json()["token"]
    async with make_client(enrol="off") as client:
        before = fingerprint(client)
        r = await client.post("/api/v1/enrol", json=ask("Other"))
        assert r.status_code == 404 and r.json()["code"] == "not_found"
        r = await client.get("/api/v1/enrol/status", headers=bearer(token))
        assert r.status_code == 404
        assert fingerprint(client) == before


async def test_an_abandoned_request_is_removed_with_its_event_and_search_row(
    client: HubClient, clock: FakeClock
) -> None:
    r = await client.post("/api/v1/enrol", json=ask("Zebra", why="quokkaword indexing please"))
    token = r.json()["token"]
    found = await client.get("/api/v1/search", params={"q": "quokkaword"}, headers=ADMIN)
    assert found.json()["count"] == 1
    hub = client.app.hub
    clock.advance(86400 - 1)
    assert await hub.enrolment.sweep() == 0  # not yet due: nothing written
    assert (await client.get("/api/v1/enrol/status", headers=bearer(token))).json() == {"status": "pending"}
    clock.advance(1)
    # Past its time to live the token is refused at once, before any sweep ran.
    assert (await client.get("/api/v1/enrol/status", headers=bearer(token))).status_code == 401
    assert await hub.enrolment.sweep() == 1
    with client.db() as conn:
        for sql in (
            "SELECT 1 FROM agents",
            "SELECT 1 FROM projects",
            "SELECT 1 FROM events",
            "SELECT 1 FROM inbox",
            "SELECT 1 FROM actor_cursors",
            "SELECT 1 FROM search_docs WHERE project_id = 'space-zebra'",
        ):
            assert conn.execute(sql).fetchall() == [], sql
        assert conn.execute("SELECT events FROM feed_stats").fetchall() == []
    found = await client.get("/api/v1/search", params={"q": "quokkaword"}, headers=ADMIN)
    assert found.json()["count"] == 0
    # The peer's slot is free again, and so is the id.
    r = await client.post("/api/v1/enrol", json=ask("Zebra"))
    assert r.status_code == 202 and r.json()["agent_id"] == "zebra"


async def test_a_sweep_wakes_a_waiting_poll(client: HubClient, clock: FakeClock) -> None:
    token = (await client.post("/api/v1/enrol", json=ask())).json()["token"]
    answers: list[int] = []

    async def poll() -> None:
        answers.append(
            (await client.get("/api/v1/enrol/status", params={"wait": 30}, headers=bearer(token))).status_code
        )

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(poll)
            await anyio.sleep(0.2)
            clock.advance(86400)
            assert await client.app.hub.enrolment.sweep() == 1
    assert answers == [401]


async def test_a_refused_request_is_kept_until_its_time_to_live(client: HubClient, clock: FakeClock) -> None:
    await client.post("/api/v1/enrol", json=ask(suggested_id="scout"))
    await client.post("/api/v1/enrol/scout/refuse", json={"note": "not now"}, headers=ADMIN)
    with client.db() as conn:
        assert conn.execute("SELECT count(*) FROM events WHERE project_id = 'space-scout'").fetchone()[0] == 2
    clock.advance(86400)
    assert await client.app.hub.enrolment.sweep() == 1
    with client.db() as conn:
        assert conn.execute("SELECT count(*) FROM agents").fetchone()[0] == 0


async def test_an_admitted_agent_is_never_swept(client: HubClient, clock: FakeClock) -> None:
    await client.post("/api/v1/enrol", json=ask(suggested_id="scout"))
    await client.post("/api/v1/enrol/scout/approve", headers=ADMIN)
    clock.advance(10 * 86400)
    assert await client.app.hub.enrolment.sweep() == 0
    assert [a["id"] for a in (await client.get("/api/v1/agents", headers=ADMIN)).json()["agents"]] == ["scout"]


async def test_ids_are_chosen_around_taken_and_reserved_ones(client: HubClient) -> None:
    await client.make_agent("scout")
    got = []
    for n, (name, suggested) in enumerate([("Scout", None), ("x", "hub"), ("Ünïcode Bot!", None), ("!!!", None)]):
        async with from_peer(client, f"192.0.2.{n + 1}") as http:
            body = ask(name) if suggested is None else ask(name, suggested_id=suggested)
            r = await http.post("/api/v1/enrol", json=body)
            assert r.status_code == 202, r.text
            got.append(r.json()["agent_id"])
    assert got == ["scout-2", "hub-2", "unicode-bot", "agent"]
