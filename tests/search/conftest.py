"""Fixtures of the search tests: a hub with agents alice and bob, the ordinary project `web`, and
the confidential project `vault` only bob holds a grant on."""

from __future__ import annotations

from typing import Any

import pytest

from hubcore.caller import Caller
from hubcore.hub import Hub
from hubcore.services.requests import parse
from hubcore.services.search.models import SearchRequest
from tests.harness import ADMIN, HubClient
from tests.mcp.conftest import live  # noqa: F401  (the MCP tool's tests run against a live hub)

pytestmark = pytest.mark.anyio

ALICE, BOB, ADMIN_CALLER = Caller.agent("alice"), Caller.agent("bob"), Caller.admin()


@pytest.fixture
async def hub(client: HubClient) -> Hub:
    await client.make_agent("alice")
    await client.make_agent("bob")
    await client.make_project("web", display_name="The web")
    await client.make_project("vault", confidential=True)
    r = await client.post("/api/v1/agents/bob/grants", json={"project_id": "vault"}, headers=ADMIN)
    assert r.status_code == 201
    return client.app.hub


async def search(hub: Hub, who: Caller, q: str, **fields: Any) -> dict[str, Any]:
    return await hub.search.search(who, parse(SearchRequest, {"q": q, **fields}))


def hits(result: dict[str, Any]) -> list[dict[str, Any]]:
    return [hit for group in result["groups"] for hit in group["hits"]]
