"""The sessions-and-brains part: sessions, their brain files, the storage report and pruning.

Sessions and brains are one part because each needs the other: a brain write asks the session row
whether it may land, and starting, ending or forking a session seals or copies its brain. The part
builds both and ties them here, in one place, so no other part reaches into either.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hubcore.parts.protocol import FileStore, Part, SearchBatch, SearchFamily, SearchScope, Task, Touched
from hubcore.services import brain_files, callstage
from hubcore.services import brain_search as search
from hubcore.services.brains import BrainsService
from hubcore.services.core import Core
from hubcore.services.sessions import SessionsService
from hubcore.services.sessions_schema import MIGRATIONS
from hubcore.services.storage import StorageService
from hubcore.store import brain
from hubcore.store.migrations import Migration
from hubcore.store.pool import ActorPool

if TYPE_CHECKING:
    from hubcore.ops.findings import Finding


class SessionsPart(Part):
    name = "sessions-and-brains"
    stats_members = ("sessions",)
    search_family_names = (search.FAMILY,)
    file_stores = (FileStore(brain_files.BRAINS, brain.SCHEMA_VERSION, "brain"),)
    restore_sweeps = "brain files"

    def __init__(self, core: Core, pool: ActorPool) -> None:
        self.core = core
        self.brains = BrainsService(core, pool, core.settings.data_path / "brains")
        self.sessions = SessionsService(
            core, self.brains.bytes_of, self.brains.copy, self.brains.seal, flush_calls=self.brains.calls.flush
        )
        self.brains.sessions = self.sessions  # the two halves of this one part (see the docstring)
        self.touched = self.brains.touched = Touched(core.nudge.note)
        self.storage = StorageService(
            core,
            brain_bytes=self.brains.bytes_of,
            remove_brain=self.brains.remove,
            writes=lambda: core.store.statistics().commands + self.brains.writes,
            changing=self.sessions.changing,
        )
        self._doomed: dict[str, list[str]] = {}

    @classmethod
    def migrations(cls) -> Sequence[Migration]:
        return MIGRATIONS

    def writes(self) -> int:
        return self.brains.writes

    @classmethod
    def check_references(cls, conn: sqlite3.Connection, data_dir: Path) -> Sequence[Finding]:
        return [*brain_files.missing_brain_files(conn, data_dir), *brain_files.orphan_staged_calls(conn)]

    @classmethod
    def doctor_references(cls, conn: sqlite3.Connection, data_dir: Path) -> Sequence[Finding]:
        return brain_files.staged_calls(conn)

    @classmethod
    def sweep_restored(cls, conn: sqlite3.Connection, data_dir: Path) -> int:
        return brain_files.sweep_restored(conn, data_dir)

    def purge_rows(self, conn: sqlite3.Connection, project_id: str) -> None:
        """The project's session rows go with the project; their brain files after the commit."""
        ids = [r[0] for r in conn.execute("SELECT id FROM sessions WHERE project_id = ?", (project_id,))]
        conn.execute("DELETE FROM sessions WHERE project_id = ?", (project_id,))
        callstage.drop(conn, ids)  # their replay rows staged on the way to the brains go too
        self._doomed[project_id] = ids

    async def after_delete(self, project_id: str) -> None:
        self.sessions.generation += 1  # its running sessions are gone: no memory of them holds
        for sid in self._doomed.pop(project_id, []):
            await self.brains.remove(sid)

    async def project_stats(self, project_id: str) -> Mapping[str, int | None]:
        return await self.storage.project_stats(project_id)

    async def home(self) -> Mapping[str, Any]:
        return {"prunable": await self.storage.prunable()}

    # The search index takes each session's brain as one source ("brain:<id>"), caught up from what
    # the brain's writes handed over (`brain_search.Pushes`) or else from the brain's change counter
    # (`brain_search.batch`).
    def search_touched(self) -> set[str]:
        return {search.source(sid) for sid in self.touched.take()}

    def search_pushed(self, marks: Mapping[str, str | None]) -> dict[str, SearchBatch]:
        found = {}
        for source, mark in marks.items():
            batch = self.brains.pushes.take(source.removeprefix(search.PREFIX), mark)
            if batch is not None:
                found[source] = batch
        return found

    async def search_sources(self) -> Mapping[str, str]:
        ids = await self.core.store.read(lambda conn: [r[0] for r in conn.execute("SELECT id FROM sessions")])
        marks = {}
        for sid in ids:
            mark = await self.brains.read_file(sid, search.mark)
            if mark is not None:
                marks[search.source(sid)] = mark
        return marks

    async def search_documents(self, source: str, mark: str | None) -> SearchBatch | None:
        sid = source.removeprefix(search.PREFIX)
        row = await self.core.store.read(
            lambda conn: conn.execute("SELECT project_id FROM sessions WHERE id = ?", (sid,)).fetchone()
        )
        if row is None:
            return None
        found: SearchBatch | None = await self.brains.read_file(sid, lambda conn: search.batch(conn, sid, row[0], mark))
        return found

    def search_families(self) -> Sequence[SearchFamily]:
        return (SearchFamily(search.FAMILY, search.hit),)

    def search_scope(self) -> SearchScope | None:
        return search.SCOPE

    def search_project_sources(self, project_id: str) -> Iterable[str]:
        return [search.source(sid) for sid in self._doomed.get(project_id, [])]

    def background(self) -> Sequence[Task]:
        return (self.storage.run_sweeper, self.brains.pool.run_sweeper, self.brains.run_background)
