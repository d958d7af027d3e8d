"""Agents, tokens and grants over REST."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from hubcore.clock import FakeClock
from hubcore.config import HubSettings
from hubcore.services.auth import TokenCache
from hubcore.tokens import token_hash
from tests.foundation.test_gate import assert_problem
from tests.harness import ADMIN, HubClient, hub_client

pytestmark = pytest.mark.anyio

AGENT_FIELDS = {"id", "display_name", "status", "personal_project_id", "created_at", "last_seen_at", "has_token"}


def agent_count(client: HubClient) -> int:
    with client.db() as conn:
        return int(conn.execute("SELECT COUNT(*) FROM agents").fetchone()[0])


async def test_create_and_list(client: HubClient) -> None:
    r = await client.post("/api/v1/agents", json={"id": "coder", "display_name": "Coder"}, headers=ADMIN)
    assert r.status_code == 201
    agent = r.json()
    assert set(agent) == AGENT_FIELDS
    assert agent["status"] == "active" and agent["personal_project_id"] == "space-coder"
    assert agent["has_token"] is False and agent["last_seen_at"] is None
    r = await client.get("/api/v1/agents", headers=ADMIN)
    assert r.json() == {"agents": [agent]}
    space = (await client.get("/api/v1/projects/space-coder", headers=ADMIN)).json()
    assert space["owner_agent"] == "coder" and space["is_personal"] is True


async def test_agent_id_edge_and_refusals_write_nothing(client: HubClient) -> None:
    r = await client.post("/api/v1/agents", json={"id": "a" * 57}, headers=ADMIN)
    assert r.status_code == 201
    before = agent_count(client)
    for body in (
        {"id": "b" * 58},
        {"id": "Caps"},
        {},
        {"id": "hub"},
        {"id": "human"},
        {"id": "ok", "display_name": ""},
    ):
        assert_problem(await client.post("/api/v1/agents", json=body, headers=ADMIN), 400, "invalid_argument")
    assert agent_count(client) == before
    with client.db() as conn:
        assert conn.execute("SELECT COUNT(*) FROM projects WHERE id = 'space-hub'").fetchone()[0] == 0


async def test_duplicate_agent_is_conflict(client: HubClient) -> None:
    await client.make_agent("bot")
    assert_problem(await client.post("/api/v1/agents", json={"id": "bot"}, headers=ADMIN), 409, "conflict")


async def test_token_issue_reissue_and_revoke(client: HubClient) -> None:
    first = await client.make_agent("bot")
    assert first.startswith("hub_") and len(first) > 40
    assert (await client.get("/api/v1/projects", headers=client.agent(first))).status_code == 200
    r = await client.post("/api/v1/agents/bot/token", headers=ADMIN)
    assert r.status_code == 201 and set(r.json()) == {"token", "created_at"}
    second = r.json()["token"]
    assert_problem(await client.get("/api/v1/projects", headers=client.agent(first)), 401, "unauthenticated")
    assert (await client.get("/api/v1/projects", headers=client.agent(second))).status_code == 200
    assert (await client.delete("/api/v1/agents/bot/token", headers=ADMIN)).status_code == 204
    assert_problem(await client.get("/api/v1/projects", headers=client.agent(second)), 401, "unauthenticated")
    agent = (await client.get("/api/v1/agents", headers=ADMIN)).json()["agents"][0]
    assert agent["has_token"] is False


async def test_tokens_are_stored_only_as_digests(client: HubClient) -> None:
    token = await client.make_agent("bot")
    with client.db() as conn:
        stored = conn.execute("SELECT token_hash FROM agents WHERE id = 'bot'").fetchone()[0]
        dump = "\n".join(conn.iterdump())
    assert stored == token_hash(token) and token not in dump


async def test_token_routes_for_unknown_agent_are_404(client: HubClient) -> None:
    assert_problem(await client.post("/api/v1/agents/ghost/token", headers=ADMIN), 404, "not_found")
    assert_problem(await client.delete("/api/v1/agents/ghost/token", headers=ADMIN), 404, "not_found")


async def test_no_token_for_the_reserved_id(client: HubClient) -> None:
    assert_problem(await client.post("/api/v1/agents/hub/token", headers=ADMIN), 400, "invalid_argument")


async def test_pending_and_unknown_tokens_are_answered_identically(client: HubClient) -> None:
    token = await client.make_agent("newbie")
    # No service sets pending yet (enrolment will): the row is written through the hub's actor.
    await client.app.hub.core.store.execute(
        lambda conn: conn.execute("UPDATE agents SET status = 'pending' WHERE id = 'newbie'")
    )
    pending = await client.get("/api/v1/projects", headers=client.agent(token))
    unknown = await client.get("/api/v1/projects", headers=client.agent("hub_nobody-has-this-token"))
    assert pending.status_code == unknown.status_code == 401
    assert pending.content == unknown.content
    assert dict(pending.headers) == dict(unknown.headers)


async def test_last_seen_is_recorded(client: HubClient, clock: FakeClock) -> None:
    token = await client.make_agent("bot")
    await client.get("/api/v1/projects", headers=client.agent(token))
    agent = (await client.get("/api/v1/agents", headers=ADMIN)).json()["agents"][0]
    assert agent["last_seen_at"] is not None


async def test_grants_lifecycle(client: HubClient) -> None:
    await client.make_agent("bot")
    await client.make_project("secret", confidential=True)
    r = await client.post("/api/v1/agents/bot/grants", json={"project_id": "secret"}, headers=ADMIN)
    assert r.status_code == 201
    grant = r.json()
    assert set(grant) == {"agent_id", "project_id", "created_at"}
    again = await client.post("/api/v1/agents/bot/grants", json={"project_id": "secret"}, headers=ADMIN)
    assert again.status_code == 200 and again.json() == grant
    assert (await client.get("/api/v1/agents/bot/grants", headers=ADMIN)).json() == {"grants": [grant]}
    assert (await client.delete("/api/v1/agents/bot/grants/secret", headers=ADMIN)).status_code == 204
    assert_problem(await client.delete("/api/v1/agents/bot/grants/secret", headers=ADMIN), 404, "not_found")
    assert (await client.get("/api/v1/agents/bot/grants", headers=ADMIN)).json() == {"grants": []}


async def test_grant_refusals_write_nothing(client: HubClient) -> None:
    await client.make_agent("bot")
    cases = [
        ("bot", {"project_id": "ghost"}, 404),
        ("ghost", {"project_id": "space-bot"}, 404),
        ("bot", {"project_id": "BAD"}, 400),
        ("bot", {}, 400),
    ]
    for agent, body, status in cases:
        r = await client.post(f"/api/v1/agents/{agent}/grants", json=body, headers=ADMIN)
        assert r.status_code == status
    with client.db() as conn:
        assert conn.execute("SELECT COUNT(*) FROM grants").fetchone()[0] == 0
    assert_problem(await client.get("/api/v1/agents/ghost/grants", headers=ADMIN), 404, "not_found")


async def test_store_holding_reserved_agent_has_its_token_revoked_at_open(settings: HubSettings) -> None:
    async with hub_client(settings) as client:
        pass  # creates the store
    db = Path(settings.data_dir) / "hub.db"
    with sqlite3.connect(db) as conn:
        conn.execute(
            "INSERT INTO agents (id, display_name, status, created_at, token_hash) "
            "VALUES ('hub', 'Hub', 'active', 0, ?)",
            (token_hash("hub_sneaky"),),
        )
    async with hub_client(settings) as client:
        r = await client.get("/api/v1/projects", headers=client.agent("hub_sneaky"))
        assert_problem(r, 401, "unauthenticated")
        with client.db() as conn:
            assert conn.execute("SELECT token_hash FROM agents WHERE id = 'hub'").fetchone()[0] is None


def test_token_cache_remembers_only_lookups_from_the_current_generation() -> None:
    cache = TokenCache(size=2)
    before = cache.generation
    cache.forget()  # a token changed while a lookup that began earlier was reading the store
    cache.put("d1", "bot", before)
    assert cache.get("d1") is None
    cache.put("d1", "bot", cache.generation)
    cache.put("d2", "coder", cache.generation)
    cache.put("d3", "writer", cache.generation)  # past the bound: the oldest goes
    assert (cache.get("d1"), cache.get("d2"), cache.get("d3")) == (None, "coder", "writer")
    cache.forget()
    assert cache.get("d2") is None and cache.get("d3") is None


async def test_token_routes_refuse_a_malformed_body_and_act_on_nothing(client: HubClient) -> None:
    await client.post("/api/v1/agents", json={"id": "bot", "display_name": "Bot"}, headers=ADMIN)
    first = (await client.post("/api/v1/agents/bot/token", headers=ADMIN)).json()["token"]

    def stored() -> list[tuple[object, ...]]:
        with client.db() as conn:
            return [tuple(r) for r in conn.execute("SELECT token_hash FROM agents WHERE id = 'bot'")]

    before = stored()
    assert before == [(token_hash(first),)]
    json_type = {**ADMIN, "Content-Type": "application/json"}
    for method in ("POST", "DELETE"):
        for body in (b"{not json", b"[]", b'"x"', b'{"force": true}', b"{", b"null"):
            r = await client.request(method, "/api/v1/agents/bot/token", content=body, headers=json_type)
            assert r.status_code == 400 and r.json()["code"] == "invalid_argument", (method, body, r.text)
            assert stored() == before
    assert (await client.post("/api/v1/agents/bot/token", content=b"{}", headers=json_type)).status_code == 201
    assert stored() != before
    r = await client.request("DELETE", "/api/v1/agents/bot/token", content=b" {} ", headers=json_type)
    assert r.status_code == 204
