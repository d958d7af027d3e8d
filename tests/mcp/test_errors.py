"""Tool errors follow MCP's convention: `isError` results the model reads, never JSON-RPC errors."""

from __future__ import annotations

from typing import Any

import pytest

from tests.harness import ADMIN_TOKEN
from tests.mcp.live import ERAS, LiveHub, tool_error

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("mode", ERAS)
async def test_a_missing_project_is_not_found_for_the_admin_and_forbidden_for_an_agent(
    live: LiveHub, mode: str
) -> None:
    token = await live.make_agent("bot")
    async with live.client(ADMIN_TOKEN, mode=mode) as human, live.client(token, mode=mode) as bot:
        admin = tool_error(await human.call_tool("feed_read", {"project_id": "missing"}), "not_found")
        agent = tool_error(await bot.call_tool("feed_read", {"project_id": "missing"}), "forbidden")
    assert admin["message"] == agent["message"] and "missing" in admin["message"]
    assert admin["retryable"] is agent["retryable"] is False


@pytest.mark.parametrize("mode", ERAS)
async def test_argument_errors_name_the_argument_and_the_rule(live: LiveHub, mode: str) -> None:
    token = await live.make_agent("bot")
    cases: list[tuple[str, dict[str, Any], str, str]] = [
        ("feed_read", {"project_id": "space-bot", "limit": 501}, "limit", "must be at most 500"),
        ("feed_read", {"project_id": "space-bot", "limit": "ten"}, "limit", "must be of type integer"),
        ("inbox_read", {"status": "later"}, "status", "must be one of 'unread', 'read', 'waiting', 'resolved'"),
        (
            "question_post",
            {"project_id": "space-bot", "summary": "Q?", "options": ["a"]},
            "options",
            "must have at least 2 items",
        ),
        (
            "question_post",
            {"project_id": "space-bot", "summary": "Q?", "options": ["a", ""]},
            "options.1",
            "must be at least 1 characters long",
        ),
        ("signal_append", {"summary": "x"}, "project_id", "missing (required)"),
        ("whoami", {"extra": True}, "extra", "unknown argument; tools/list gives this tool's arguments"),
        ("feed_read", {"project_id": "Not A Slug"}, "project_id", "must match the pattern"),
    ]
    async with live.client(token, mode=mode) as bot:
        for name, args, argument, rule in cases:
            error = tool_error(await bot.call_tool(name, args), "invalid_argument")
            assert error["details"] == {"argument": argument}, (name, error)
            assert error["message"].startswith(f"argument {argument}: {rule}"), (name, error)
    r = await live.http.get("/api/v1/projects/space-bot/feed", headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
    assert r.status_code == 200 and r.json()["events"] == []  # nothing was written


async def test_a_huge_value_is_never_echoed_back(live: LiveHub) -> None:
    token = await live.make_agent("bot")
    huge = "x" * 3_500_000
    async with live.client(token) as bot:
        result = await bot.call_tool("signal_append", {"project_id": "space-bot", "summary": huge})
        unknown = await bot.call_tool("whoami", {huge[:100_000]: 1})
    # A content member over its size limit is payload_too_large, as over REST (docs/decisions.md).
    error = tool_error(result, "payload_too_large")
    assert error["message"] == "argument summary: longer than 1024 characters"
    assert all(len(block.text) < 1024 for block in result.content)  # type: ignore[union-attr]
    assert len(tool_error(unknown, "invalid_argument")["message"]) < 200
    assert len(unknown.content[0].text) < 1024  # type: ignore[union-attr]
