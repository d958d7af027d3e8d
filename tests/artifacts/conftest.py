"""Fixtures of the artifact service tests: the cast of `tests.cast` (agents alice and bob, the
ordinary project `web`, the confidential project `vault` that neither agent may see) and the
projects `locked` (password policy required) and `open` (policy off)."""

from __future__ import annotations

import pytest

from hubcore.hub import Hub
from tests.cast import admin, alice, bob, cast
from tests.harness import HubClient

__all__ = ["admin", "alice", "bob"]


@pytest.fixture
async def hub(client: HubClient) -> Hub:
    found = await cast(client)
    await client.make_project("locked", artifact_password_policy="required")
    await client.make_project("open", artifact_password_policy="off")
    return found
