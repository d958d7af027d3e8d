"""The local data directory, for commands run with no `HUB_URL` (`mcp` standalone, `project`, `kb`).

They act as the human admin on the directory the settings name (actor label from `HUB_AGENT_ID`)
and refuse while a running hub holds it: two writers on one store would break the one-writer rule.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio

from hubcli import exits
from hubcli.client import CliFailure
from hubcore.caller import Caller
from hubcore.config import HubSettings, Settings
from hubcore.errors import HubError
from hubcore.hub import DataDirLocked, Hub, data_dir_in_use

T = TypeVar("T")


def local_caller(settings: Settings) -> Caller:
    """The human admin, labelled by `HUB_AGENT_ID` when set; `CliFailure` 78 for a bad label."""
    from hubcore.services.validate import AGENT_ID_RE

    label = settings.client.agent_id
    if label is not None and not AGENT_ID_RE.match(label):
        raise CliFailure(
            exits.NOT_CONFIGURED,
            f"HUB_AGENT_ID {label!r} is not a valid actor label (lowercase letters, digits, hyphens)",
        )
    return Caller.admin(label)


def held(hub: HubSettings) -> CliFailure:
    return CliFailure(
        exits.REFUSED, f"data directory {hub.data_path} is in use by a running hub; set HUB_URL to reach it instead"
    )


def run_local(hub: HubSettings, work: Callable[[], Awaitable[T]]) -> T:
    """Run `work` (which opens the hub itself) unless a running hub holds the directory.

    The check before is for a clear message before anything starts; the lock `Hub.open` takes is
    what actually keeps two writers apart, so losing the race still refuses.
    """
    if data_dir_in_use(hub.data_path):
        raise held(hub)
    try:
        return anyio.run(work)
    except DataDirLocked:
        raise held(hub) from None


def with_hub(settings: Settings, work: Callable[[Hub, Caller], Awaitable[T]]) -> T:
    """Open the local hub, run `work` on it as the local caller, close it. A `HubError` becomes
    `CliFailure` 1 naming the hub's code, as a refusal over REST would."""
    caller = local_caller(settings)

    async def opened() -> T:
        # A failure is carried out of the hub's task groups and raised once the hub has closed, so
        # it is not wrapped in an exception group on the way.
        failure: CliFailure
        async with Hub.open(settings.hub) as hub:
            try:
                return await work(hub, caller)
            except CliFailure as exc:
                failure = exc
            except HubError as exc:
                failure = CliFailure(exits.REFUSED, f"{exc.code}: {exc.message}", exc)
        raise failure

    return run_local(settings.hub, opened)
