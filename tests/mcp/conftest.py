from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from hubcore.clock import FakeClock
from hubcore.config import HubSettings
from tests.mcp.live import LiveHub, live_hub


@pytest.fixture
async def live(settings: HubSettings) -> AsyncIterator[LiveHub]:
    async with live_hub(settings) as hub:
        yield hub


@pytest.fixture
async def live_fake_clock(settings: HubSettings, clock: FakeClock) -> AsyncIterator[LiveHub]:
    async with live_hub(settings, clock) as hub:
        yield hub
