"""What a device wants pushed: kinds, projects, a minimum priority, quiet hours, and how much of
the item rides in the (end-to-end encrypted) payload.

Priority: the spec has none, so an item's priority is its payload's `priority` when that is `low`,
`normal` or `high`, else by kind: questions, approvals and enrolment requests `high`, finished work
and ideas `normal` (docs/decisions.md). Quiet hours are local times in the device's own time zone;
a window may cross midnight; inside it nothing is pushed except a question or approval whose
deadline falls before the window ends (it would expire unseen). Time comes from the hub's clock.
"""

# No `from __future__ import annotations` in model modules: pydantic reads the annotations.

import re
from datetime import datetime, time, timedelta
from typing import Annotated, Any, Literal, get_args
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import AfterValidator, Field
from pydantic_core import PydanticCustomError

from hubcore.services.fields import ProjectId
from hubcore.services.requests import Request

PushKind = Literal["question", "approval", "enrol_request", "finished", "idea"]
PUSH_KINDS: tuple[PushKind, ...] = get_args(PushKind)
Priority = Literal["low", "normal", "high"]
PRIORITIES: tuple[str, ...] = get_args(Priority)
Content = Literal["full", "contentless"]
PROJECTS_MAX = 100
HHMM_RE = re.compile(r"^([01][0-9]|2[0-3]):[0-5][0-9]$")
ZONE_MAX = 64


def _zone(name: str) -> str:
    try:
        if len(name) > ZONE_MAX or name.startswith(("/", ".")) or ".." in name:
            raise ValueError(name)
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise PydanticCustomError("time_zone", "must be an IANA time zone such as Europe/Berlin") from None
    return name


def _unique(values: list[Any]) -> list[Any]:
    if len(set(values)) != len(values):
        raise PydanticCustomError("unique", "must not name a value twice")
    return values


Clock = Annotated[str, Field(pattern=HHMM_RE.pattern, description="local time HH:MM")]


class QuietHours(Request):
    """A daily window (local time; may cross midnight) when nothing but a question or approval
    about to expire is pushed. `start` equal to `end` is never quiet."""

    start: Clock
    end: Clock
    time_zone: Annotated[str, AfterValidator(_zone), Field(description="IANA time zone, e.g. Europe/Berlin")]


class Filters(Request):
    """A device's filters; a PATCH replaces them whole."""

    kinds: Annotated[
        list[PushKind],
        AfterValidator(_unique),
        Field(
            min_length=1,
            max_length=len(PUSH_KINDS),
            description="what to push",
            default_factory=lambda: list(PUSH_KINDS),
        ),
    ]
    projects: Annotated[
        Annotated[list[ProjectId], AfterValidator(_unique), Field(max_length=PROJECTS_MAX)] | None,
        Field(description="only these projects (null: every project)"),
    ] = None
    min_priority: Annotated[Priority, Field(description="items below it are not pushed")] = "low"
    quiet_hours: QuietHours | None = None
    content: Annotated[
        Content,
        Field(description="full: the item's text rides in the encrypted push; contentless: only that something waits"),
    ] = "full"


def priority_of(kind: str, payload: dict[str, Any]) -> str:
    given = payload.get("priority")
    if given in PRIORITIES:
        return str(given)
    return "high" if kind in ("question", "approval", "enrol_request") else "normal"


def _quiet_end(quiet: QuietHours, now: float) -> datetime | None:
    """When the quiet window `now` falls in ends (aware datetime), or None when not in one."""
    zone = ZoneInfo(quiet.time_zone)
    local = datetime.fromtimestamp(now, zone)
    start, end = (time.fromisoformat(quiet.start), time.fromisoformat(quiet.end))
    t = local.time().replace(second=0, microsecond=0)
    if start == end:
        return None
    inside = start <= t < end if start < end else (t >= start or t < end)
    if not inside:
        return None
    day = local.date() if t < end else local.date() + timedelta(days=1)
    return datetime.combine(day, end, zone)


def wants(
    filters: Filters, *, kind: str, project_id: str, payload: dict[str, Any], expires_at: float | None, now: float
) -> bool:
    """Whether a device with `filters` is pushed this item now."""
    if kind not in filters.kinds:
        return False
    if filters.projects is not None and project_id not in filters.projects:
        return False
    if PRIORITIES.index(priority_of(kind, payload)) < PRIORITIES.index(filters.min_priority):
        return False
    if filters.quiet_hours is None:
        return True
    quiet_end = _quiet_end(filters.quiet_hours, now)
    if quiet_end is None:
        return True
    # A deadline inside the quiet window: the item would expire unseen, so it still goes.
    return expires_at is not None and expires_at <= quiet_end.timestamp()
