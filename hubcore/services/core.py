"""What every service needs: settings, the clock, the hub store's actor, the metrics, the
publisher the actor hands committed effects to (services never call it themselves), and the hub's
parts for the loops that span them (project deletion, stats, Home, the brief, storage rows)."""

from __future__ import annotations

from dataclasses import dataclass

from hubcore.clock import Clock
from hubcore.config import HubSettings
from hubcore.metrics import HubMetrics
from hubcore.parts import Part
from hubcore.services.changes import Publisher
from hubcore.store.actor import StoreActor


@dataclass
class Core:
    settings: HubSettings
    clock: Clock
    store: StoreActor
    metrics: HubMetrics
    publisher: Publisher
    parts: tuple[Part, ...] = ()  # set once by `Hub` from its one list; read only by the loops

    def now(self) -> float:
        return self.clock.now()
