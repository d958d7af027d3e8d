"""The search part: the one lexical index in hub.db over what the other parts feed it
(`Part.search_*`), kept up by a background task and reconciled at start (`hubcore.services.search`).

What it brings to the hub: its share of a project's deletion (the project's documents, inside the
delete's command), the indexer task, and the search service the adapters call.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Sequence

import anyio

from hubcore.parts import Part, Task
from hubcore.services.changes import Effects
from hubcore.services.core import Core
from hubcore.services.search import index
from hubcore.services.search.index import SearchIndex
from hubcore.services.search.service import SearchService

log = logging.getLogger("hubcore.search")

# Brain and knowledge base writes commit in their own files, with no hub.db commit to wake the
# indexer: it also looks at the parts' in-memory notes this often (a set's emptiness, no I/O).
IDLE_CHECK_SECS = 0.1


class SearchPart(Part):
    name = "search"

    def __init__(self, core: Core) -> None:
        self.index = SearchIndex(core)
        self.search = SearchService(core, self.index)
        self._wake = anyio.Event()

    def purge_rows(self, conn: sqlite3.Connection, project_id: str) -> None:
        index.purge_project(conn, project_id)

    def on_commit(self, effects: Effects) -> None:
        if effects.kinds:
            self._wake.set()

    def background(self) -> Sequence[Task]:
        return (self.run_indexer,)

    async def run_indexer(self) -> None:
        """Reconcile once, then index what the parts note, after each commit or every tick."""
        while True:
            try:
                await self.index.catch_up()
            except Exception:  # derived data: the next pass (or the next start) makes it whole
                log.exception("search indexing failed; retrying")
                self.index.failures += 1
            with anyio.move_on_after(IDLE_CHECK_SECS):
                await self._wake.wait()
            self._wake = anyio.Event()
