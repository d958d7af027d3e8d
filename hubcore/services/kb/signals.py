"""The feed events the knowledge base appends to hub.db (spec "Events"; DESIGN section 7).

A knowledge base operation commits in the project's own file first, then its event is appended
by a command of the hub store's actor, which publishes it after that commit (`execute_effects`).
- The write signal (`kb_written`) is best effort: past the event ceiling it is dropped, never
  refusing the write, which has already happened.
- `kb_deleted`, `kb_reviewed`, `kb_reverted`, `kb_promoted`: the operation is refused naming the
  cap when the feed is already full (`require_room`, before anything is written); the event that
  follows a committed operation is then appended whatever the ceiling, since the operation happened.
- History forget: a `system` event by the human (`kb_history_forgotten`, with the counts) before
  anything is removed, and `kb_history_forget_rolled_back` when the removal fails.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from typing import Any

from hubcore.caller import Caller
from hubcore.errors import HubError
from hubcore.services.access import readable_project
from hubcore.services.changes import Effects
from hubcore.services.core import Core
from hubcore.services.events import NewEvent, check_ceiling, insert_event

VERBS = {
    "kb_written": "wrote",
    "kb_deleted": "deleted",
    "kb_reviewed": "reviewed",
    "kb_reverted": "reverted",
    "kb_promoted": "promoted",
}


def check_project(conn: sqlite3.Connection, caller: Caller, project_id: str, *, room: bool, cap: int) -> None:
    """The caller may reach the project (missing and denied alike); with `room`, its feed is not
    at the event ceiling (an operation whose signal is not best effort is refused naming the cap)."""
    readable_project(conn, caller, project_id)
    if room:
        check_ceiling(conn, project_id, cap)


async def require_project(core: Core, caller: Caller, project_id: str, *, room: bool = False) -> None:
    cap = core.settings.events_per_project
    await core.store.read(lambda conn: check_project(conn, caller, project_id, room=room, cap=cap))


async def signal(
    core: Core, caller: Caller, project_id: str, action: str, path: str, extra: Mapping[str, Any] | None = None
) -> None:
    """Append the operation's signal (`kb_written` best effort, the others past the ceiling)."""
    best_effort = action == "kb_written"
    event = NewEvent(
        project_id=project_id,
        kind="signal",
        actor=caller.actor,
        summary=f"{VERBS[action]} {path}",
        payload={"action": action, "path": path, **(extra or {})},
        exempt=not best_effort,
    )
    now, cap = core.now(), core.settings.events_per_project

    def write(conn: sqlite3.Connection) -> tuple[bool, Effects]:
        effects = Effects()
        try:
            insert_event(conn, event, now=now, cap=cap, effects=effects)
        except HubError as exc:
            if not best_effort or exc.code != "conflict":
                raise
            return False, Effects()  # the feed is full: the write signal is dropped
        return True, effects

    await core.store.execute_effects(write)


async def system(
    core: Core, caller: Caller, project_id: str, action: str, summary: str, payload: Mapping[str, Any]
) -> None:
    """Append an audit record (`system`, exempt from the ceiling) by the caller."""
    event = NewEvent(
        project_id=project_id,
        kind="system",
        actor=caller.actor,
        summary=summary,
        payload={"action": action, **payload},
        exempt=True,
    )
    now, cap = core.now(), core.settings.events_per_project

    def write(conn: sqlite3.Connection) -> tuple[None, Effects]:
        effects = Effects()
        insert_event(conn, event, now=now, cap=cap, effects=effects)
        return None, effects

    await core.store.execute_effects(write)
