"""Fixtures of the artifact service tests: a hub with agents alice and bob, the ordinary project
`web`, the confidential project `vault` that neither agent may see, and the projects `locked`
(password policy required) and `open` (policy off)."""

from __future__ import annotations

import pytest

from hubcore.caller import Caller
from hubcore.hub import Hub
from tests.harness import HubClient


@pytest.fixture
async def hub(client: HubClient) -> Hub:
    await client.make_agent("alice")
    await client.make_agent("bob")
    await client.make_project("web")
    await client.make_project("vault", confidential=True)
    await client.make_project("locked", artifact_password_policy="required")
    await client.make_project("open", artifact_password_policy="off")
    return client.app.hub


@pytest.fixture
def admin() -> Caller:
    return Caller.admin()


@pytest.fixture
def alice() -> Caller:
    return Caller.agent("alice")


@pytest.fixture
def bob() -> Caller:
    return Caller.agent("bob")
