from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from hubcore.config import HubSettings
from hubcore.hub import Hub
from tests.harness import HubClient
from tests.mcp.live import LiveHub, live_hub


@pytest.fixture
async def hub(client: HubClient) -> Hub:
    """A hub with agents alice and bob and the ordinary project `web`."""
    await client.make_agent("alice")
    await client.make_agent("bob")
    await client.make_project("web")
    return client.app.hub


@pytest.fixture
async def live(settings: HubSettings) -> AsyncIterator[LiveHub]:
    async with live_hub(settings) as hub:
        yield hub
