"""A tool result's bytes on the wire are the SDK's own (issue 27 part 5, brain_get's response).

The hub hands the SDK a successful tool result as its wire dict (`hubmcp.server.tool_result`), not
as a `CallToolResult` model, and a handshake-era session's JSON reply is encoded by orjson
(`hubmcp.framing.response_body`), not by pydantic. Neither may change a byte a client receives:
each is held here to the SDK's own path, for results of every shape (a brain read's 2 KiB, an
append's few members, an error result, non-ASCII and odd characters, floats, integers past 64
bits), in both eras, and on the served wire for a real get, append and refusal.
"""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest
from mcp.server import Server
from mcp.server.connection import Connection
from mcp.server.runner import ServerRunner
from mcp.server.streamable_http import StreamableHTTPServerTransport
from mcp_types import CallToolResult, JSONRPCResponse, TextContent

from hubcore.errors import HubError
from hubmcp import errors
from hubmcp.framing import PerRequestFramingTransport, response_body
from hubmcp.server import tool_result
from tests.mcp.live import MODERN, LiveHub, initialize, modern_tool_call

LEGACY_VERSION = "2025-11-25"
VERSIONS = (LEGACY_VERSION, MODERN)
ODD = 'é ü 日本 😀 \U0010ffff "q" \\ / </script> \u2028 \u2029 \x00 \x01 \x1f \x7f \ufeff \t\n\r\b\f'
PRINTABLE = 'é 日本 😀 "q" \\ </script> \ufeff \x7f'  # what a one-line summary may hold
RESULTS: dict[str, dict[str, Any]] = {
    "get": {
        "path": "/kv/k1",
        "type": "kv",
        "content": "value " * 340,
        "version": 12,
        "size_bytes": 2040,
        "written_at": "2026-11-28T21:00:00.123Z",
        "session_id": "01JF3K9ZP0000000000000000A",
    },
    "append": {"event_id": "01JF3K9ZP0000000000000000B", "seq": 1234},
    "odd": {ODD: ODD, "list": [ODD, None, True, False, [], {}], "nested": {"k": [{"v": ODD}]}},
    "numbers": {
        "ints": [0, -1, 2**31, -(2**53) - 1, 2**63 - 1, -(2**63)],
        "floats": [0.0, -0.0, 1.0, 0.1, 1.5, 1e16, 1e-7, 1.5e300, 5e-324, 2.5e-05, 123456789.125, -3.75],
    },
    "empty": {},
}
# orjson will not encode these (nor did the text block ever: no tool answers them); pydantic does.
WIDE = {"content": [], "structuredContent": {"wide": 2**64, "negative": -(2**64) - 7}}


def runner(server: Server[Any]) -> ServerRunner[Any]:
    return ServerRunner(server, Connection.from_envelope(MODERN, None, None), None)


def model_of(result: dict[str, Any]) -> CallToolResult:
    """What the hub returned before: the result as the SDK's typed model."""
    return CallToolResult(
        content=[TextContent(type="text", text=orjson.dumps(result).decode())], structured_content=result
    )


def sdk_bytes(version: str, result: dict[str, Any], request_id: int = 7) -> bytes:
    """The response body the SDK writes for a result dict: pydantic's encoding of the JSON-RPC
    response in a handshake-era session, `json.dumps` of its dump on 2026-07-28 (the modern
    entry's `_write`)."""
    message = JSONRPCResponse(jsonrpc="2.0", id=request_id, result=result)
    if version == MODERN:
        dumped = message.model_dump(mode="json", by_alias=True, exclude_none=True)
        return json.dumps(dumped, separators=(",", ":")).encode()
    return message.model_dump_json(by_alias=True, exclude_unset=True).encode()


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("case", RESULTS)
def test_a_tool_result_dict_answers_what_the_model_did(version: str, case: str) -> None:
    result = RESULTS[case]
    run = runner(Server("t"))
    handed = run._serialize("tools/call", version, tool_result(result))
    before = run._serialize("tools/call", version, model_of(result))
    assert sdk_bytes(version, handed) == sdk_bytes(version, before)
    assert list(handed) == list(before)  # the members in the same order, not only the same ones
    assert handed["structuredContent"] == result and handed["isError"] is False
    assert orjson.loads(handed["content"][0]["text"]) == result
    assert ("resultType" in handed) == (version == MODERN)


@pytest.mark.parametrize("case", RESULTS)
def test_orjson_writes_a_result_response_as_pydantic_does(case: str) -> None:
    result = runner(Server("t"))._serialize("tools/call", LEGACY_VERSION, tool_result(RESULTS[case]))
    for request_id in (7, "req-é-1", 2**53, -3):
        message = JSONRPCResponse(jsonrpc="2.0", id=request_id, result=result)
        assert response_body(message) == message.model_dump_json(by_alias=True, exclude_unset=True).encode()


