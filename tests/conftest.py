from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from hubcore.clock import FakeClock
from hubcore.config import HubSettings
from tests.harness import HubClient, hub_client, test_settings
from tests.suite import pytest_addoption, pytest_collection_modifyitems, pytest_configure

# How the suite runs fast (tests/suite.py): its hooks, registered with this conftest.
__all__ = ["pytest_addoption", "pytest_collection_modifyitems", "pytest_configure"]
# Each worker's Chromium, the `browser` fixture of every browser test, and `full_browser` (tests/chromium.py).
pytest_plugins = ("tests.chromium",)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def settings(tmp_path: Path) -> HubSettings:
    return test_settings(tmp_path / "data")


@pytest.fixture
async def client(settings: HubSettings, clock: FakeClock) -> AsyncIterator[HubClient]:
    async with hub_client(settings, clock) as c:
        yield c
