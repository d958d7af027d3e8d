"""A hub served by Hypercorn on a free loopback port, and MCP clients over real streamable HTTP."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import httpx2
import orjson
from hypercorn.asyncio import serve
from hypercorn.config import Config
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult, TextContent

from hubcore.clock import Clock
from hubcore.config import HubSettings
from hubhttp.asgi import HubASGI
from tests.harness import ADMIN, ADMIN_TOKEN, APPS

LEGACY = "legacy"
MODERN = "2026-07-28"
ERAS = (LEGACY, MODERN)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class LiveHub:
    app: HubASGI
    base: str
    http: httpx.AsyncClient  # plain REST client with the admin token helpers below

    @property
    def mcp_url(self) -> str:
        return f"{self.base}/mcp"

    async def make_agent(self, agent_id: str) -> str:
        r = await self.http.post(
            "/api/v1/agents", json={"id": agent_id, "display_name": agent_id.title()}, headers=ADMIN
        )
        assert r.status_code == 201, r.text
        r = await self.http.post(f"/api/v1/agents/{agent_id}/token", headers=ADMIN)
        assert r.status_code == 201, r.text
        return str(r.json()["token"])

    async def make_project(self, project_id: str, **fields: Any) -> None:
        r = await self.http.post("/api/v1/projects", json={"id": project_id, **fields}, headers=ADMIN)
        assert r.status_code == 201, r.text

    @asynccontextmanager
    async def client(
        self, token: str = ADMIN_TOKEN, *, mode: str = LEGACY, headers: dict[str, str] | None = None
    ) -> AsyncIterator[Client]:
        all_headers = {"Authorization": f"Bearer {token}", **(headers or {})}
        async with httpx2.AsyncClient(headers=all_headers, timeout=httpx2.Timeout(30, read=120)) as http:
            transport = streamable_http_client(self.mcp_url, http_client=http)
            async with Client(transport, mode=mode, cache=None) as client:
                yield client


@asynccontextmanager
async def live_hub(settings: HubSettings, clock: Clock | None = None) -> AsyncIterator[LiveHub]:
    port = free_port()
    settings = settings.__class__(**{**settings.__dict__, "bind": f"127.0.0.1:{port}"})
    with APPS.lend() as quart:
        app = HubASGI(settings, clock=clock, quart=quart)
        config = Config()
        config.bind = [f"127.0.0.1:{port}"]
        config.accesslog = None
        config.graceful_timeout = 1
        stop = asyncio.Event()
        started = asyncio.Event()
        app.on_started.append(lambda _hub: started.set())
        task = asyncio.create_task(serve(app, config, shutdown_trigger=stop.wait))  # type: ignore[arg-type]
        try:
            await asyncio.wait_for(started.wait(), 20)
            base = f"http://127.0.0.1:{port}"
            async with httpx.AsyncClient(base_url=base, timeout=30) as http:
                yield LiveHub(app, base, http)
        finally:
            stop.set()
            await asyncio.wait_for(task, 30)


def structured(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result
    assert isinstance(result.structured_content, dict)
    return result.structured_content


def error_in_text(result: CallToolResult | dict[str, Any]) -> dict[str, Any]:
    """An error result's `error` object as a program reads it: the JSON on its text's last line
    (an error result has no structured content). Takes the SDK's typed result or the wire dict."""
    if isinstance(result, dict):
        assert result.get("isError") is True and "structuredContent" not in result, result
        text = result["content"][0]["text"]
    else:
        assert result.is_error and result.structured_content is None, result
        block = result.content[0]
        assert isinstance(block, TextContent), result
        text = block.text
    error = orjson.loads(text.rsplit("\n", 1)[-1])["error"]
    assert isinstance(error, dict) and text.startswith(f"{error['code']}: {error['message']}"), text[:300]
    return dict(error)


def tool_error(result: CallToolResult, code: str) -> dict[str, Any]:
    """A tool execution error's `error` object, after checking MCP's convention in full: an
    `isError` result with no structured content (it would contradict the tool's output schema),
    one text whose first line is the code and message and whose last line is `{"error": ...}`,
    and no trailer."""
    assert result.is_error, result
    assert result.structured_content is None, result
    assert len(result.content) == 1, result
    block = result.content[0]
    assert isinstance(block, TextContent), result
    body = orjson.loads(block.text.rsplit("\n", 1)[-1])
    assert set(body) == {"error"}, body
    error = body["error"]
    assert set(error) == {"code", "message", "retryable", "details"}, error
    assert error["code"] == code, error
    assert isinstance(error["message"], str) and isinstance(error["retryable"], bool)
    assert isinstance(error["details"], dict)
    assert block.text.startswith(f"{code}: {error['message']}")
    assert "notifications" not in block.text.split("\n", 1)[0]
    return dict(error)


def initialize(protocol_version: str = "2025-11-25") -> dict[str, Any]:
    """The body of a session-era `initialize` request (the handshake that opens a session)."""
    params = {"protocolVersion": protocol_version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    return {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}


# Every modern-era request carries the protocol version and the client's capabilities in `_meta`.
MODERN_META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
Request = tuple[dict[str, Any], dict[str, str]]


def modern_request(
    method: str, params: dict[str, Any] | None = None, *, name: str | None = None, request_id: int = 1
) -> Request:
    """A stateless (modern era) JSON-RPC request as it goes over the wire with the admin token: its
    body and headers, for a test that posts it to `/mcp` itself. `name` is the `Mcp-Name` header."""
    body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {**(params or {}), "_meta": MODERN_META}}
    headers = {
        **ADMIN,
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": method,
    }
    if name is not None:
        headers["Mcp-Name"] = name
    return body, headers


def modern_tool_call(tool: str, arguments: dict[str, Any], *, header_name: str | None = None) -> Request:
    """A modern `tools/call` of `tool`; `header_name` puts another name in the `Mcp-Name` header."""
    return modern_request("tools/call", {"name": tool, "arguments": arguments}, name=header_name or tool)


async def modern_result(live: LiveHub, request: Request) -> dict[str, Any]:
    """Posts a modern request that must be answered 200 with one JSON body: its `result`."""
    body, headers = request
    r = await live.http.post("/mcp", json=body, headers=headers)
    assert r.status_code == 200, r.text
    return dict(r.json()["result"])


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    """A tool call that must succeed: its structured result."""
    return structured(await client.call_tool(tool, arguments))


Refused = Callable[..., Awaitable[dict[str, Any]]]


def refuser(snapshot: Callable[[LiveHub], object]) -> Refused:
    """`refused(live, client, code, tool, **arguments)`: the call is a tool error with `code` (its
    error object is returned), and `snapshot` of the live hub (what the test's stores hold) is the
    same after it: nothing was written."""

    async def refused(live: LiveHub, client: Client, code: str, tool: str, **arguments: Any) -> dict[str, Any]:
        before = snapshot(live)
        error = tool_error(await client.call_tool(tool, arguments), code)
        assert snapshot(live) == before
        return error

    return refused
