"""The hub: one data directory, its stores, its services and its background work.

`Hub.open(settings)` is an async context manager. On entry it takes the data directory's lock (so
a second hub, or a standalone `hub-cli mcp`, cannot open the same directory), migrates `hub.db`
through the parts' steps (`hub_migrations`), starts the hub store's actor and the services. On
exit it stops background work and closes every actor, which checkpoints its file.
"""

from __future__ import annotations

import fcntl
import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import IO, Any

import anyio
from anyio.abc import TaskGroup

from hubcore.caller import Caller
from hubcore.clock import Clock, SystemClock
from hubcore.config import HubSettings
from hubcore.errors import HubError
from hubcore.metrics import HubMetrics
from hubcore.ops.backup import BackupService
from hubcore.ops.restore import tidy_restored
from hubcore.parts.artifacts import ArtifactsPart
from hubcore.parts.catalog import PART_TYPES
from hubcore.parts.enrolment import EnrolmentPart
from hubcore.parts.feeds import FeedsPart
from hubcore.parts.integrity import IntegrityPart
from hubcore.parts.kb import KbPart
from hubcore.parts.projects import ProjectsPart
from hubcore.parts.protocol import Part, overrides
from hubcore.parts.push import PushPart
from hubcore.parts.search import SearchPart
from hubcore.parts.sessions import SessionsPart
from hubcore.services.agents import revoke_reserved
from hubcore.services.brains import brain_factory
from hubcore.services.brief import BriefService
from hubcore.services.changes import Notifier, Publisher
from hubcore.services.core import Core
from hubcore.services.events import KINDS as EVENT_KINDS
from hubcore.services.home import HomeService
from hubcore.services.kb.files import kb_factory
from hubcore.services.sessions import SessionRef
from hubcore.store.actor import StoreActor
from hubcore.store.connection import allow_open_files
from hubcore.store.migrations import Migration, chain, migrate
from hubcore.store.migrations import supported_version as newest
from hubcore.store.pool import ActorPool

log = logging.getLogger("hubcore.hub")

LOCK_NAME = ".hub.lock"
# The brain files share one writer thread rather than one each: puts to different brains that
# arrive together share one hand-over and one wake-up of the event loop (docs/benchmarks.md,
# "Fifth session: the store actor's hand-over"). One, not two: under load a second thread halved
# the puts each wake-up carries and cost a put about 120 us of CPU more, while the longest brain
# command it would let other brains pass (a 4 MiB put) takes about 20 ms ("Seventh session").
BRAIN_WRITER_THREADS = 1


class DataDirLocked(HubError):
    """Another process (a serving hub or a standalone stdio server) holds the data directory."""

    def __init__(self, path: Path, holder: str) -> None:
        super().__init__(
            "unavailable",
            f"data directory {path} is in use by another hub process ({holder or 'pid unknown'})",
        )


def lock_data_dir(data_dir: Path) -> IO[str]:
    """Hold an exclusive lock on the data directory for as long as the returned file is open."""
    data_dir.mkdir(parents=True, exist_ok=True)
    handle = open(data_dir / LOCK_NAME, "a+", encoding="utf-8")  # noqa: SIM115 (held for the hub's life)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip()
        handle.close()
        raise DataDirLocked(data_dir, holder) from None
    handle.seek(0)
    handle.truncate()
    handle.write(f"pid {os.getpid()}\n")
    handle.flush()
    return handle


def data_dir_in_use(data_dir: Path) -> bool:
    """Whether a hub process holds `data_dir` right now (the check does not disturb it)."""
    try:
        lock_data_dir(data_dir).close()
    except DataDirLocked:
        return True
    return False


def hub_migrations(parts: tuple[type[Part], ...] = PART_TYPES) -> tuple[Migration, ...]:
    """hub.db's one chain: every part's steps (`Part.migrations`), in version order."""
    return chain(step for part in parts for step in part.migrations())


