"""Session and brain tools through the SDK's client over real streamable HTTP, in both eras."""

from __future__ import annotations

import pytest

from tests.harness import ADMIN
from tests.mcp.live import ERAS, LiveHub, error_in_text, structured

pytestmark = pytest.mark.anyio


async def tool_error(client: object, name: str, args: dict[str, object]) -> dict[str, object]:
    result = await client.call_tool(name, args)  # type: ignore[attr-defined]
    error = error_in_text(result)
    assert set(error) == {"code", "message", "retryable", "details"}
    return error


@pytest.mark.parametrize("mode", ERAS)
async def test_session_brain_and_replay_over_mcp(live: LiveHub, mode: str) -> None:
    alice = await live.make_agent("alice")
    bob = await live.make_agent("bob")
    await live.make_project("web")
    # The implicit active session needs a connection identity: on 2026-07-28, the Hub-Connection header.
    own = {"Hub-Connection": "alice-1"}
    async with live.client(alice, mode=mode, headers=own) as c:
        assert (await tool_error(c, "brain_put", {"path": "/kv/a", "content": "1", "store": "session"}))[
            "code"
        ] == "conflict"
        brief = structured(await c.call_tool("session_brief", {"project_id": "web"}))
        assert brief["previous_session"] is None
        started = structured(await c.call_tool("session_start", {"project_id": "web", "name": "task"}))
        assert started["started"] == "created" and started["namespaces"] == ["/fs/", "/kv/"]
        sid = started["session_id"]
        put = structured(
            await c.call_tool("brain_put", {"path": "/fs/plan.md", "content": "# plan", "store": "session"})
        )
        got = structured(await c.call_tool("brain_get", {"path": "/fs/plan.md"}))
        assert got["content"] == "# plan" and got["version"] == put["version"] and got["session_id"] == sid
        err = await tool_error(
            c, "brain_put", {"path": "/fs/plan.md", "content": "x", "store": "session", "if_version": "absent"}
        )
        assert err["code"] == "conflict" and str(err["message"]).endswith(f"current_version={put['version']}")
        listing = structured(await c.call_tool("brain_list", {"path": "/fs/"}))
        assert listing["entries"] == [{"path": "/fs/plan.md", "type": "file", "size_bytes": 6}]
        ended = structured(await c.call_tool("session_end", {"handoff": "continue with tests"}))
        assert ended["status"] == "ended"
    async with live.client(bob, mode=mode, headers={"Hub-Connection": "bob-1"}) as c:
        other = await tool_error(
            c, "brain_put", {"path": "/kv/x", "content": "1", "store": "session", "session_id": sid}
        )
        assert other["code"] == "forbidden" and str(other["message"]).endswith("owner=alice")
        read = structured(
            await c.call_tool(
                "brain_get", {"path": "/fs/plan.md", "session": {"agent": "alice", "name": "task"}, "project_id": "web"}
            )
        )
        assert read["content"] == "# plan"
        adopted = structured(
            await c.call_tool("session_start", {"project_id": "web", "name": "bobs", "from": {"session_id": sid}})
        )
        assert adopted["started"] == "adopted" and adopted["handoff"] == "continue with tests"
        structured(await c.call_tool("brain_put", {"path": "/kv/by", "content": "bob", "store": "session"}))
    r = await live.http.get(f"/api/v1/sessions/{sid}/replay", headers=ADMIN)
    calls = [(e["tool"], e["outcome"]) for e in r.json()["events"]]
    assert calls == [
        ("brain_put", "ok"),
        ("brain_get", "ok"),
        ("brain_put", "conflict"),
        ("brain_list", "ok"),
        ("session_end", "ok"),
        ("brain_put", "ok"),
    ]


async def test_brain_get_of_a_namespace_root_is_a_directory_conflict(live: LiveHub) -> None:
    alice = await live.make_agent("alice")
    await live.make_project("web")
    async with live.client(alice) as c:
        structured(await c.call_tool("session_start", {"project_id": "web", "name": "task"}))
        structured(await c.call_tool("brain_put", {"path": "/kv/a", "content": "1", "store": "session"}))
        for root in ("/kv", "/fs", "/kv/", "/fs/"):
            err = await tool_error(c, "brain_get", {"path": root})
            assert err["code"] == "conflict" and "directory" in str(err["message"])
        assert structured(await c.call_tool("brain_get", {"path": "/kv/a"}))["content"] == "1"


async def test_tools_are_listed_with_schemas(live: LiveHub) -> None:
    token = await live.make_agent("alice")
    async with live.client(token) as c:
        tools = {t.name: t for t in (await c.list_tools()).tools}
    for name in (
        "session_start",
        "session_end",
        "session_list",
        "session_brief",
        "brain_get",
        "brain_put",
        "brain_list",
        "brain_delete",
    ):
        assert name in tools and tools[name].input_schema["type"] == "object"
    assert tools["brain_put"].input_schema["required"] == ["path", "content", "store"]


async def test_brain_paths_meet_one_limit_on_both_surfaces(live: LiveHub) -> None:
    """The 512-byte limit is of the canonical path, over MCP as over REST: no transport cap in the
    tool schema disagrees with it (a 604-character path once passed MCP's 2048-character cap)."""
    alice = await live.make_agent("alice")
    await live.make_project("web")
    at_limit, over = "/fs/" + "x" * 508, "/fs/" + "x" * 509
    detour = "/fs/" + "d/../" * 500 + "x" * 508  # 3012 characters, 512 bytes once canonical
    async with live.client(alice, headers={"Hub-Connection": "alice-p"}) as c:
        sid = structured(await c.call_tool("session_start", {"project_id": "web", "name": "paths"}))["session_id"]
        put = structured(await c.call_tool("brain_put", {"path": detour, "content": "1", "store": "session"}))
        assert put["path"] == at_limit
        refused = await tool_error(c, "brain_put", {"path": over, "content": "2", "store": "session"})
        assert refused["code"] == "invalid_argument" and "513 bytes" in str(refused["message"])
        mcp_read = await tool_error(c, "brain_get", {"path": over})
        assert mcp_read["code"] == "invalid_argument" and mcp_read["message"] == refused["message"]
    url = f"/api/v1/sessions/{sid}/brain/entry"
    rest_over = await live.http.get(url, params={"path": over}, headers=ADMIN)
    assert rest_over.status_code == 400 and rest_over.json()["code"] == "invalid_argument"
    rest_read = await live.http.get(url, params={"path": detour}, headers=ADMIN)
    assert rest_read.status_code == 200 and rest_read.json()["content"] == "1"
    listing = await live.http.get(f"/api/v1/sessions/{sid}/brain", params={"path": "/fs/"}, headers=ADMIN)
    assert listing.json()["entries"] == [{"path": at_limit, "type": "file", "size_bytes": 1}]  # nothing else
