"""Helpers for the feed, inbox, questions and stream tests."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import anyio
import pytest

from hubcore.caller import Caller
from hubcore.clock import FakeClock
from hubcore.hub import Hub
from tests.harness import HubClient, hub_client, test_settings
from tests.requests import a_question, a_signal, an_inbox_wait

pytestmark = pytest.mark.anyio

ClientFactory = Callable[..., AbstractAsyncContextManager[HubClient]]


@pytest.fixture
def hub(client: HubClient) -> Hub:
    return client.app.hub


@pytest.fixture
async def bot(client: HubClient) -> Caller:
    """An agent `bot` with a token (kept on `client.bot_token`) and a project `proj`."""
    client.bot_token = await client.make_agent("bot")  # type: ignore[attr-defined]
    await client.make_project("proj")
    return Caller.agent("bot")


@pytest.fixture
def make_client(tmp_path: Path, clock: FakeClock) -> ClientFactory:
    """A client on a hub with settings overridden (a fresh data directory per call)."""
    counter = iter(range(1000))

    def factory(**overrides: Any) -> AbstractAsyncContextManager[HubClient]:
        settings = test_settings(tmp_path / f"data-{next(counter)}", **overrides)
        return hub_client(settings, clock)

    return factory


def rows(client: HubClient, sql: str, *params: Any) -> int:
    """A count from hub.db through a separate read connection."""
    with client.db() as conn:
        return int(conn.execute(sql, params).fetchone()[0])


def totals(client: HubClient) -> tuple[int, int, int]:
    """(events, inbox items, idempotency keys): what a refusal must leave unchanged."""
    return (
        rows(client, "SELECT COUNT(*) FROM events"),
        rows(client, "SELECT COUNT(*) FROM inbox"),
        rows(client, "SELECT COUNT(*) FROM idempotency_keys"),
    )


async def ask(hub: Hub, who: Caller, project: str = "proj", text: str = "Ship it?", **kw: Any) -> str:
    result = await hub.posts.question_post(who, a_question(project_id=project, summary=text, **kw))
    return str(result["event_id"])


async def approval(hub: Hub, who: Caller, project: str = "proj", text: str = "Deploy?", **kw: Any) -> str:
    result = await hub.posts.signal_append(who, a_signal(project_id=project, kind="approval", summary=text, **kw))
    return str(result["event_id"])


async def signal(hub: Hub, who: Caller, project: str = "proj", text: str = "hello", **kw: Any) -> str:
    result = await hub.posts.signal_append(
        who, a_signal(project_id=project, kind=kw.pop("kind", "signal"), summary=text, **kw)
    )
    return str(result["event_id"])


async def wait_through(hub: Hub, who: Caller, act: Callable[[], Awaitable[object]]) -> dict[str, Any]:
    """`inbox_wait` (up to 10 s) for `who`, parked before `act` runs: the one result it returned."""
    results: list[dict[str, Any]] = []

    async def waiting() -> None:
        results.append(await hub.inbox.wait(who, an_inbox_wait(wait_seconds=10)))

    async with anyio.create_task_group() as tg:
        tg.start_soon(waiting)
        await anyio.wait_all_tasks_blocked()
        await act()
    (result,) = results
    return result


async def iterate(n: int) -> AsyncIterator[int]:
    for i in range(n):
        yield i
