"""The knowledge base part: each project's markdown pages in its own file (`kb/<project_id>.db`),
with their history, trust, review, revert and promote (`hubcore.services.kb`).

What it brings to the hub: the files (backup and check, the write count), its share of a project's
deletion (the file goes after the commit), `kb_pages` and its bytes in project stats, `kb_bytes`
in the storage report, the brief's `stale_pages`, its pages as MCP resources (`hub://kb/...`), and
the pool's idle sweeper and the files' background checkpointer.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from hubcore.caller import Caller
from hubcore.clock import iso
from hubcore.parts.protocol import FileStore, Part, Resource, ResourceTemplate, SearchBatch, SearchFamily, Task, Touched
from hubcore.services.brief import STALE_MAX, section
from hubcore.services.core import Core
from hubcore.services.kb import file_checks, resources
from hubcore.services.kb import search as search
from hubcore.services.kb.derive import decoded
from hubcore.services.kb.files import KbFiles
from hubcore.services.kb.pages import BrainEntry
from hubcore.services.kb.service import KbService
from hubcore.store import kb
from hubcore.store.connection import connect
from hubcore.store.pool import ActorPool

if TYPE_CHECKING:
    from hubcore.ops.findings import Finding

log = logging.getLogger("hubcore.kb")


class KbPart(Part):
    name = "knowledge-base"
    stats_members = ("kb_pages",)
    storage_kinds: ClassVar[Mapping[str, str]] = {"knowledge": "kb_bytes"}
    search_family_names = (search.FAMILY,)
    file_stores = (FileStore(file_checks.KB_DIR, kb.SCHEMA_VERSION, "knowledge base"),)

    def __init__(self, core: Core, pool: ActorPool, brain_entry: BrainEntry | None = None) -> None:
        self.core = core
        self.store = KbFiles(pool, core.settings.data_path / "kb")
        self.touched = self.store.touched = Touched(core.nudge.note)
        self.kb = KbService(core, self.store, brain_entry)
        self.pages = resources.KbResources(core, self.store, self.kb)

    def writes(self) -> int:
        return self.store.writes

    @classmethod
    def check_references(cls, conn: sqlite3.Connection, data_dir: Path) -> Sequence[Finding]:
        return file_checks.missing_kb_files(conn, data_dir)

    async def after_delete(self, project_id: str) -> None:
        await self.store.remove(project_id)

    async def project_stats(self, project_id: str) -> Mapping[str, int | None]:
        pages = await self.store.read(project_id, kb.page_count, 0)
        return {"kb_pages": pages, "disk_bytes": self.store.bytes_of(project_id)}

    async def project_bytes(self) -> Mapping[str, Mapping[str, int | None]]:
        return {"knowledge": {path.stem: self.store.bytes_of(path.stem) for path in self.store.files()}}

    def brief(
        self, conn: sqlite3.Connection, caller: Caller, project_id: str, since: Mapping[str, Any]
    ) -> Mapping[str, Any]:
        """`stale_pages`: at most 10 pages past their `stale_after` date, longest overdue first.
        Read here, in the brief's read on hub.db, through a read-only connection of the project's
        file (none: nothing is stale)."""
        now = self.core.now()
        today = iso(now)[:10]
        path = self.store.path_of(project_id)
        if not path.exists():
            return {"stale_pages": section([], 0, 0)}
        try:
            reader = connect(path, readonly=True)
            try:
                found, total = kb.stale_pages(reader, today, STALE_MAX)
            finally:
                reader.close()
        except sqlite3.Error:  # a file being created, or damaged: the brief still answers
            log.warning("stale pages of project %s could not be read", project_id, exc_info=True)
            return {"stale_pages": section([], 0, 0)}
        return {"stale_pages": section([_stale_item(p, now) for p in found], total, len(found))}

    def resource_templates(self) -> Sequence[ResourceTemplate]:
        return (
            ResourceTemplate(
                resources.TEMPLATE,
                "knowledge-page",
                "Knowledge base page",
                "A page of a project's knowledge base by its path under /fs/ (segments percent-encoded)",
                "text/markdown",
            ),
        )

    async def resources(self, caller: Caller, after: str | None, limit: int) -> Sequence[Resource]:
        return [
            Resource(p.uri, f"{p.project_id}:{p.path}", p.mime_type)
            for p in await self.pages.listing(caller, after, limit)
        ]

    def owns_resource(self, uri: str) -> bool:
        return resources.owns(uri)

    async def read_resource(self, caller: Caller, uri: str) -> tuple[str, str] | None:
        return await self.pages.read(caller, uri) if resources.owns(uri) else None

    # The search index takes each project's pages as one source ("kb:<project_id>"), indexed whole.
    def search_touched(self) -> set[str]:
        return {search.source(pid) for pid in self.touched.take()}

    async def search_sources(self) -> Mapping[str, str]:
        marks = {}
        for path in self.store.files():
            mark = await self.store.read(path.stem, search.mark, None)
            if mark is not None:
                marks[search.source(path.stem)] = mark
        return marks

    async def search_documents(self, source: str, mark: str | None) -> SearchBatch | None:
        pid = source.removeprefix(search.PREFIX)
        return await self.store.read(pid, lambda conn: search.batch(conn, pid, mark), None)

    def search_families(self) -> Sequence[SearchFamily]:
        return (SearchFamily(search.FAMILY, search.hit),)

    def search_project_sources(self, project_id: str) -> Iterable[str]:
        return (search.source(project_id),)

    def background(self) -> Sequence[Task]:
        return (self.store.pool.run_sweeper, self.store.run_checkpointer)


def _stale_item(page: kb.Page, now: float) -> dict[str, Any]:
    due = date.fromisoformat(page.stale_after or iso(now)[:10])
    overdue = (date.fromisoformat(iso(now)[:10]) - due).days
    title = decoded(page.derived, page.path, None).title
    return {
        "path": page.path,
        "title": title,
        "stale_after": page.stale_after,
        "overdue_days": overdue,
        "trust": page.trust,
    }
