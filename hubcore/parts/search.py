"""The search part: the one lexical index in hub.db over what the other parts feed it
(`Part.search_*`), kept up to date on the write side (`hubcore.services.search`).

What it brings to the hub: its tables (`hubcore.services.search.schema`), its share of a project's
deletion (the project's documents and the marks of the sources the parts say it ends, inside the
delete's command), the search service the adapters call, and two background tasks: the index's
passes (the first after start reconciles every source with the mark it was indexed at, so a crash
between a commit and its indexing loses nothing; each later one indexes what the parts noted) and
the semantic embedder. A query only reads: it waits for the pass that covers what committed before
it, and never writes.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from hubcore.parts.protocol import Part, Task
from hubcore.services.core import Core
from hubcore.services.search import index, schema
from hubcore.services.search.index import SearchIndex
from hubcore.services.search.semantic import SemanticIndex
from hubcore.services.search.service import SearchService
from hubcore.store.migrations import Migration


class SearchPart(Part):
    name = "search"

    def __init__(self, core: Core) -> None:
        self.core = core
        self.index = SearchIndex(core)
        self.semantic = SemanticIndex(core)
        self.search = SearchService(core, self.index, self.semantic)
        self.index.after_pass = self.semantic.follow  # vectors follow the index, on the write side

    @classmethod
    def migrations(cls) -> Sequence[Migration]:
        return schema.MIGRATIONS

    def background(self) -> Sequence[Task]:
        return (self.index.run, self.semantic.run)

    def purge_rows(self, conn: sqlite3.Connection, project_id: str) -> None:
        sources = [s for part in self.core.parts for s in part.search_project_sources(project_id)]
        index.purge_project(conn, project_id, sources)
