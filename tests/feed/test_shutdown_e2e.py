"""End to end: SIGTERM on a real `hub-cli serve` answers every open wait and ends every stream.

Each waiter must get its tool's normal, well-formed result marked `shutdown: true` (not a dropped
connection, not an empty 500), the stream must end, and the process must exit 0 without holding
the grace window (30 s here). The 8 s bound below is only a hang guard, not a timing assertion.
"""

from __future__ import annotations

import asyncio
import itertools
import signal
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AsyncExitStack, suppress
from pathlib import Path
from typing import Any

import httpx
import httpx2
import orjson
import pytest
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

from tests.foundation.test_serve_e2e import base_env, serve, wait_ready

pytestmark = pytest.mark.e2e

ADMIN = "hub_e2e-admin"
MODERN = "2026-07-28"
LEGACY = "2025-11-25"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": {"name": "e2e", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
HANG_GUARD_SECS = 8.0
_ids = itertools.count(1)


def rpc(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": next(_ids), "method": method, "params": params}


def result_of(response: httpx.Response) -> dict[str, Any]:
    """The structured result of a tools/call, whether the reply was JSON or an SSE stream."""
    assert response.status_code == 200, (response.status_code, response.text)
    text = response.text
    if response.headers["content-type"].startswith("text/event-stream"):
        text = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")][-1]
    reply = orjson.loads(text)
    assert "error" not in reply, reply
    assert reply["result"].get("isError") is not True, reply
    return dict(reply["result"]["structuredContent"])


class Agent:
    def __init__(self, url: str, token: str) -> None:
        self.url, self.token = url, token
        self.base = {
            "Authorization": f"Bearer {token}",
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
        }

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """A 2026-07-28 tools/call: one request, no session."""
        headers = {**self.base, "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": name}
        body = rpc("tools/call", {"name": name, "arguments": arguments, "_meta": META})
        with httpx.Client(timeout=HANG_GUARD_SECS + 60) as client:
            return result_of(client.post(f"{self.url}/mcp", content=orjson.dumps(body), headers=headers))

    def legacy_call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """A 2025-11-25 tools/call on a fresh session (initialize, initialized, call)."""
        with httpx.Client(timeout=HANG_GUARD_SECS + 60) as client:
            hello = client.post(
                f"{self.url}/mcp",
                headers=self.base,
                content=orjson.dumps(
                    rpc(
                        "initialize",
                        {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "e2e", "version": "1"}},
                    )
                ),
            )
            assert hello.status_code == 200, hello.text
            headers = {**self.base, "Mcp-Session-Id": hello.headers["mcp-session-id"], "MCP-Protocol-Version": LEGACY}
            note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            assert client.post(f"{self.url}/mcp", headers=headers, content=orjson.dumps(note)).status_code == 202
            body = rpc("tools/call", {"name": name, "arguments": arguments})
            return result_of(client.post(f"{self.url}/mcp", content=orjson.dumps(body), headers=headers))


def sdk_wait(url: str, token: str, answer: Future[dict[str, Any]], hub_gone: threading.Event) -> None:
    """inbox_wait through the SDK's own client in the handshake era, which also holds its
    session's standalone GET stream open. The client stays open until the hub has exited, as a
    real one would: that stream must not keep the hub running."""

    async def run() -> None:
        stack = AsyncExitStack()
        try:
            http = await stack.enter_async_context(
                httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(30, read=120))
            )
            client = await stack.enter_async_context(
                Client(streamable_http_client(f"{url}/mcp", http_client=http), mode="legacy", cache=None)
            )
            await client.list_tools()  # the client checks results against the schemas: fetch them now
            result = await client.call_tool("inbox_wait", {"wait_seconds": 50})
            assert not result.is_error and isinstance(result.structured_content, dict), result
            answer.set_result(result.structured_content)
            await asyncio.to_thread(hub_gone.wait, HANG_GUARD_SECS + 30)
        finally:
            with suppress(Exception):  # the hub is gone: the client's goodbye (DELETE) cannot connect
                await stack.aclose()

    try:
        asyncio.run(run())
    except BaseException as exc:
        if not answer.done():
            answer.set_exception(exc)


