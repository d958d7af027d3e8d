"""Form questions over MCP: the form's limits at their edges on question_post, the value's on
answer_post, and the structured `value` carried by inbox_wait, notify_wait and inbox_read, each of
which records the delivery receipt (`delivered_at`) once."""

from __future__ import annotations

import pytest

from hubcore.services import forms
from tests.harness import ADMIN_TOKEN
from tests.mcp.live import LiveHub, structured, tool_error

pytestmark = pytest.mark.anyio

PICK = {
    "type": "object",
    "properties": {"ok": {"type": "boolean", "default": True}, "n": {"type": "integer", "minimum": 1, "maximum": 3}},
    "required": ["ok"],
}


def many(n: int) -> dict[str, object]:
    return {"type": "object", "properties": {f"p{i}": {"type": "boolean"} for i in range(n)}}


async def test_form_limits_at_their_edges_on_question_post(live: LiveHub) -> None:
    token = await live.make_agent("bot")
    async with live.client(token) as bot:
        ok = await bot.call_tool(
            "question_post", {"project_id": "space-bot", "summary": "Max", "form": many(forms.PROPERTIES_MAX)}
        )
        assert structured(ok)["event_id"]
        over = await bot.call_tool(
            "question_post", {"project_id": "space-bot", "summary": "Over", "form": many(forms.PROPERTIES_MAX + 1)}
        )
        assert tool_error(over, "invalid_argument")["details"]["field"] == "form.properties"
        odd = await bot.call_tool(
            "question_post",
            {
                "project_id": "space-bot",
                "summary": "Odd",
                "form": {"type": "object", "properties": {"x": {"type": "string", "maxLength": forms.STRING_MAX + 1}}},
            },
        )
        assert tool_error(odd, "invalid_argument")["details"]["field"] == "form.properties.x.maxLength"
        waiting = structured(await bot.call_tool("inbox_read", {"status": "waiting"}))["items"]
        assert [i["summary"] for i in waiting] == ["Max"]  # the refused ones wrote nothing


async def test_value_reaches_the_agent_and_the_receipt_is_kept_once(live: LiveHub) -> None:
    token = await live.make_agent("bot")
    async with live.client(token) as bot, live.client(ADMIN_TOKEN) as human:
        q = structured(
            await bot.call_tool("question_post", {"project_id": "space-bot", "summary": "Go?", "form": PICK})
        )["question_id"]
        bad = await human.call_tool("answer_post", {"question_id": q, "value": {"ok": True, "n": 4}})
        assert tool_error(bad, "invalid_argument")["details"]["field"] == "value.n"
        assert structured(await human.call_tool("answer_post", {"question_id": q, "value": {"ok": True, "n": 3}}))
        # The receipt is not there before the agent picked the answer up.
        [item] = structured(await human.call_tool("inbox_read", {"status": "resolved"}))["items"]
        assert item["delivered_at"] is None and item["answer"]["value"] == {"ok": True, "n": 3}
        got = structured(await bot.call_tool("inbox_wait", {"wait_seconds": 0}))
        [item] = got["items"]
        assert item["answer"]["value"] == {"ok": True, "n": 3} and item["delivered_at"] is not None
        first = item["delivered_at"]
        [again] = structured(await bot.call_tool("inbox_read", {"status": "resolved"}))["items"]
        assert again["delivered_at"] == first  # recorded once
        r = await live.http.get("/api/v1/inbox?status=resolved", headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
        assert r.json()["items"][0]["delivered_at"] == first


async def test_notify_wait_carries_the_value_and_records_the_receipt(live: LiveHub) -> None:
    token = await live.make_agent("bot")
    async with live.client(token) as bot, live.client(ADMIN_TOKEN) as human:
        q = structured(
            await bot.call_tool("question_post", {"project_id": "space-bot", "summary": "Go?", "form": PICK})
        )["question_id"]
        await human.call_tool("answer_post", {"question_id": q, "value": {"ok": False}})
        waited = structured(await bot.call_tool("notify_wait", {"wait_seconds": 0}))
        [note] = waited["notifications"]["pending"]
        assert note["thread_id"] == q and note["value"] == {"ok": False}
        [item] = structured(await human.call_tool("inbox_read", {"status": "resolved"}))["items"]
        assert item["delivered_at"] is not None