def test_an_error_result_and_an_unknown_tool_keep_their_bytes() -> None:
    run = runner(Server("t"))
    refusals = (
        errors.error_result(HubError("forbidden", f"project {ODD!r} not found", details={"odd": ODD})),
        errors.unknown_tool("nope" * 40),
    )
    for refusal in refusals:
        result = run._serialize("tools/call", LEGACY_VERSION, refusal)
        assert result["isError"] is True and "structuredContent" not in result
        message = JSONRPCResponse(jsonrpc="2.0", id=3, result=result)
        assert response_body(message) == message.model_dump_json(by_alias=True, exclude_unset=True).encode()


def test_what_orjson_refuses_is_left_to_the_sdk() -> None:
    message = JSONRPCResponse(jsonrpc="2.0", id=1, result=WIDE)
    assert response_body(message) is None
    transport = PerRequestFramingTransport(
        mcp_session_id="s1", is_json_response_enabled=False, waiting_tools=frozenset()
    )
    plain = StreamableHTTPServerTransport(mcp_session_id="s1", is_json_response_enabled=False)
    for answered in (message, JSONRPCResponse(jsonrpc="2.0", id=2, result={"x": ODD})):
        ours, sdks = transport._create_json_response(answered), plain._create_json_response(answered)
        assert ours.body == sdks.body and ours.status_code == sdks.status_code
        assert ours.raw_headers == sdks.raw_headers  # Content-Type, Content-Length, Mcp-Session-Id


# -- on the served wire ------------------------------------------------------------------------------


def expected(live: LiveHub, version: str, body: bytes) -> bytes:
    """The bytes the SDK would have written for the result in `body`: the structured content
    rebuilt as the model the hub used to return, serialised by the hub's own server, encoded as
    the era's SDK path encodes it; an error result as the SDK encodes it."""
    reply = json.loads(body)
    result = reply["result"]
    endpoint = live.app._mcp
    assert endpoint is not None
    run = runner(endpoint.mcp.server)
    if result.get("isError"):
        model = CallToolResult(content=[TextContent(type="text", text=result["content"][0]["text"])], is_error=True)
    else:
        model = model_of(result["structuredContent"])
    return sdk_bytes(version, run._serialize("tools/call", version, model), reply["id"])


async def legacy_headers(live: LiveHub, token: str) -> dict[str, str]:
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
    r = await live.http.post("/mcp", headers=headers, json=initialize())
    assert r.status_code == 200, r.text
    headers.update({"Mcp-Session-Id": r.headers["mcp-session-id"], "MCP-Protocol-Version": LEGACY_VERSION})
    r = await live.http.post("/mcp", headers=headers, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert r.status_code == 202
    return headers


@pytest.mark.anyio
@pytest.mark.parametrize("version", VERSIONS)
async def test_served_get_append_and_refusal_are_the_sdks_bytes(live: LiveHub, version: str) -> None:
    token = await live.make_agent("bytes")
    await live.make_project("web")
    legacy = await legacy_headers(live, token) if version == LEGACY_VERSION else None

    async def call(tool: str, arguments: dict[str, Any], request_id: int) -> bytes:
        if legacy is not None:
            body = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call"}
            body["params"] = {"name": tool, "arguments": arguments}
            r = await live.http.post("/mcp", headers=legacy, json=body)
        else:
            body, headers = modern_tool_call(tool, arguments)
            body["id"] = request_id
            r = await live.http.post("/mcp", headers={**headers, "Authorization": f"Bearer {token}"}, json=body)
        assert r.status_code == 200 and r.headers["content-type"] == "application/json", r.text
        assert r.content == expected(live, version, r.content)
        return r.content

    started = json.loads(await call("session_start", {"project_id": "web", "name": "bytes"}, 2))
    sid = started["result"]["structuredContent"]["session_id"]
    content = ("value " * 300) + ODD
    await call("brain_put", {"path": "/kv/k", "content": content, "store": "session", "session_id": sid}, 3)
    got = json.loads(await call("brain_get", {"path": "/kv/k", "session_id": sid}, 4))
    assert got["result"]["structuredContent"]["content"] == content
    signal = {"project_id": "web", "summary": PRINTABLE, "session_id": sid}
    appended = json.loads(await call("signal_append", signal, 5))
    assert not appended["result"].get("isError"), appended
    assert appended["result"]["structuredContent"]["event_id"]
    refused = json.loads(await call("feed_read", {"project_id": "nope"}, 6))
    assert refused["result"]["isError"] is True
