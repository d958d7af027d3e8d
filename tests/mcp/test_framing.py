"""Reply framing: a call that answers at once gets one JSON body, a wait keeps its stream, in both eras.

Driven through the SDK's own client (an httpx2 hook records each POST's reply Content-Type) and,
for what the client would never send, raw HTTP.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
import orjson
import pytest
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.message import ServerMessageMetadata, SessionMessage
from mcp_types import JSONRPCNotification, JSONRPCResponse

from hubmcp.framing import _JsonOnlyResponses, json_request_id
from hubmcp.waits import WaitPolicy
from tests.harness import ADMIN, ADMIN_TOKEN
from tests.mcp.live import ERAS, LEGACY, LiveHub, initialize, structured

pytestmark = pytest.mark.anyio
WAITING = frozenset({"inbox_wait", "notify_wait"})

# (what was asked: the method, or `tools/call <name>`; the reply's Content-Type)
Replies = list[tuple[str, str]]


@asynccontextmanager
async def recording_client(live: LiveHub, token: str, mode: str, replies: Replies) -> AsyncIterator[Client]:
    async def record(response: httpx2.Response) -> None:
        request = response.request
        if request.method != "POST":
            return
        body = orjson.loads(request.content)
        if "id" not in body:  # a notification: 202, no reply to frame
            return
        asked = body["method"] + (f" {body['params']['name']}" if body["method"] == "tools/call" else "")
        replies.append((asked, response.headers["content-type"].split(";")[0]))

    http = httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {token}"},
        timeout=httpx2.Timeout(30, read=120),
        event_hooks={"response": [record]},
    )
    async with http, Client(streamable_http_client(live.mcp_url, http_client=http), mode=mode, cache=None) as client:
        yield client


def set_progress_every(live: LiveHub, seconds: float) -> None:
    endpoint = live.app._mcp
    assert endpoint is not None
    endpoint.mcp.binding.waits = WaitPolicy(progress_every=seconds)


async def wait_with_progress(bot: Client, human: Client, question_id: str) -> dict[str, Any]:
    """An `inbox_wait` that reports progress, answered once it has: its result."""
    progressed = anyio.Event()
    result: dict[str, Any] = {}

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        progressed.set()

    async def wait() -> None:
        answer = await bot.call_tool("inbox_wait", {"wait_seconds": 30}, progress_callback=on_progress)
        result.update(structured(answer))

    async with anyio.create_task_group() as tg:
        tg.start_soon(wait)
        await progressed.wait()
        await human.call_tool("answer_post", {"question_id": question_id, "body": "go"})
    return result


@pytest.mark.parametrize("mode", ERAS)
async def test_quick_calls_get_one_json_body_and_a_wait_streams_its_progress(live: LiveHub, mode: str) -> None:
    token = await live.make_agent("bot")
    set_progress_every(live, 0.02)
    replies: Replies = []
    async with recording_client(live, token, mode, replies) as bot, live.client(ADMIN_TOKEN, mode=mode) as human:
        assert structured(await bot.call_tool("whoami", {}))["agent_id"] == "bot"
        await bot.list_tools()
        await bot.read_resource("skill://hub/SKILL.md")
        q = structured(await bot.call_tool("question_post", {"project_id": "space-bot", "summary": "Go?"}))
        result = await wait_with_progress(bot, human, q["question_id"])
    assert result["timed_out"] is False and result["items"][0]["event_id"] == q["question_id"]
    streamed = [asked for asked, kind in replies if kind == "text/event-stream"]
    assert streamed == ["tools/call inbox_wait"], replies
    quick = {asked for asked, kind in replies if kind == "application/json"}
    assert {"tools/call whoami", "tools/list", "resources/read", "tools/call question_post"} <= quick, replies
    if mode == LEGACY:
        assert "initialize" in quick


async def test_a_session_streams_a_wait_while_its_other_calls_answer_with_json(live: LiveHub) -> None:
    """The framing is chosen per request: calls made in the session while its wait streams are JSON."""
    token = await live.make_agent("bot")
    set_progress_every(live, 0.02)
    replies: Replies = []
    async with recording_client(live, token, LEGACY, replies) as bot, live.client(ADMIN_TOKEN) as human:
        q = structured(await bot.call_tool("question_post", {"project_id": "space-bot", "summary": "Go?"}))
        progressed = anyio.Event()
        result: dict[str, Any] = {}

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            progressed.set()

        async def wait() -> None:
            result.update(
                structured(await bot.call_tool("inbox_wait", {"wait_seconds": 30}, progress_callback=on_progress))
            )

        async with anyio.create_task_group() as tg:
            tg.start_soon(wait)
            await progressed.wait()
            for n in range(3):
                await bot.call_tool("signal_append", {"project_id": "space-bot", "summary": f"step {n}"})
            assert not result  # the wait is still open
            await human.call_tool("answer_post", {"question_id": q["question_id"], "body": "go"})
    assert result["timed_out"] is False
    assert [kind for asked, kind in replies if asked == "tools/call signal_append"] == ["application/json"] * 3
    assert [kind for asked, kind in replies if asked == "tools/call inbox_wait"] == ["text/event-stream"]


async def legacy_session(live: LiveHub) -> dict[str, str]:
    headers = {**ADMIN, "Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    r = await live.http.post(
        "/mcp",
        headers=headers,
        json=initialize(),
    )
    assert r.status_code == 200 and r.headers["content-type"] == "application/json"
    headers.update({"Mcp-Session-Id": r.headers["mcp-session-id"], "MCP-Protocol-Version": "2025-11-25"})
    r = await live.http.post("/mcp", headers=headers, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert r.status_code == 202
    return headers


async def test_a_handshake_era_client_must_still_accept_both_framings(live: LiveHub) -> None:
    # It cannot know which one a call gets: one that accepts only JSON is refused, as it always was.
    await live.make_project("p")
    headers = {**await legacy_session(live), "Accept": "application/json"}
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "signal_append", "arguments": {"project_id": "p", "summary": "nope"}},
    }
    r = await live.http.post("/mcp", headers=headers, json=call)
    assert r.status_code == 406
    r = await live.http.get("/api/v1/projects/p/feed", headers=ADMIN)
    assert r.status_code == 200 and "nope" not in r.text  # refused: nothing written
    headers["Accept"] = "application/json, text/event-stream"
    r = await live.http.post("/mcp", headers=headers, json=call)
    assert r.status_code == 200 and r.headers["content-type"] == "application/json"
    assert r.json()["id"] == 2 and r.json()["result"]["structuredContent"]["event_id"]


def test_which_handshake_era_requests_take_the_json_framing() -> None:
    def body(method: str, **fields: Any) -> bytes:
        return orjson.dumps({"jsonrpc": "2.0", "method": method, **fields})

    assert json_request_id(body("tools/call", id=7, params={"name": "signal_append"}), WAITING) == "7"
    assert json_request_id(body("tools/list", id="a"), WAITING) == "a"
    assert json_request_id(body("initialize", id=0, params={}), WAITING) == "0"
    assert json_request_id(body("tools/call", id=7, params={"name": "inbox_wait"}), WAITING) is None
    assert json_request_id(body("tools/call", id=7, params={"name": "notify_wait"}), WAITING) is None
    assert json_request_id(body("notifications/initialized"), WAITING) is None
    assert json_request_id(body("tools/list", id=None), WAITING) is None
    assert json_request_id(body("tools/list", id=True), WAITING) is None
    assert json_request_id(b'{"jsonrpc": "2.0", "id": 3, "result": {}}', WAITING) is None
    assert json_request_id(b"[]", WAITING) is None
    assert json_request_id(b"{not json", WAITING) is None


async def test_a_json_answered_request_carries_only_its_response() -> None:
    send, receive = anyio.create_memory_object_stream[SessionMessage](8)
    stream = _JsonOnlyResponses(send, {"7"})

    def related(request_id: int) -> SessionMessage:
        note = JSONRPCNotification(
            jsonrpc="2.0", method="notifications/progress", params={"progressToken": 1, "progress": 1}
        )
        return SessionMessage(note, metadata=ServerMessageMetadata(related_request_id=request_id))

    await stream.send(related(7))  # dropped: its request is answered with one JSON body
    await stream.send(related(8))  # another request's: kept
    await stream.send(SessionMessage(JSONRPCResponse(jsonrpc="2.0", id=7, result={})))
    await stream.aclose()
    async with receive:
        kept = [item.message async for item in receive]
    assert kept == [related(8).message, JSONRPCResponse(jsonrpc="2.0", id=7, result={})]
