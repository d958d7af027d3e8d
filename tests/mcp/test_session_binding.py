"""Two agents on one token never share a session: the implicit active session needs a connection."""

from __future__ import annotations

from typing import Any

import pytest
from mcp.client import Client

from tests.harness import ADMIN
from tests.mcp.live import LEGACY, MODERN, LiveHub, structured, tool_error
from tests.mcp.test_cli import cli
from tests.mcp.test_stdio import cli_env

pytestmark = pytest.mark.anyio


async def session_row(live: LiveHub, sid: str) -> dict[str, Any]:
    r = await live.http.get(f"/api/v1/sessions/{sid}", headers=ADMIN)
    assert r.status_code == 200, r.text
    return dict(r.json())


async def replay(live: LiveHub, sid: str) -> list[tuple[str, str]]:
    r = await live.http.get(f"/api/v1/sessions/{sid}/replay", headers=ADMIN)
    return [(e["tool"], e["outcome"]) for e in r.json()["events"]]


async def start(client: Client, name: str) -> dict[str, Any]:
    return structured(await client.call_tool("session_start", {"project_id": "web", "name": name}))


async def test_without_a_connection_header_calls_name_their_session(live: LiveHub) -> None:
    token = await live.make_agent("bot")
    await live.make_project("web")
    async with live.client(token, mode=MODERN) as one, live.client(token, mode=MODERN) as two:
        a, b = await start(one, "a"), await start(two, "b")
        assert a["active_session"] is False and b["active_session"] is False
        refused = tool_error(
            await one.call_tool("brain_put", {"path": "/kv/k", "content": "1", "store": "session"}), "conflict"
        )
        assert "session_id" in refused["message"] and "Hub-Connection" in refused["message"]
        put = structured(
            await one.call_tool(
                "brain_put", {"path": "/kv/k", "content": "1", "store": "session", "session_id": a["session_id"]}
            )
        )
        assert put["session_id"] == a["session_id"]
        assert "session_id" in tool_error(await two.call_tool("session_end", {}), "conflict")["message"]
        assert (await session_row(live, a["session_id"]))["status"] == "active"
        got = structured(await one.call_tool("brain_get", {"path": "/kv/k", "session_id": a["session_id"]}))
        assert got["content"] == "1"
        ended = structured(await two.call_tool("session_end", {"session_id": b["session_id"]}))
        assert ended["status"] == "ended"
    assert (await session_row(live, a["session_id"]))["status"] == "active"
    # Each session's replay holds its own calls only; the call that named no session is in none.
    assert await replay(live, a["session_id"]) == [("brain_put", "ok"), ("brain_get", "ok")]
    assert await replay(live, b["session_id"]) == [("session_end", "ok")]
    r = await live.http.get(f"/api/v1/sessions/{b['session_id']}/brain", headers=ADMIN)
    assert r.status_code == 200 and "/kv/k" not in r.text


@pytest.mark.parametrize("mode", [LEGACY, MODERN])
async def test_two_connections_on_one_token_keep_their_own_active_sessions(live: LiveHub, mode: str) -> None:
    token = await live.make_agent("bot")
    await live.make_project("web")
    # The handshake era tells them apart by Mcp-Session-Id; 2026-07-28 by the Hub-Connection header.
    first = {"Hub-Connection": "one"} if mode == MODERN else {}
    second = {"Hub-Connection": "two"} if mode == MODERN else {}
    async with (
        live.client(token, mode=mode, headers=first) as one,
        live.client(token, mode=mode, headers=second) as two,
    ):
        a, b = await start(one, "a"), await start(two, "b")
        assert a["active_session"] is True and b["active_session"] is True
        for client, value in ((one, "from one"), (two, "from two")):
            structured(await client.call_tool("brain_put", {"path": "/kv/who", "content": value, "store": "session"}))
        assert structured(await two.call_tool("session_end", {}))["session_id"] == b["session_id"]
        assert (await session_row(live, a["session_id"]))["status"] == "active"
        put = structured(await one.call_tool("brain_put", {"path": "/kv/after", "content": "x", "store": "session"}))
        assert put["session_id"] == a["session_id"]
        assert structured(await one.call_tool("brain_get", {"path": "/kv/who"}))["content"] == "from one"
    assert await replay(live, a["session_id"]) == [("brain_put", "ok"), ("brain_put", "ok"), ("brain_get", "ok")]
    assert await replay(live, b["session_id"]) == [("brain_put", "ok"), ("session_end", "ok")]


async def test_hub_cli_call_never_binds_to_another_clients_active_session(tmp_path: Any, live: LiveHub) -> None:
    token = await live.make_agent("bot")
    await live.make_project("web")
    env = cli_env(tmp_path, HUB_URL=live.base, HUB_TOKEN=token)
    async with live.client(token, mode=MODERN, headers={"Hub-Connection": "agent"}) as agent:
        a = await start(agent, "a")
        code, _, err = await cli(env, "call", "brain_put", '{"path": "/kv/k", "content": "cli", "store": "session"}')
        assert code == 1 and err.startswith("hub-cli call: conflict: this request has no active session")
        code, _, err = await cli(env, "call", "session_end", "{}")
        assert code == 1 and "session_id" in err
        assert (await session_row(live, a["session_id"]))["status"] == "active"
        assert tool_error(await agent.call_tool("brain_get", {"path": "/kv/k"}), "not_found")
    assert await replay(live, a["session_id"]) == [("brain_get", "not_found")]
