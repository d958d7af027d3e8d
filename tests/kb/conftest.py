"""Fixtures of the knowledge base's service tests: the cast of `tests.cast` (agents alice and bob,
the ordinary project `web`, and the confidential project `vault` that neither agent may see)."""

from __future__ import annotations

import pytest

from hubcore.hub import Hub
from tests.cast import admin, alice, bob, cast
from tests.harness import HubClient

__all__ = ["admin", "alice", "bob"]

pytestmark = pytest.mark.anyio


@pytest.fixture
async def hub(client: HubClient) -> Hub:
    return await cast(client)
