"""Device filters decide who is pushed what: kinds, projects, minimum priority, and quiet hours (on
the hub's injectable clock, in the device's own time zone)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from hubcore.clock import FakeClock
from hubcore.services.push.filters import Filters, wants
from hubcore.services.requests import parse
from tests.harness import HubClient
from tests.push.conftest import register, settled
from tests.push.receiver import PushService
from tests.push.test_send import ask, post, setup

pytestmark = pytest.mark.anyio


def at(hour: int, minute: int = 0) -> float:
    return datetime(2027, 1, 15, hour, minute, tzinfo=UTC).timestamp()


def quiet(**extra: Any) -> Filters:
    return parse(Filters, {"quiet_hours": {"start": "22:00", "end": "07:00", "time_zone": "Europe/Berlin"}, **extra})


def question(now: float, expires_at: float | None = None, **payload: Any) -> bool:
    return wants(quiet(), kind="question", project_id="p", payload=payload, expires_at=expires_at, now=now)


def test_quiet_hours_cross_midnight_in_the_devices_time_zone() -> None:
    # Berlin is UTC+1 in January: 22:00 to 07:00 local is 21:00 to 06:00 UTC.
    assert question(at(20, 59))
    assert not question(at(21, 0))
    assert not question(at(3, 0))
    assert not question(at(5, 59))
    assert question(at(6, 0))


def test_a_deadline_inside_quiet_hours_still_goes() -> None:
    night = at(23, 0)  # 00:00 in Berlin; the quiet window ends at 06:00 UTC
    assert question(night, expires_at=at(23, 30) + 6 * 3600)  # 05:30 UTC: before the window ends
    assert not question(night, expires_at=at(23, 0) + 8 * 3600)  # 07:00 UTC: it can wait for morning
    assert not question(night)


def test_equal_start_and_end_is_never_quiet() -> None:
    same = parse(Filters, {"quiet_hours": {"start": "07:00", "end": "07:00", "time_zone": "UTC"}})
    assert wants(same, kind="idea", project_id="p", payload={}, expires_at=None, now=at(7, 0))


def test_kinds_projects_and_priority() -> None:
    f = parse(Filters, {"kinds": ["question", "finished"], "projects": ["a"], "min_priority": "normal"})
    assert wants(f, kind="question", project_id="a", payload={}, expires_at=None, now=0)
    assert not wants(f, kind="approval", project_id="a", payload={}, expires_at=None, now=0)
    assert not wants(f, kind="question", project_id="b", payload={}, expires_at=None, now=0)
    assert wants(f, kind="finished", project_id="a", payload={}, expires_at=None, now=0)  # normal by kind
    assert not wants(f, kind="finished", project_id="a", payload={"priority": "low"}, expires_at=None, now=0)
    high = parse(Filters, {"min_priority": "high"})
    assert not wants(high, kind="idea", project_id="a", payload={}, expires_at=None, now=0)
    assert wants(high, kind="idea", project_id="a", payload={"priority": "high"}, expires_at=None, now=0)
    assert not wants(high, kind="question", project_id="a", payload={"priority": "low"}, expires_at=None, now=0)


async def test_a_hub_pushes_each_device_what_its_filters_want(
    client: HubClient, pushes: PushService, clock: FakeClock
) -> None:
    await setup(client)
    await client.make_project("other")
    await register(client, pushes.device(), name="all")
    await register(
        client, pushes.device(), name="questions-in-proj", filters={"kinds": ["question"], "projects": ["proj"]}
    )
    await register(
        client,
        pushes.device(),
        name="asleep",
        filters={"quiet_hours": {"start": "22:00", "end": "07:00", "time_zone": "Europe/Berlin"}},
    )
    clock.set(at(23, 0))  # quiet in Berlin
    await post(client, "finished", "Built")
    await settled(client)
    assert sorted(r["path"] for r in pushes.received) == ["/push/0"]
    await ask(client, "Urgent?", expires_in_seconds=3600)  # due inside the quiet window: everyone
    await settled(client)
    assert sorted(r["path"] for r in pushes.received[1:]) == ["/push/0", "/push/1", "/push/2"]
    clock.set(at(12, 0))
    await post(client, "idea", "An idea")
    await settled(client)
    assert sorted(r["path"] for r in pushes.received[4:]) == ["/push/0", "/push/2"]
    assert pushes.received[4]["headers"]["urgency"] == "normal"