def supported_version() -> int:
    """The newest hub.db schema version this binary's parts make."""
    return newest(hub_migrations())


def build_parts(
    core: Core, *, opened_version: int, brain_pool: ActorPool, kb_pool: ActorPool
) -> tuple[
    ProjectsPart, FeedsPart, SessionsPart, KbPart, ArtifactsPart, SearchPart, EnrolmentPart, IntegrityPart, PushPart
]:
    """The hub's parts: the one list. A new feature is one more entry here and in `PART_TYPES` (and
    in `Hub`'s view of the services it exposes to the adapters); no other part's module changes."""
    projects = ProjectsPart(core, opened_version=opened_version, supported_version=supported_version())
    feeds = FeedsPart(core)
    sessions = SessionsPart(core, brain_pool)

    async def brain_entry(caller: Caller, session_id: str, path: str) -> dict[str, Any]:
        """A session brain entry with its session's name: what a knowledge base promote copies."""
        entry = await sessions.brains.get(caller, SessionRef(session_id=session_id), path)
        session = await sessions.sessions.get(caller, session_id)
        return {**entry, "name": session["name"]}

    return (
        projects,
        feeds,
        sessions,
        KbPart(core, kb_pool, brain_entry),
        ArtifactsPart(core),
        SearchPart(core),
        # Enrolment decides through the decision route's own service (its hook runs in that command).
        EnrolmentPart(core, decide=feeds.resolutions.decide, credentials_changed=projects.auth.forget_tokens),
        IntegrityPart(core),
        # Push acts through the same answer and decision service the app uses.
        PushPart(core, feeds.resolutions, feeds.webhook.state),
    )


