"""Integers beyond 64 bits: an ordinary answer, the same over REST and MCP, and a replay row."""

from __future__ import annotations

import pytest

from tests.harness import ADMIN
from tests.mcp.live import LEGACY, MODERN, LiveHub, structured, tool_error

pytestmark = pytest.mark.anyio

WIDE = 2**70


@pytest.mark.parametrize("mode", [LEGACY, MODERN])
async def test_a_wide_integer_gets_its_ordinary_answer_and_is_replayed(live: LiveHub, mode: str) -> None:
    token = await live.make_agent("bot")
    await live.make_project("web")
    async with live.client(token, mode=mode, headers={"Hub-Connection": "bot-1"}) as bot:
        sid = structured(await bot.call_tool("session_start", {"project_id": "web", "name": "w"}))["session_id"]
        ranged = tool_error(await bot.call_tool("feed_read", {"project_id": "web", "limit": WIDE}), "invalid_argument")
        assert ranged["message"] == "argument limit: must be at most 500"
        waited = tool_error(await bot.call_tool("inbox_wait", {"wait_seconds": -WIDE}), "invalid_argument")
        assert waited["details"] == {"argument": "wait_seconds"}
        free = tool_error(
            await bot.call_tool(
                "signal_append", {"project_id": "web", "summary": "s", "payload": {"a": {"b": [1, WIDE]}}}
            ),
            "invalid_argument",
        )
        assert free["message"] == "payload.a.b[1] is an integer beyond 64 bits; send it as a string"
        assert free["details"] == {"field": "payload.a.b[1]"}
        fits = structured(
            await bot.call_tool("signal_append", {"project_id": "web", "summary": "fits", "payload": {"n": 2**64 - 1}})
        )
    r = await live.http.get("/api/v1/projects/web/feed", headers=ADMIN)
    events = [e for e in r.json()["events"] if e["kind"] == "signal"]
    assert [e["id"] for e in events] == [fits["event_id"]] and events[0]["payload"] == {"n": 2**64 - 1}
    r = await live.http.get(f"/api/v1/sessions/{sid}/replay", headers=ADMIN)
    rows = r.json()["events"]
    assert [(e["tool"], e["outcome"]) for e in rows] == [
        ("feed_read", "invalid_argument"),
        ("inbox_wait", "invalid_argument"),
        ("signal_append", "invalid_argument"),
        ("signal_append", "ok"),
    ]
    assert str(WIDE) in rows[0]["arguments"] and str(WIDE) in rows[2]["arguments"]


async def test_rest_refuses_the_same_wide_integer_naming_the_member(live: LiveHub) -> None:
    await live.make_project("web")
    body = b'{"summary": "idea", "payload": {"n": [0, ' + str(WIDE).encode() + b"]}}"
    r = await live.http.post(
        "/api/v1/projects/web/ideas", content=body, headers={**ADMIN, "Content-Type": "application/json"}
    )
    assert r.status_code == 400 and r.json()["code"] == "invalid_argument"
    assert r.json()["detail"] == "payload.n[1] is an integer beyond 64 bits; send it as a string"
    r = await live.http.get("/api/v1/projects/web/feed", headers=ADMIN)
    assert [e for e in r.json()["events"] if e["kind"] == "idea"] == []
