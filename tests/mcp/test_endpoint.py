"""The /mcp endpoint over real streamable HTTP, in both protocol eras, through the SDK's client."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tests.harness import ADMIN
from tests.mcp.live import ERAS, MODERN, LiveHub, structured

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("mode", ERAS)
async def test_whoami_and_version_in_both_eras(live: LiveHub, mode: str) -> None:
    token = await live.make_agent("bot")
    async with live.client(token, mode=mode) as client:
        assert client.protocol_version == (MODERN if mode == MODERN else "2025-11-25")
        me = structured(await client.call_tool("whoami", {}))
        assert me["agent_id"] == "bot"
        assert me["kind"] == "agent"
        assert me["personal_project_id"] == "space-bot"
        assert me["guide_url"] == f"{live.base}/bootstrap/SKILL.md"
        assert me["skill_uri"] == "skill://hub/SKILL.md"
        v = structured(await client.call_tool("version", {}))
        assert v["version"] == "1.0.0"
        assert v["commit"]


async def test_missing_unknown_and_pending_tokens_are_401_before_mcp(live: LiveHub) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "t", "version": "1"}}}
    accept = {"Accept": "application/json, text/event-stream"}
    pending = await live.make_agent("newbie")
    with sqlite3.connect(Path(live.app.settings.data_dir) / "hub.db") as conn:
        conn.execute("UPDATE agents SET status = 'pending' WHERE id = 'newbie'")
    answers = []
    for headers in ({}, {"Authorization": "Bearer hub_nope"}, {"Authorization": f"Bearer {pending}"}):
        r = await live.http.post("/mcp", json=body, headers={**accept, **headers})
        assert r.status_code == 401
        assert r.json()["code"] == "unauthenticated"
        answers.append(r.content)
    assert answers[1] == answers[2]  # a pending token is answered exactly like an unknown one
    r = await live.http.post("/mcp", json=body, headers={**accept, **ADMIN})
    assert r.status_code == 200
    assert r.headers.get("mcp-session-id")


async def test_dns_rebinding_refused(live: LiveHub) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "t", "version": "1"}}}
    headers = {**ADMIN, "Accept": "application/json, text/event-stream"}
    r = await live.http.post("/mcp", json=body, headers={**headers, "Host": "evil.example.com"})
    assert 400 <= r.status_code < 500
    r = await live.http.post("/mcp", json=body, headers={**headers, "Origin": "http://evil.example.com"})
    assert 400 <= r.status_code < 500
    r = await live.http.post("/mcp", json=body, headers={**headers, "Origin": live.base})
    assert r.status_code == 200
