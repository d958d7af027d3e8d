"""Both surfaces: REST `GET /api/v1/search` (the admin's) and the MCP `search` tool (agents')."""

from __future__ import annotations

import pytest

from hubcore.hub import Hub
from tests.foundation.test_gate import assert_problem
from tests.harness import ADMIN, HubClient
from tests.mcp.live import ERAS, LiveHub, structured, tool_error
from tests.requests import a_signal
from tests.search.conftest import ALICE, BOB

pytestmark = pytest.mark.anyio


async def test_rest_search_groups_and_reports(client: HubClient, hub: Hub) -> None:
    await hub.posts.signal_append(ALICE, a_signal(project_id="web", summary="heron deployment notes"))
    await hub.posts.signal_append(BOB, a_signal(project_id="vault", summary="heron vault"))
    r = await client.get("/api/v1/search", params={"q": "heron"}, headers=ADMIN)
    assert r.status_code == 200
    body = r.json()
    assert body["count"] == 2 and body["backend"] == "fts" and body["truncated"] is False
    assert [g["type"] for g in body["groups"]] == ["feed"] and body["groups"][0]["count"] == 2
    one = (
        await client.get("/api/v1/search", params={"q": "heron", "type": "feed", "limit": "1"}, headers=ADMIN)
    ).json()
    assert one["count"] == 1 and one["truncated"] is True
    web = (
        await client.get("/api/v1/search", params={"q": "heron", "scope": "project", "project": "web"}, headers=ADMIN)
    ).json()
    assert [h["project_id"] for h in web["groups"][0]["hits"]] == ["web"] and web["truncated"] is False
    semantic = (await client.get("/api/v1/search", params={"q": "heron", "mode": "semantic"}, headers=ADMIN)).json()
    assert semantic["backend"] == "hybrid" and semantic["count"] == 2


async def test_whole_words_rank_before_prefixes(client: HubClient, hub: Hub) -> None:
    await hub.posts.signal_append(ALICE, a_signal(project_id="web", summary="deployment deployment deployment"))
    await hub.posts.signal_append(ALICE, a_signal(project_id="web", summary="deploy once"))
    body = (await client.get("/api/v1/search", params={"q": "deploy"}, headers=ADMIN)).json()
    assert [h["snippet"] for h in body["groups"][0]["hits"]] == ["deploy once", "deployment deployment deployment"]


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"q": ""},
        {"q": "  ?! "},
        {"q": "x", "colour": "red"},
        {"q": "x", "type": "events"},
        {"q": "x", "scope": "everywhere"},
        {"q": "x", "scope": "project"},
        {"q": "x", "scope": "global", "project": "web"},
        {"q": "x", "limit": "0"},
        {"q": "x", "limit": "101"},
        {"q": "x", "limit": "ten"},
        {"q": "x", "mode": "fuzzy"},
        {"q": "x" * 8193},
    ],
)
async def test_rest_refuses_bad_parameters(client: HubClient, hub: Hub, params: dict[str, str]) -> None:
    assert_problem(await client.get("/api/v1/search", params=params, headers=ADMIN), 400, "invalid_argument")


async def test_rest_search_is_the_admins(client: HubClient, hub: Hub) -> None:
    token = await client.make_agent("carol")
    r = await client.get("/api/v1/search", params={"q": "x"}, headers=client.agent(token))
    assert r.status_code == 401
    assert_problem(
        await client.get("/api/v1/search", params={"q": "x", "project": "nope"}, headers=ADMIN), 404, "not_found"
    )


@pytest.mark.parametrize("mode", ERAS)
async def test_mcp_search_tool_scopes_and_visibility(live: LiveHub, mode: str) -> None:
    token = await live.make_agent("bot")
    await live.make_project("demo")
    await live.make_project("secret", confidential=True)
    async with live.client(token, mode=mode) as c:
        await c.call_tool("signal_append", {"project_id": "demo", "summary": "ibis found", "body": "the ibis body"})
        started = structured(await c.call_tool("session_start", {"project_id": "demo", "name": "birds"}))
        assert (
            structured(
                await c.call_tool(
                    "brain_put",
                    {
                        "path": "/fs/ibis.md",
                        "content": "ibis notes",
                        "store": "session",
                        "session_id": started["session_id"],
                    },
                )
            )["ok"]
            is True
        )
        everywhere = structured(await c.call_tool("search", {"query": "ibis"}))
        assert {g["type"] for g in everywhere["groups"]} >= {"feed", "brain"}
        assert "the ibis body" in {h["snippet"] for g in everywhere["groups"] for h in g["hits"]}
        session = structured(
            await c.call_tool("search", {"query": "ibis", "session_id": started["session_id"], "type": "brain"})
        )
        assert session["count"] == 1 and session["groups"][0]["hits"][0]["session_name"] == "birds"
        scoped = structured(await c.call_tool("search", {"query": "ibis", "project_id": "demo", "limit": 1}))
        assert scoped["count"] == 1 and scoped["truncated"] is True
        tool_error(await c.call_tool("search", {"query": "ibis", "project_id": "secret"}), "forbidden")
        tool_error(await c.call_tool("search", {"query": "  "}), "invalid_argument")
        tool_error(await c.call_tool("search", {"query": "ibis", "scope": "global"}), "invalid_argument")
