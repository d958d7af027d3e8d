"""The feed services are plain anyio: the same flows on trio, with no HTTP in front."""

from __future__ import annotations

from pathlib import Path

import pytest

from hubcore.caller import Caller
from hubcore.clock import FakeClock
from hubcore.hub import Hub
from tests.feed.conftest import wait_through
from tests.harness import test_settings as settings_for
from tests.requests import (
    a_feed_read,
    a_project,
    a_question,
    a_signal,
    an_agent,
    an_answer,
    an_inbox_read,
)

pytestmark = pytest.mark.anyio
HUMAN = Caller.admin()


@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
async def test_ask_wait_answer_expire(tmp_path: Path, anyio_backend: str) -> None:
    clock = FakeClock()
    async with Hub.open(settings_for(tmp_path / "data"), clock=clock) as hub:
        await hub.projects.create(HUMAN, a_project(id="proj"))
        await hub.agents.create(HUMAN, an_agent(id="bot"))
        bot = Caller.agent("bot")
        q = (
            await hub.posts.question_post(bot, a_question(project_id="proj", summary="Ship it?", options=["yes", "no"]))
        )["event_id"]
        result = await wait_through(
            hub, bot, lambda: hub.resolutions.answer(HUMAN, an_answer(question_id=q, body="yes"))
        )
        assert result["items"][0]["answer"]["body"] == "yes"
        a = (
            await hub.posts.signal_append(
                bot,
                a_signal(
                    project_id="proj", kind="approval", summary="Deploy?", expires_in_seconds=60, on_expiry="approve"
                ),
            )
        )["event_id"]
        clock.advance(60)
        assert await hub.resolutions.sweep() == 1
        (item,) = (await hub.inbox.inbox_read(bot, an_inbox_read(since=q)))["items"]
        assert item["event_id"] == a and item["decision"]["decision"] == "approved" and item["expired"]
        page = await hub.feed.feed_read(bot, a_feed_read(project_id="proj"))
        assert [e["kind"] for e in page["events"]] == ["question", "answer", "approval", "answer"]
