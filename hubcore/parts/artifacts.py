"""The artifacts part: versioned artifacts (`hubcore.services.artifacts`) with their bodies in the
blob store (`blobs/<aa>/<sha256>`, `hubcore.store.blobs`).

What it brings to the hub: its share of a project's deletion (rows inside the delete's command,
then the blobs no version references any more), `artifacts` and the blobs' bytes in project stats,
`artifact_bytes` in the storage report, the blob store's write count, a sweep at start of
the blobs no version references, and each artifact's current version to the search index.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import anyio

from hubcore.parts.protocol import Part, SearchBatch, SearchFamily, Task, Touched
from hubcore.services.artifacts import blob_files, reviews, rows, schema
from hubcore.services.artifacts import search as search
from hubcore.services.artifacts.comments import CommentService
from hubcore.services.artifacts.scripts import ScriptsService
from hubcore.services.artifacts.service import READ_ATTEMPTS, ArtifactService
from hubcore.services.artifacts.shares import ShareService
from hubcore.services.core import Core
from hubcore.store.blobs import BlobStore
from hubcore.store.migrations import Migration

if TYPE_CHECKING:
    from hubcore.ops.findings import Finding

log = logging.getLogger("hubcore.artifacts")


class ArtifactsPart(Part):
    name = "artifacts"
    stats_members = ("artifacts",)
    storage_kinds: ClassVar[Mapping[str, str]] = {"artifacts": "artifact_bytes"}
    search_family_names = (search.FAMILY,)
    restore_sweeps = "blobs"

    def __init__(self, core: Core) -> None:
        self.core = core
        self.blobs = BlobStore(core.settings.data_path / "blobs")
        self.artifacts = ArtifactService(core, self.blobs)
        self.comments = CommentService(core, self.blobs)
        self.shares = ShareService(core)
        self.scripts = ScriptsService(core)
        self.touched = self.artifacts.touched = Touched(core.nudge.note)
        # Bodies a project's deletion dropped, from its command to the removal after its commit
        # (per hub, keyed by project: a delete refused after `purge_rows` leaves a stale entry that
        # the next delete of that project replaces).
        self._dropped: dict[str, list[str]] = {}

    @classmethod
    def migrations(cls) -> Sequence[Migration]:
        return schema.MIGRATIONS

    # The blobs in a data directory without a hub (the ops tools): copied byte for byte by a
    # backup, checked against their rows, the unreferenced ones swept after a restore.
    @classmethod
    def copied_files(cls, data_dir: Path) -> Iterable[Path]:
        return blob_files.blob_paths(data_dir)

    @classmethod
    def check_references(cls, conn: sqlite3.Connection, data_dir: Path) -> Sequence[Finding]:
        return blob_files.check_blobs(conn, data_dir)

    @classmethod
    def doctor_references(cls, conn: sqlite3.Connection, data_dir: Path) -> Sequence[Finding]:
        return blob_files.missing_blobs(conn, data_dir)

    @classmethod
    def sweep_restored(cls, conn: sqlite3.Connection, data_dir: Path) -> int:
        return blob_files.sweep_restored(conn, data_dir)

    def writes(self) -> int:
        return self.blobs.writes

    def background(self) -> Sequence[Task]:
        return (self.sweep_unreferenced,)

    async def sweep_unreferenced(self) -> None:
        """Once at start: remove the blobs no version references (a backup restored with blobs newer
        than its hub.db, a crash between a blob's write and its row's commit). A write staging a
        body meanwhile keeps it safe (`BlobStore.staged`)."""
        digests = await anyio.to_thread.run_sync(self.blobs.digests)
        removed = await self.artifacts.drop(digests)
        if removed:
            log.info("removed %d blobs no artifact version references", removed)

    # The search index takes each artifact as one source ("artifact:<id>"): its current version.
    # A delete needs no note: its search rows and mark go in the delete's own command (a trigger).
    def search_touched(self) -> set[str]:
        return {search.source(a) for a in self.touched.take()}

    async def search_sources(self) -> Mapping[str, str]:
        return await self.core.store.read(search.marks)

    async def search_documents(self, source: str, mark: str | None) -> SearchBatch | None:
        artifact_id = source.removeprefix(search.PREFIX)
        row: sqlite3.Row | None = None
        for _ in range(READ_ATTEMPTS):
            row = await self.core.store.read(lambda conn: search.row_of(conn, artifact_id))
            if row is None:
                return None
            if row["envelope"] is not None:  # protected: the title only, never the ciphertext
                return search.batch(row, None)
            try:  # off the event loop: a body is up to 50 MiB, and HTML is parsed for its text
                return await anyio.to_thread.run_sync(self._indexed, row)
            except FileNotFoundError:  # deleted since the row was read: read it again
                continue
        if row is None:
            return None
        log.warning("artifact %s: its body is missing from the blob store; indexed without its text", artifact_id)
        return search.batch(row, "")

    def _indexed(self, row: sqlite3.Row) -> SearchBatch:
        return search.batch(row, self.blobs.read(row["sha256"]).decode("utf-8", "replace"))

    def search_families(self) -> Sequence[SearchFamily]:
        return (SearchFamily(search.FAMILY, search.hit),)

    # A review: an approval naming a diff (issue 29), and the verdict its decision carries.
    def review_subject(self, conn: sqlite3.Connection, project_id: str, artifact_id: str) -> dict[str, Any] | None:
        return reviews.subject(conn, project_id, artifact_id)

    def review_of(self, conn: sqlite3.Connection, subject: dict[str, Any], verdict: str) -> dict[str, Any] | None:
        artifact_id = subject.get("artifact_id")
        if not isinstance(artifact_id, str):
            return None
        return reviews.review_of(conn, artifact_id, str(subject["project_id"]), verdict)

    def purge_rows(self, conn: sqlite3.Connection, project_id: str) -> None:
        self._dropped[project_id] = rows.digests_of(conn, "a.project_id = ?", (project_id,))
        conn.execute(
            """DELETE FROM artifact_versions WHERE artifact_id IN
                        (SELECT id FROM artifacts WHERE project_id = ?)""",
            (project_id,),
        )
        conn.execute("DELETE FROM artifacts WHERE project_id = ?", (project_id,))

    async def after_delete(self, project_id: str) -> None:
        dropped = self._dropped.pop(project_id, [])
        if dropped:
            await self.artifacts.drop(dropped)

    async def project_stats(self, project_id: str) -> Mapping[str, int | None]:
        def read(conn: sqlite3.Connection) -> tuple[int, list[str]]:
            count = conn.execute("SELECT COUNT(*) FROM artifacts WHERE project_id = ?", (project_id,)).fetchone()[0]
            return int(count), rows.digests_of(conn, "a.project_id = ?", (project_id,))

        count, digests = await self.core.store.read(read)
        held = await anyio.to_thread.run_sync(self.blobs.bytes_of, digests)
        return {"artifacts": count, "disk_bytes": held}

    async def project_bytes(self) -> Mapping[str, Mapping[str, int | None]]:
        """Each project's blob bytes: the size of every distinct body its versions reference
        (a body two projects share counts in both rows)."""

        def read(conn: sqlite3.Connection) -> dict[str, int]:
            found = conn.execute("""SELECT project_id, SUM(size_bytes) FROM (SELECT DISTINCT a.project_id, v.sha256,
                                    v.size_bytes FROM artifact_versions v JOIN artifacts a ON a.id = v.artifact_id)
                                    GROUP BY project_id""").fetchall()
            return {r[0]: int(r[1]) for r in found}

        return {"artifacts": dict(await self.core.store.read(read))}
