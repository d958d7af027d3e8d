"""`GET /api/v1/stream`: Server-Sent Events with ids only, per-caller visibility, keep-alive."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import orjson
import pytest

from hubcore.caller import Caller
from hubcore.hub import Hub
from hubhttp.api import stream as stream_module
from tests.feed.conftest import ask, signal
from tests.harness import ADMIN_TOKEN, HubClient

pytestmark = pytest.mark.anyio


class Stream:
    def __init__(self, messages: anyio.abc.ObjectReceiveStream[dict[str, Any]]) -> None:
        self._messages = messages
        self.status = 0
        self.headers: dict[bytes, bytes] = {}

    async def start(self) -> None:
        with anyio.fail_after(2):
            message = await self._messages.receive()
        assert message["type"] == "http.response.start"
        self.status, self.headers = message["status"], dict(message["headers"])

    async def chunk(self, timeout: float = 2.0) -> bytes:
        with anyio.fail_after(timeout):
            message = await self._messages.receive()
        assert message["type"] == "http.response.body"
        return bytes(message.get("body", b""))

    async def events(self, count: int) -> list[tuple[str, dict[str, Any]]]:
        """The next `count` SSE messages as (event name, data)."""
        found: list[tuple[str, dict[str, Any]]] = []
        while len(found) < count:
            for block in (await self.chunk()).decode().split("\n\n"):
                if block.startswith("event: "):
                    name, data = block.split("\n")
                    found.append((name.removeprefix("event: "), orjson.loads(data.removeprefix("data: "))))
        return found


@asynccontextmanager
async def open_stream(client: HubClient, token: str | None) -> AsyncIterator[Stream]:
    """A GET /api/v1/stream driven at the ASGI level (httpx's ASGI transport buffers whole bodies)."""
    headers = [(b"host", b"127.0.0.1:8080")]
    if token:
        headers.append((b"authorization", f"Bearer {token}".encode()))
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET",
             "scheme": "http", "path": "/api/v1/stream", "raw_path": b"/api/v1/stream", "query_string": b"",
             "root_path": "", "headers": headers, "client": ("127.0.0.1", 40000),
             "server": ("127.0.0.1", 8080)}
    send_to, received = anyio.create_memory_object_stream[dict[str, Any]](1000)
    gone = anyio.Event()
    asked = False

    async def receive() -> dict[str, Any]:
        nonlocal asked
        if not asked:
            asked = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await gone.wait()
        return {"type": "http.disconnect"}

    async def run_app() -> None:
        async with send_to:
            await client.app(scope, receive, send_to.send)

    async with anyio.create_task_group() as tg:
        tg.start_soon(run_app)
        stream = Stream(received)
        await stream.start()
        try:
            yield stream
        finally:
            gone.set()
            with anyio.fail_after(2):
                async for _ in received:  # drain until the app finishes
                    pass


async def test_admin_stream_carries_ids_only(client: HubClient, hub: Hub, bot: Caller) -> None:
    async with open_stream(client, ADMIN_TOKEN) as s:
        assert s.status == 200 and s.headers[b"content-type"].startswith(b"text/event-stream")
        assert await s.chunk() == b": connected\n\n"
        eid = await signal(hub, bot, text="secret summary", payload={"body": "secret body"})
        assert await s.events(1) == [("feed", {"project_id": "proj", "event_id": eid})]
        q = await ask(hub, bot)
        got = await s.events(2)
        assert sorted(got, key=lambda m: m[0]) == [("feed", {"project_id": "proj", "event_id": q}),
                                                   ("inbox", {"project_id": "proj", "event_id": q})]
        answer = (await hub.questions.answer(Caller.admin(), q, "yes"))["event_id"]
        got = await s.events(2)
        assert ("feed", {"project_id": "proj", "event_id": answer}) in got
        assert ("inbox", {"project_id": "proj", "event_id": q}) in got
    assert hub.notifier.listeners == 0  # the client went away: the subscription is gone


async def test_agent_stream_sees_only_visible_projects(client: HubClient, hub: Hub, bot: Caller) -> None:
    await client.make_project("secret", confidential=True)
    async with open_stream(client, client.bot_token) as s:  # type: ignore[attr-defined]
        assert s.status == 200
        await s.chunk()
        await signal(hub, Caller.admin(), "secret")
        later = await signal(hub, Caller.admin(), "proj")
        assert await s.events(1) == [("feed", {"project_id": "proj", "event_id": later})]
        await client.make_project("fresh")  # a project created after the stream opened
        fresh = await signal(hub, Caller.admin(), "fresh")
        assert await s.events(1) == [("feed", {"project_id": "fresh", "event_id": fresh})]


async def test_stream_needs_a_token(client: HubClient) -> None:
    for token in (None, "not-a-token"):
        r = await client.get("/api/v1/stream", headers={"Authorization": f"Bearer {token}"} if token else {})
        assert r.status_code == 401


async def test_keep_alive_comment(client: HubClient, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stream_module, "KEEPALIVE_SECS", 0.05)
    async with open_stream(client, ADMIN_TOKEN) as s:
        await s.chunk()
        assert await s.chunk() == b": keep-alive\n\n"


async def test_agent_visibility_is_read_once_per_unknown_project(client: HubClient, hub: Hub, bot: Caller,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    await client.make_project("secret", confidential=True)
    visible = stream_module.Visible(hub, bot)
    reads = 0
    original = hub.feed.visible_projects

    async def counting(caller: Caller) -> set[str] | None:
        nonlocal reads
        reads += 1
        return await original(caller)

    monkeypatch.setattr(hub.feed, "visible_projects", counting)
    assert [await visible.allows(p) for p in ("proj", "secret", "secret", "proj", "secret")] == [
        True, False, False, True, False]
    assert reads == 2  # once at first, once for the first sight of "secret"
    assert await stream_module.Visible(hub, Caller.admin()).allows("secret") is True