class Hub:
    def __init__(
        self, core: Core, task_group: TaskGroup, *, opened_version: int, brain_pool: ActorPool, kb_pool: ActorPool
    ) -> None:
        self.core = core
        self.settings = core.settings
        self.task_group = task_group
        self.schema_version = opened_version
        self.metrics = core.metrics
        self.publisher = core.publisher
        self.changes = core.publisher.changes
        projects, feeds, sessions, kb, artifacts, search, enrolment, integrity, push = build_parts(
            core, opened_version=opened_version, brain_pool=brain_pool, kb_pool=kb_pool
        )
        self.parts: tuple[Part, ...] = (projects, feeds, sessions, kb, artifacts, search, enrolment, integrity, push)
        self._assemble(self.parts)
        # What the adapters call, by part.
        self.auth, self.projects, self.agents = projects.auth, projects.projects, projects.agents
        self.health, self.identity = projects.health, projects.identity
        self.resolutions, self.posts, self.inbox, self.feed = feeds.resolutions, feeds.posts, feeds.inbox, feeds.feed
        self.attention, self.webhook = feeds.attention, feeds.webhook
        self.brains, self.sessions, self.storage = sessions.brains, sessions.sessions, sessions.storage
        self.kb = kb.kb
        self.artifacts, self.blobs = artifacts.artifacts, artifacts.blobs
        self.comments, self.shares, self.scripts = artifacts.comments, artifacts.shares, artifacts.scripts
        self.search, self.search_index = search.search, search.index
        self.backups = BackupService(
            data_dir=self.settings.data_path,
            backup_dir=self.settings.backup_dir,
            clock=core.clock,
            hold=artifacts.blobs.gate.held,  # no blob deleted or overwritten while a backup copies
            schema_version=opened_version,
            engine_files=self.engine_files,
        )
        self.enrolment = enrolment.enrolment
        self.integrity = integrity.sampler  # None unless integrity_sample_secs is set
        self.push = push.push
        # Views that span every part (they loop over `core.parts`).
        self.home = HomeService(core, settle=feeds.resolutions.settle)
        self.brief = BriefService(core)

    def _assemble(self, parts: tuple[Part, ...]) -> None:
        """Hand the parts to the loops that span them, once: the services' loops (`core.parts`),
        the commit observers and the metrics collectors."""
        self.core.parts = parts
        self.core.part_types = PART_TYPES
        self.publisher.observers = [part.on_commit for part in parts if overrides(part, "on_commit")]
        for part in parts:
            for collector in part.collectors():
                self.metrics.registry.register(collector)

    def engine_files(self) -> list[Path]:
        """Every SQLite file the hub keeps: hub.db, then each part's store files (backups, checks)."""
        data = self.settings.data_path
        return [data / "hub.db", *(path for part in self.parts for path in part.files(data))]

    def mark_serving(self) -> None:
        """The hub answers requests now: background work held back for the start may begin."""
        self.core.serving.set()

    def begin_shutdown(self) -> None:
        """The server stopped accepting: let long-lived requests (streams, waits) finish now."""
        self.changes.close()

    async def start_background(self) -> None:
        """Start the hub's background work (sweepers, senders) in `self.task_group`.

        Every part's tasks (`Part.background`); they are cancelled before the stores close.
        """
        for part in self.parts:
            for task in part.background():
                self.task_group.start_soon(task)

    @property
    def data_dir(self) -> Path:
        return self.settings.data_path

    @classmethod
    @asynccontextmanager
    async def open(
        cls, settings: HubSettings, *, clock: Clock | None = None, serving_later: bool = False
    ) -> AsyncIterator[Hub]:
        """The hub over `settings`' data directory, open until the block ends. It counts as serving
        (`mark_serving`) from the start, unless `serving_later`: a server marks it once ready."""
        clock = clock or SystemClock()
        data_dir = settings.data_path
        lock = lock_data_dir(data_dir)
        # Two per-file writer pools (brains, knowledge bases) and the brain readers, all at their caps.
        allow_open_files(2 * settings.open_stores_max + settings.open_readers_max)
        try:
            db = data_dir / "hub.db"
            version = await anyio.to_thread.run_sync(
                lambda: migrate(db, now=clock.now(), migrations=hub_migrations(), synchronous=settings.synchronous)
            )
            # A restored directory's first start: the parts drop the files hub.db does not name.
            await anyio.to_thread.run_sync(tidy_restored, data_dir, PART_TYPES)
            metrics = HubMetrics(data_dir, event_kinds=EVENT_KINDS)
            # The hub store's actor publishes each command's effects after its batch commits.
            publisher = Publisher(Notifier(), metrics)
            store = StoreActor(db, synchronous=settings.synchronous, name="hub.db", publish=publisher.publish)
            core = Core(settings=settings, clock=clock, store=store, metrics=metrics, publisher=publisher)
            async with anyio.create_task_group() as stores:
                await stores.start(store.run)
                try:
                    revoked = await store.execute(revoke_reserved)
                    if revoked:
                        log.warning("revoked the token of the reserved agent id 'hub'")
                    # Background work (sweepers, notify sends) lives in its own group so that it
                    # stops before the stores close under it.
                    brain_pool = ActorPool(
                        stores,
                        brain_factory(data_dir / "brains", settings.synchronous),
                        max_open=settings.open_stores_max,
                        idle_secs=settings.store_idle_secs,
                        writer_threads=BRAIN_WRITER_THREADS,
                        name="brain files",
                    )
                    kb_pool = ActorPool(
                        stores,
                        kb_factory(data_dir / "kb", settings.synchronous),
                        max_open=settings.open_stores_max,
                        idle_secs=settings.store_idle_secs,
                    )
                    async with anyio.create_task_group() as background:
                        hub = cls(core, background, opened_version=version, brain_pool=brain_pool, kb_pool=kb_pool)
                        await hub.start_background()
                        if not serving_later:
                            hub.mark_serving()
                        try:
                            yield hub
                        finally:
                            background.cancel_scope.cancel()
                finally:
                    with anyio.CancelScope(shield=True):
                        await brain_pool.aclose()
                        await kb_pool.aclose()
                        await store.aclose()
        finally:
            lock.close()
