"""What the sessions tests that run on asyncio and on trio share: a hub opened directly (no HTTP
client, which is asyncio's), with the admin, the agents alice and bob, and the ordinary project
`web`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from hubcore.caller import Caller
from hubcore.clock import FakeClock
from hubcore.hub import Hub
from tests.harness import test_settings
from tests.requests import a_project, an_agent

HUMAN, ALICE, BOB = Caller.admin(), Caller.agent("alice"), Caller.agent("bob")


@asynccontextmanager
async def alice_and_bob_hub(data: Path, *, confidential: tuple[str, ...] = ()) -> AsyncIterator[Hub]:
    """A hub on `data` with `web` (and the `confidential` projects), alice and bob."""
    async with Hub.open(test_settings(data), clock=FakeClock()) as hub:
        await hub.projects.create(HUMAN, a_project(id="web"))
        for project in confidential:
            await hub.projects.create(HUMAN, a_project(id=project, confidential=True))
        await hub.agents.create(HUMAN, an_agent(id="alice"))
        await hub.agents.create(HUMAN, an_agent(id="bob"))
        yield hub
