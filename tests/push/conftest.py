"""Fixtures for the push tests: a loopback push service, a hub whose sender backs off instantly."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from hubcore.clock import FakeClock
from hubcore.config import HubSettings
from hubcore.hub import Hub
from tests.harness import ADMIN, HubClient, hub_client
from tests.push.receiver import Device, PushService, serving

pytestmark = pytest.mark.anyio


@pytest.fixture
def pushes() -> Iterator[PushService]:
    yield from serving()


@pytest.fixture
async def client(settings: HubSettings, clock: FakeClock) -> AsyncIterator[HubClient]:
    async with hub_client(settings, clock) as c:
        slept: list[float] = []

        async def no_wait(seconds: float) -> None:
            slept.append(seconds)  # the backoff, recorded instead of waited out

        c.app.hub.push.sender.sleep = no_wait
        c.slept = slept  # type: ignore[attr-defined]
        yield c


async def register(client: HubClient, device: Device, **extra: Any) -> dict[str, Any]:
    r = await client.post("/api/v1/push/devices", json=device.subscription(**extra), headers=ADMIN)
    assert r.status_code == 201, r.text
    return dict(r.json())


async def settled(client: HubClient) -> None:
    """Until the sender has nothing queued or running."""
    await client.app.hub.push.sender.idle.wait()


def sends(client: HubClient, result: str) -> float:
    value = client.app.hub.metrics.registry.get_sample_value("hub_push_sends_total", {"result": result})
    return float(value or 0)


@pytest.fixture
def hub(client: HubClient) -> Hub:
    return client.app.hub
