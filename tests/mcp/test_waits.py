"""Waits fit the clients' clocks: cut to 55 seconds, with progress notifications while they wait."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from hubmcp.waits import WaitPolicy, capped_wait
from tests.harness import ADMIN_TOKEN
from tests.mcp.live import ERAS, LiveHub, structured

pytestmark = pytest.mark.anyio


def set_policy(live: LiveHub, policy: WaitPolicy) -> None:
    endpoint = live.app._mcp  # the served endpoint; its binding hands every call the wait policy
    assert endpoint is not None
    endpoint.mcp.binding.waits = policy


async def test_a_wait_asked_for_60_seconds_waits_55_and_says_so() -> None:
    asked: list[float] = []

    async def work(seconds: float) -> dict[str, Any]:
        asked.append(seconds)
        return {"timed_out": True}

    assert await capped_wait(None, WaitPolicy(), 60, work) == {"timed_out": True, "capped": True, "wait_seconds": 55}
    assert await capped_wait(None, WaitPolicy(), 30, work) == {"timed_out": True}
    assert asked == [55, 30]


@pytest.mark.parametrize("mode", ERAS)
async def test_a_capped_wait_answers_with_capped(live: LiveHub, mode: str) -> None:
    token = await live.make_agent("bot")
    set_policy(live, WaitPolicy(cap=0.05))
    async with live.client(token, mode=mode) as bot:
        got = structured(await bot.call_tool("notify_wait", {"wait_seconds": 60}))
        assert got == {"timed_out": True, "notifications": {"pending": []}, "capped": True, "wait_seconds": 0.05}
        polled = structured(await bot.call_tool("inbox_wait", {"wait_seconds": 0}))
        assert "capped" not in polled and polled["timed_out"] is True


@pytest.mark.parametrize("mode", ERAS)
async def test_a_wait_sends_progress_and_then_its_answer(live: LiveHub, mode: str) -> None:
    token = await live.make_agent("bot")
    set_policy(live, WaitPolicy(progress_every=0.02))
    progressed = anyio.Event()
    seen: list[tuple[float, float | None, str | None]] = []
    result: dict[str, Any] = {}

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))
        progressed.set()

    async with live.client(token, mode=mode) as bot, live.client(ADMIN_TOKEN, mode=mode) as human:
        q = structured(await bot.call_tool("question_post", {"project_id": "space-bot", "summary": "Go?"}))

        async def wait() -> None:
            answer = await bot.call_tool("inbox_wait", {"wait_seconds": 30}, progress_callback=on_progress)
            result.update(structured(answer))

        async with anyio.create_task_group() as tg:
            tg.start_soon(wait)
            await progressed.wait()  # the wait is under way and has reported progress
            assert not result
            await human.call_tool("answer_post", {"question_id": q["question_id"], "body": "go"})
    assert result["timed_out"] is False and result["items"][0]["event_id"] == q["question_id"]
    assert "capped" not in result
    progress, total, message = seen[0]
    assert 0 < progress <= 30 and total == 30 and message == "waiting"
    assert [p for p, _, _ in seen] == sorted(p for p, _, _ in seen)
