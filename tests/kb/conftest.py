"""Fixtures of the knowledge base's service tests: a hub with agents alice and bob, the ordinary
project `web`, and the confidential project `vault` that neither agent may see."""

from __future__ import annotations

import pytest

from hubcore.caller import Caller
from hubcore.hub import Hub
from tests.harness import HubClient

pytestmark = pytest.mark.anyio


@pytest.fixture
async def hub(client: HubClient) -> Hub:
    await client.make_agent("alice")
    await client.make_agent("bob")
    await client.make_project("web")
    await client.make_project("vault", confidential=True)
    return client.app.hub


@pytest.fixture
def admin() -> Caller:
    return Caller.admin()


@pytest.fixture
def alice() -> Caller:
    return Caller.agent("alice")
