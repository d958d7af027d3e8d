from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from hubcore.config import HubSettings
from tests.mcp.live import LiveHub, live_hub


@pytest.fixture
async def live(settings: HubSettings) -> AsyncIterator[LiveHub]:
    async with live_hub(settings) as hub:
        yield hub
