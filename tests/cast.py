"""The cast the service tests of tests/artifacts and tests/kb share: agents alice and bob, the
ordinary project `web`, and the confidential project `vault` that neither agent may see. A conftest
imports the caller fixtures (naming them in its `__all__`) and builds its hub with `cast`."""

from __future__ import annotations

from typing import Any, Protocol

import pytest

from hubcore.caller import Caller
from hubcore.hub import Hub
from tests.harness import HubClient


class ProjectMaker(Protocol):
    """A test client that makes projects as the admin (`HubClient`, `tests.mcp.live.LiveHub`)."""

    async def make_project(self, project_id: str, **fields: Any) -> object: ...


async def web_and_vault(maker: ProjectMaker) -> None:
    await maker.make_project("web")
    await maker.make_project("vault", confidential=True)


async def cast(client: HubClient) -> Hub:
    """alice, bob, `web` and `vault` on the client's hub; the hub."""
    await client.make_agent("alice")
    await client.make_agent("bob")
    await web_and_vault(client)
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