def gauge(url: str, name: str) -> float:
    text = httpx.get(f"{url}/metrics", headers={"Authorization": f"Bearer {ADMIN}"}).text
    return next(float(line.split()[1]) for line in text.splitlines() if line.startswith(name + " "))


def wait_for_gauges(url: str, waits: int, streams: int) -> None:
    """Until the hub reports every wait and stream parked (its own count, read off /metrics)."""
    deadline = time.monotonic() + 15
    while (gauge(url, "hub_waits_open"), gauge(url, "hub_streams_open")) != (waits, streams):
        assert time.monotonic() < deadline, "the waits never parked on the hub"
        time.sleep(0.05)


def read_stream(url: str) -> list[str]:
    headers = {"Authorization": f"Bearer {ADMIN}"}
    with httpx.stream("GET", f"{url}/api/v1/stream", headers=headers, timeout=HANG_GUARD_SECS + 60) as r:
        assert r.status_code == 200
        return list(r.iter_lines())


def test_sigterm_answers_open_waits_then_exits(tmp_path: Path) -> None:
    env = base_env(tmp_path, HUB_ADMIN_TOKEN=ADMIN, HUB_SHUTDOWN_GRACE_SECS="30")
    with serve(env) as hub:
        wait_ready(hub.url)
        admin = {"Authorization": f"Bearer {ADMIN}"}
        assert httpx.post(f"{hub.url}/api/v1/projects", json={"id": "proj"}, headers=admin).status_code == 201
        assert httpx.post(f"{hub.url}/api/v1/agents", json={"id": "bot"}, headers=admin).status_code == 201
        token = httpx.post(f"{hub.url}/api/v1/agents/bot/token", headers=admin).json()["token"]
        bot = Agent(hub.url, token)
        bot.call("question_post", {"project_id": "proj", "summary": "Ship it?"})
        bot.call("notify_subscribe", {"kinds": ["signal"], "project_id": "proj"})
        sdk_answer: Future[dict[str, Any]] = Future()
        hub_gone = threading.Event()
        with ThreadPoolExecutor(5) as pool:
            pool.submit(sdk_wait, hub.url, token, sdk_answer, hub_gone)
            waits = {
                "inbox_wait": pool.submit(bot.call, "inbox_wait", {"wait_seconds": 50}),
                "inbox_wait (2025-11-25)": pool.submit(bot.legacy_call, "inbox_wait", {"wait_seconds": 50}),
                "notify_wait": pool.submit(bot.call, "notify_wait", {"wait_seconds": 50}),
                "inbox_wait (SDK client)": sdk_answer,
            }
            stream = pool.submit(read_stream, hub.url)
            wait_for_gauges(hub.url, waits=4, streams=1)
            hub.proc.send_signal(signal.SIGTERM)
            try:
                # First every waiter has its answer (from a live process), then the process exits.
                results = {name: f.result(timeout=HANG_GUARD_SECS) for name, f in waits.items()}
                lines = stream.result(timeout=HANG_GUARD_SECS)
                code = hub.proc.wait(timeout=HANG_GUARD_SECS)
            finally:
                hub_gone.set()
        assert code == 0
        for name in ("inbox_wait", "inbox_wait (2025-11-25)", "inbox_wait (SDK client)"):
            assert results[name]["items"] == [] and results[name]["timed_out"] is True, name
            assert results[name]["shutdown"] is True, name
        notified = results["notify_wait"]
        assert notified["timed_out"] is True and notified["notifications"] == {"pending": []}
        assert notified["shutdown"] is True
        assert lines[0] == ": connected"  # and then the response ended instead of hanging
        stderr = hub.proc.stderr.read() if hub.proc.stderr else ""  # before serve() closes the pipe
    assert "Traceback" not in stderr and "ERROR" not in stderr, stderr
