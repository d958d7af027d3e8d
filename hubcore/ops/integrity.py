"""SQLite integrity checks: one file at a time, for `check` (offline, the full check) and for the
hub's background sampling (`integrity_sample_secs`, a `quick_check` of one store per interval).

The sampler never runs on a request's path: it is a background task of the integrity part, reads
through a read-only connection of its own on a worker thread (one at a time), and goes round the
store files in name order, so every file is sampled once in as many intervals as there are files,
whatever files come and go meanwhile. `hub_integrity_ok` reads 1 while every file's latest sample
passed and 0 while any failed (absent until the first sample); `hub_integrity_failures_total`
counts failed samples.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Awaitable, Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import anyio
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from hubcore.clock import Clock
from hubcore.ops.stores import quiet_connection
from hubcore.store.connection import connect

log = logging.getLogger("hubcore.integrity")

MAX_LINES = 20  # the check's own cap on the lines it reports for one file
Opener = Callable[[Path], AbstractContextManager[sqlite3.Connection]]


def integrity_problems(conn: sqlite3.Connection, *, quick: bool = False) -> list[str]:
    """What SQLite's integrity check finds wrong in the open file (empty: nothing)."""
    pragma = "quick_check" if quick else "integrity_check"
    lines = [str(row[0]) for row in conn.execute(f"PRAGMA {pragma}({MAX_LINES})").fetchall()]
    return [] if lines == ["ok"] else lines


def check_file(path: Path, *, quick: bool = False, opener: Opener = quiet_connection) -> list[str]:
    """What is wrong with the SQLite file at `path` (empty: it passed). A file SQLite cannot read
    at all (not a database, truncated past its header) is one line saying so."""
    try:
        with opener(path) as conn:
            return integrity_problems(conn, quick=quick)
    except sqlite3.DatabaseError as exc:
        return [f"SQLite cannot read it ({exc})"]
    except OSError as exc:
        return [f"cannot be read ({exc.strerror or exc})"]


@contextmanager
def live_connection(path: Path) -> Iterator[sqlite3.Connection]:
    """A read-only connection beside a running hub's writers (the hub's own read mode)."""
    conn = connect(path, readonly=True)
    try:
        yield conn
    finally:
        conn.close()


class IntegritySampler:
    """Quick-checks one store file per `interval` seconds, round robin (see the module docstring)."""

    def __init__(
        self,
        files: Callable[[], list[Path]],
        interval: float,
        *,
        clock: Clock,
        sleep: Callable[[float], Awaitable[None]] = anyio.sleep,
        opener: Opener = live_connection,
    ) -> None:
        self._files = files
        self.interval = interval
        self._clock = clock
        self._sleep = sleep
        self._opener = opener
        self._limiter = anyio.CapacityLimiter(1)
        self._last: str | None = None
        self.latest: dict[str, bool] = {}  # file -> whether its latest sample passed
        self.failures = 0
        self.samples = 0
        self.last_at: float | None = None

    @property
    def ok(self) -> bool | None:
        """Whether every file's latest sample passed; None before the first sample."""
        return None if not self.samples else all(self.latest.values())

    def _pick(self) -> Path | None:
        """The file after the last one sampled, in name order, wrapping around."""
        files = sorted(self._files(), key=str)
        if not files:
            return None
        names = {str(p) for p in files}
        for gone in set(self.latest) - names:
            del self.latest[gone]
        later = [p for p in files if self._last is None or str(p) > self._last]
        return later[0] if later else files[0]

    async def sample(self) -> Path | None:
        """Check the next file; returns it (None when there is none, or it vanished meanwhile)."""
        path = self._pick()
        if path is None:
            return None
        self._last = str(path)
        if not path.is_file():
            return None  # removed since it was listed (a pruned brain): nothing to sample
        problems = await anyio.to_thread.run_sync(
            lambda: check_file(path, quick=True, opener=self._opener), limiter=self._limiter
        )
        if not path.is_file():
            self.latest.pop(str(path), None)
            return None
        self.samples += 1
        self.last_at = self._clock.now()
        self.latest[str(path)] = not problems
        if problems:
            self.failures += 1
            log.warning("integrity sample of %s failed: %s", path, "; ".join(problems[:3]))
        return path

    async def run(self) -> None:
        """Background task: one sample every `interval` seconds until cancelled."""
        while True:
            await self._sleep(self.interval)
            try:
                await self.sample()
            except anyio.get_cancelled_exc_class():
                raise
            except Exception:
                log.exception("integrity sample failed to run; next in %.0f s", self.interval)


class IntegrityCollector(Collector):
    """`hub_integrity_ok` (absent until the first sample) and `hub_integrity_failures_total`."""

    def __init__(self, sampler: IntegritySampler) -> None:
        self._sampler = sampler

    def collect(self) -> Iterator[Metric]:
        ok = self._sampler.ok
        if ok is not None:
            yield GaugeMetricFamily(
                "hub_integrity_ok",
                "1 while every store's latest integrity sample passed, 0 while any failed",
                value=1 if ok else 0,
            )
        yield CounterMetricFamily(
            "hub_integrity_failures", "Integrity samples that found a damaged store", value=self._sampler.failures
        )
