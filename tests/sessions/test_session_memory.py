"""One session lookup per call (issue 11, part 2): a connection's active session is remembered,
and a session ended, reassigned or pruned elsewhere is never served from that memory.

Through the SDK's client over real streamable HTTP, in both eras; the changes come from the
human over REST, as they would from another window.
"""

from __future__ import annotations

from typing import Any

import pytest
from mcp.client import Client

from hubcore.hub import Hub
from tests.harness import ADMIN
from tests.mcp.live import ERAS, LiveHub, structured, tool_error

pytestmark = pytest.mark.anyio


class Lookups:
    """Counts the sessions service's one-row lookups of a remembered session."""

    def __init__(self, hub: Hub, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        real = hub.sessions.running

        async def running(*args: Any) -> Any:
            self.count += 1
            return await real(*args)

        monkeypatch.setattr(hub.sessions, "running", running)


async def entries(live: LiveHub, sid: str) -> list[str]:
    r = await live.http.get(f"/api/v1/sessions/{sid}/brain", params={"path": "/kv/"}, headers=ADMIN)
    assert r.status_code == 200, r.text
    return [e["path"] for e in r.json()["entries"]]


async def put(client: Client, path: str) -> Any:
    return await client.call_tool("brain_put", {"path": path, "content": "x", "store": "session"})


async def started(client: Client, name: str) -> str:
    return str(structured(await client.call_tool("session_start", {"project_id": "web", "name": name}))["session_id"])


@pytest.mark.parametrize("mode", ERAS)
async def test_the_active_session_is_remembered_until_a_session_changes(
    live: LiveHub, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = await live.make_agent("alice")
    await live.make_project("web")
    lookups = Lookups(live.app.hub, monkeypatch)
    async with (
        live.client(token, mode=mode, headers={"Hub-Connection": "a"}) as c,
        live.client(token, mode=mode, headers={"Hub-Connection": "b"}) as other,
    ):
        sid = await started(c, "task")
        structured(await put(c, "/kv/one"))
        structured(await c.call_tool("brain_get", {"path": "/kv/one"}))
        assert lookups.count == 0  # served from the connection's memory
        ended = await started(other, "other")
        structured(await other.call_tool("session_end", {"session_id": ended}))  # a session changed
        structured(await put(c, "/kv/two"))
        structured(await c.call_tool("brain_list", {"path": "/kv/"}))
        assert lookups.count == 1  # looked up once, then remembered again
    assert await entries(live, sid) == ["/kv/one", "/kv/two"]


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize("change", ["end", "reassign", "prune"])
async def test_a_session_changed_elsewhere_is_never_served_from_memory(live: LiveHub, mode: str, change: str) -> None:
    token = await live.make_agent("alice")
    await live.make_agent("bob")
    await live.make_project("web")
    async with live.client(token, mode=mode, headers={"Hub-Connection": "a"}) as c:
        sid = await started(c, "task")
        structured(await put(c, "/kv/before"))
        r = (
            await live.http.post(f"/api/v1/sessions/{sid}/end", json={}, headers=ADMIN)
            if change != "reassign"
            else await live.http.post(f"/api/v1/sessions/{sid}/reassign", json={"agent": "bob"}, headers=ADMIN)
        )
        assert r.status_code == 200, r.text
        if change == "prune":
            r = await live.http.delete(f"/api/v1/storage/sessions/{sid}", headers=ADMIN)
            assert r.status_code == 200, r.text
        refused = tool_error(await put(c, "/kv/after"), "conflict")
        assert "no active session" in refused["message"]
        assert (
            "no active session"
            in tool_error(await c.call_tool("brain_get", {"path": "/kv/before"}), "conflict")["message"]
        )
    if change != "prune":
        assert await entries(live, sid) == ["/kv/before"]  # the refused write wrote nothing
