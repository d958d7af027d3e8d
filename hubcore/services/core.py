"""What every service needs: settings, the clock, the hub store's actor, the metrics, and the
publisher the actor hands committed effects to (services never call it themselves)."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from typing import Protocol

from hubcore.clock import Clock
from hubcore.config import HubSettings
from hubcore.metrics import HubMetrics
from hubcore.services.changes import Publisher
from hubcore.store.actor import StoreActor


class ProjectPart(Protocol):
    """Something a project owns. Project deletion asks every part to remove its share.

    `purge_rows` runs inside the delete command (same transaction as the project row);
    `after_delete` runs after the commit, for files outside hub.db.
    """

    def purge_rows(self, conn: sqlite3.Connection, project_id: str) -> None: ...

    async def after_delete(self, project_id: str) -> None: ...


@dataclass
class Core:
    settings: HubSettings
    clock: Clock
    store: StoreActor
    metrics: HubMetrics
    publisher: Publisher
    project_parts: list[ProjectPart] = field(default_factory=list)

    def now(self) -> float:
        return self.clock.now()
