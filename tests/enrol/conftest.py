"""Enrolment tests: a real app lifespan, clients that come from chosen socket peers."""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import replace
from typing import Any

import httpx
import pytest

from hubcore.clock import FakeClock
from hubcore.config import HubSettings
from hubcore.hub import Hub
from hubhttp.openapi import document
from tests.harness import HubClient, hub_client, response_checker, settle_hook

ClientFactory = Callable[..., AbstractAsyncContextManager[HubClient]]


@pytest.fixture
def make_client(settings: HubSettings, clock: FakeClock) -> ClientFactory:
    @asynccontextmanager
    async def factory(**overrides: Any) -> AsyncIterator[HubClient]:
        async with hub_client(replace(settings, **overrides), clock) as client:
            yield client

    return factory


@pytest.fixture
def hub(client: HubClient) -> Hub:
    return client.app.hub


@asynccontextmanager
async def from_peer(client: HubClient, address: str) -> AsyncIterator[httpx.AsyncClient]:
    """A client on the same app whose requests arrive from socket peer `address`."""
    transport = httpx.ASGITransport(app=client.app, client=(address, 40000))  # type: ignore[arg-type]
    checker = response_checker(document(client.app.quart))
    settled = settle_hook(client.app)
    hooks = {"request": [settled], "response": [checker.hook, settled]}
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8080", event_hooks=hooks) as http:
        yield http


def fingerprint(client: HubClient) -> str:
    """Every row of hub.db: a refusal must leave it as it was."""
    with client.db() as conn:
        return hashlib.sha256("\n".join(conn.iterdump()).encode()).hexdigest()


def ask(display_name: str = "Scout", why: str = "I index the build logs for the team", **more: Any) -> dict[str, Any]:
    return {"display_name": display_name, "why": why, **more}
