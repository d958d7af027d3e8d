"""The /mcp endpoint over real streamable HTTP, in both protocol eras, through the SDK's client."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from mcp.server import _streamable_http_modern as modern_transport
from mcp.shared.exceptions import MCPError

from hubmcp.http import McpEndpoint
from tests.harness import ADMIN
from tests.mcp.live import ERAS, MODERN, LiveHub, initialize, modern_tool_call, structured

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
    body = initialize()
    accept = {"Accept": "application/json, text/event-stream"}
    pending = await live.make_agent("newbie")
    with sqlite3.connect(Path(live.app.settings.data_dir) / "hub.db") as conn:
        conn.execute("UPDATE agents SET status = 'pending' WHERE id = 'newbie'")
    answers = []
    for headers in ({}, {"Authorization": "Bearer hub_nope"}, {"Authorization": f"Bearer {pending}"}):
        r = await live.http.post("/mcp", json=body, headers={**accept, **headers})
        assert r.status_code == 401 and r.headers["content-type"] == "application/json"
        assert r.headers["www-authenticate"].startswith("Bearer ")
        reply = r.json()
        assert reply["id"] is None and reply["error"]["code"] == -32001
        assert reply["error"]["message"].startswith("unauthenticated: the hub refused the bearer token")
        assert reply["error"]["data"]["error"]["code"] == "unauthenticated"
        answers.append(r.content)
    assert answers[1] == answers[2]  # a pending token is answered exactly like an unknown one
    r = await live.http.post("/mcp", json=body, headers={**accept, **ADMIN})
    assert r.status_code == 200
    assert r.headers.get("mcp-session-id")


@pytest.mark.parametrize("mode", ["auto", *ERAS])
async def test_the_sdk_client_reports_a_refused_token_as_such(live: LiveHub, mode: str) -> None:
    with pytest.raises(BaseException) as caught:  # the SDK wraps it in task group errors
        async with live.client("hub_not_a_token", mode=mode) as client:
            await client.call_tool("whoami", {})
    refusals = [e for e in _leaves(caught.value) if isinstance(e, MCPError)]
    assert refusals, caught.value
    assert "the hub refused the bearer token" in str(refusals[0])
    assert "no OAuth" in str(refusals[0])
    # OAuth clients look for discovery documents after a 401: they find none, at once.
    for path in (
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-authorization-server",
    ):
        r = await live.http.get(path)
        assert r.status_code == 404 and r.json()["code"] == "not_found", path
        assert "no OAuth" in r.json()["detail"]


def _leaves(error: BaseException) -> list[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in _leaves(inner)]
    return [error]


async def test_dns_rebinding_refused(live: LiveHub) -> None:
    body = initialize()
    headers = {**ADMIN, "Accept": "application/json, text/event-stream"}
    r = await live.http.post("/mcp", json=body, headers={**headers, "Host": "evil.example.com"})
    assert 400 <= r.status_code < 500
    r = await live.http.post("/mcp", json=body, headers={**headers, "Origin": "http://evil.example.com"})
    assert 400 <= r.status_code < 500
    r = await live.http.post("/mcp", json=body, headers={**headers, "Origin": live.base})
    assert r.status_code == 200


async def test_modern_quick_calls_get_one_json_body_and_waits_are_streamed(
    live: LiveHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A streamed reply turns into an event stream when its first keep-alive ping is due: make that soon.
    monkeypatch.setattr(modern_transport, "_SSE_PING_INTERVAL", 0.05)
    body, headers = modern_tool_call("whoami", {})
    r = await live.http.post("/mcp", json=body, headers=headers)
    assert r.status_code == 200 and r.headers["content-type"] == "application/json"
    assert r.json()["result"]["structuredContent"]["actor"] == "human"
    body, headers = modern_tool_call("inbox_wait", {"wait_seconds": 0.3})
    r = await live.http.post("/mcp", json=body, headers=headers)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
    assert ": ping" in r.text and '"timed_out":true' in r.text.replace(" ", "")


async def test_which_requests_take_the_json_framing(live: LiveHub) -> None:
    endpoint = McpEndpoint(live.app.hub)

    def headers(version: str | None, method: str, name: str) -> list[tuple[bytes, bytes]]:
        pairs = [(b"mcp-method", method.encode()), (b"mcp-name", name.encode())]
        return pairs + ([(b"mcp-protocol-version", version.encode())] if version else [])

    assert endpoint.answers_at_once(headers(MODERN, "tools/call", "signal_append"))
    assert endpoint.answers_at_once(headers(MODERN, "resources/read", "skill://hub/SKILL.md"))
    assert not endpoint.answers_at_once(headers(MODERN, "tools/call", "inbox_wait"))
    assert not endpoint.answers_at_once(headers(MODERN, "tools/call", "notify_wait"))
    assert not endpoint.answers_at_once(headers("2025-11-25", "tools/call", "signal_append"))
    assert not endpoint.answers_at_once(headers(None, "tools/call", "signal_append"))


async def test_a_wait_cannot_pass_as_a_quick_call(live: LiveHub) -> None:
    body, headers = modern_tool_call("inbox_wait", {"wait_seconds": 0}, header_name="whoami")
    r = await live.http.post("/mcp", json=body, headers=headers)
    assert r.status_code == 400
    assert r.json()["error"]["message"] == "mcp-name header does not match the request body's 'name' parameter"


async def test_modern_requests_are_refused_from_a_foreign_host(live: LiveHub) -> None:
    body, headers = modern_tool_call("whoami", {})
    r = await live.http.post("/mcp", json=body, headers={**headers, "Host": "evil.example.com"})
    assert 400 <= r.status_code < 500
    r = await live.http.post("/mcp", json=body, headers={**headers, "Origin": "http://evil.example.com"})
    assert 400 <= r.status_code < 500
    r = await live.http.post("/mcp", json=body, headers=headers)
    assert r.status_code == 200
