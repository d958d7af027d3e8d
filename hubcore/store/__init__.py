"""Stores: SQLite files, each written by exactly one actor."""

from hubcore.store.actor import ActorStats, StoreActor
from hubcore.store.connection import connect
from hubcore.store.pool import ActorPool

__all__ = ["ActorPool", "ActorStats", "StoreActor", "connect"]
