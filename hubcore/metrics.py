"""The hub's Prometheus metrics, one registry per hub (no process-global state)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Iterator
from pathlib import Path

from prometheus_client import CollectorRegistry, Counter, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from hubcore.errors import STATUS_BY_CODE

UNKNOWN_TOOL = "<unknown>"  # the tool label of a call naming no tool (never the name sent: unbounded labels)


def file_size(path: Path) -> int | None:
    try:
        return os.stat(path).st_size
    except FileNotFoundError:
        return 0
    except OSError:
        return None


def store_bytes(path: Path) -> int | None:
    """A SQLite file's bytes on disk with its write-ahead log: 0 when neither exists, None when
    either cannot be measured."""
    total = 0
    for name in (path, Path(f"{path}-wal")):
        size = file_size(name)
        if size is None:
            return None
        total += size
    return total


def free_bytes(path: Path) -> int | None:
    try:
        return shutil.disk_usage(path).free
    except OSError:
        return None


class StorageCollector(Collector):
    """Storage gauges measured at scrape time: free space, hub.db and its write-ahead log."""

    def __init__(self, data_dir: Path) -> None:
        self._data_dir = data_dir

    def collect(self) -> Iterator[Metric]:
        db = self._data_dir / "hub.db"
        readings = {
            "hub_data_free_bytes": ("Free bytes on the data directory's volume", free_bytes(self._data_dir)),
            "hub_db_size_bytes": ("Size of hub.db", file_size(db)),
            "hub_db_wal_bytes": ("Size of hub.db's write-ahead log", file_size(db.with_name("hub.db-wal"))),
        }
        for name, (doc, value) in readings.items():
            if value is not None:  # unmeasurable is absent, never a made-up zero
                yield GaugeMetricFamily(name, doc, value=value)


class HubMetrics:
    """The spec's metrics. Counters whose labels are known in advance (every event kind, every hub
    error code) are rendered at 0 from the start, so a scrape tells "none yet" from "not counted"."""

    def __init__(self, data_dir: Path, *, event_kinds: Iterable[str] = ()) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.http_requests = Counter(
            "hub_http_requests",
            "HTTP requests by method and status class",
            ["method", "status_class"],
            registry=self.registry,
        )
        self.failed_responses = Counter(
            "hub_failed_responses", "Failed responses by hub error code", ["code"], registry=self.registry
        )
        self.events_appended = Counter(
            "hub_events_appended", "Feed events appended, by kind", ["kind"], registry=self.registry
        )
        self.notify_sends = Counter(
            "hub_notify_sends",
            "Notify target sends, by result (delivered or failed)",
            ["result"],
            registry=self.registry,
        )
        self.tool_calls = Counter(
            "hub_mcp_tool_calls",
            "Agent tool calls by tool and outcome (ok, error)",
            ["tool", "outcome"],
            registry=self.registry,
        )
        for kind in event_kinds:
            self.events_appended.labels(kind=kind)
        for code in STATUS_BY_CODE:
            self.failed_responses.labels(code=code)
        self.registry.register(StorageCollector(data_dir))

    def render(self) -> bytes:
        return generate_latest(self.registry)
