"""`GET /api/v1/stream`: Server-Sent Events with ids only, per-caller visibility, keep-alive."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import anyio
import orjson
import pytest

from hubcore.caller import Caller
from hubcore.hub import Hub
from hubcore.services.changes import Change, ChangeLog
from hubhttp.api import stream as stream_module
from tests.feed.conftest import ClientFactory, ask, signal
from tests.harness import ADMIN_TOKEN, HubClient
from tests.requests import an_answer

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def no_coalescing_pause(monkeypatch: pytest.MonkeyPatch) -> None:
    """Streams rest between chunks so writes gather; the tests need not wait for that."""
    monkeypatch.setattr(stream_module, "COALESCE_SECS", 0.0)


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

    async def ended(self) -> bool:
        """Whether the response finished (its last body message), skipping any chunks before."""
        while True:
            with anyio.fail_after(2):
                message = await self._messages.receive()
            if not message.get("more_body", False):
                return True

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
async def open_stream(client: HubClient, token: str | None = ADMIN_TOKEN) -> AsyncIterator[Stream]:
    """A GET /api/v1/stream driven at the ASGI level (httpx's ASGI transport buffers whole bodies)."""
    headers = [(b"host", b"127.0.0.1:8080")]
    if token:
        headers.append((b"authorization", f"Bearer {token}".encode()))
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": "/api/v1/stream",
        "raw_path": b"/api/v1/stream",
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 40000),
        "server": ("127.0.0.1", 8080),
    }
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

    async with received, anyio.create_task_group() as tg:
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
        assert sorted(got, key=lambda m: m[0]) == [
            ("feed", {"project_id": "proj", "event_id": q}),
            ("inbox", {"project_id": "proj", "event_id": q}),
        ]
        answer = (await hub.resolutions.answer(Caller.admin(), an_answer(question_id=q, body="yes")))["event_id"]
        got = await s.events(2)
        assert ("feed", {"project_id": "proj", "event_id": answer}) in got
        assert ("inbox", {"project_id": "proj", "event_id": q}) in got
    assert hub.changes.listeners == 0  # the client went away: the subscription is gone


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


async def test_agent_visibility_is_read_once_per_unknown_project(
    client: HubClient, hub: Hub, bot: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
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
        True,
        False,
        False,
        True,
        False,
    ]
    assert reads == 2  # once at first, once for the first sight of "secret"
    assert await stream_module.Visible(hub, Caller.admin()).allows("secret") is True


def sse_blocks(chunk: bytes) -> list[str]:
    return [b for b in chunk.decode().split("\n\n") if b]


async def test_changes_since_the_last_turn_go_out_as_one_chunk(client: HubClient, hub: Hub) -> None:
    async with open_stream(client) as s:
        assert await s.chunk() == b": connected\n\n"
        # Published back to back, before the stream's task runs again: one turn, one chunk.
        hub.changes.publish([Change("feed", "proj", f"e{n}") for n in range(3)])
        blocks = sse_blocks(await s.chunk())
    assert blocks == [f'event: feed\ndata: {{"project_id":"proj","event_id":"e{n}"}}' for n in range(3)]


async def test_a_stream_that_fell_behind_the_log_gets_one_refresh(client: HubClient, hub: Hub) -> None:
    hub.changes.log = ChangeLog(4)  # a small ring, so falling behind takes few changes
    async with open_stream(client) as s:
        await s.chunk()
        hub.changes.publish([Change("feed", "proj", f"e{n}") for n in range(10)])
        assert await s.chunk() == b"event: refresh\ndata: {}\n\n"  # not a backlog of ten
        hub.changes.publish([Change("inbox", "proj", "after")])
        assert await s.events(1) == [("inbox", {"project_id": "proj", "event_id": "after"})]


async def test_streams_per_token_are_capped(client: HubClient, hub: Hub, bot: Caller) -> None:
    cap = hub.settings.streams_per_token
    assert cap == 8  # the default (DESIGN section 7)
    token = client.bot_token  # type: ignore[attr-defined]
    async with AsyncExitStack() as streams:
        for _ in range(cap):
            s = await streams.enter_async_context(open_stream(client, token))
            assert s.status == 200
        assert hub.changes.listeners == cap
        async with open_stream(client, token) as refused:
            assert refused.status == 429 and refused.headers[b"retry-after"] == b"5"
            problem = orjson.loads(await refused.chunk())
        assert problem["code"] == "rate_limited" and "8 open streams" in problem["detail"]
        assert hub.changes.listeners == cap  # the refusal holds no slot
        async with open_stream(client, ADMIN_TOKEN) as admin:  # another token has its own count
            assert admin.status == 200
    # Every stream closed: the count dropped, so the token may open streams again.
    assert hub.changes.listeners == 0
    async with open_stream(client, token) as again:
        assert again.status == 200


async def test_closing_one_stream_frees_its_slot(make_client: ClientFactory) -> None:
    async with make_client(streams_per_token=1) as client:
        async with open_stream(client) as first:
            assert first.status == 200
            async with open_stream(client) as second:
                assert second.status == 429
        async with open_stream(client) as third:
            assert third.status == 200


async def test_shutdown_ends_every_stream(client: HubClient, hub: Hub) -> None:
    async with open_stream(client) as s:
        await s.chunk()
        hub.begin_shutdown()
        assert await s.ended()
    assert hub.changes.listeners == 0


async def test_streams_sharing_a_turn_each_get_only_what_they_may_see(client: HubClient, hub: Hub, bot: Caller) -> None:
    await client.make_project("secret", confidential=True)
    token = client.bot_token  # type: ignore[attr-defined]
    async with open_stream(client) as admin, open_stream(client, token) as agent:
        await admin.chunk()
        await agent.chunk()
        # One batch, so both streams take the same range of the log in their next turn.
        hub.changes.publish(
            [Change("feed", "secret", "s1"), Change("feed", "proj", "p1"), Change("inbox", "secret", "s2")]
        )
        assert [e for _, e in await admin.events(3)] == [
            {"project_id": "secret", "event_id": "s1"},
            {"project_id": "proj", "event_id": "p1"},
            {"project_id": "secret", "event_id": "s2"},
        ]
        assert await agent.events(1) == [("feed", {"project_id": "proj", "event_id": "p1"})]


async def test_the_turn_budget_banks_a_second_then_queues_turns_in_order() -> None:
    """A quiet hub's changes go out at once (turns are banked); past the bank each turn waits
    behind the ones before it, so all streams together take at most `rate` turns a second."""
    budget = stream_module.TurnBudget(ChangeLog(8), rate=2.0, banked=2.0)
    assert budget.take() == 0.0
    assert budget.take() == 0.0
    third, fourth = budget.take(), budget.take()
    assert 0.4 < third <= 0.5  # one token short: half a second at 2 a second
    assert 0.9 < fourth <= 1.0  # queued behind the third
