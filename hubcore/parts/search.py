"""The search part: the one lexical index in hub.db over what the other parts feed it
(`Part.search_*`), caught up by each query (`hubcore.services.search`).

What it brings to the hub: its share of a project's deletion (the project's documents, inside the
delete's command) and the search service the adapters call. Indexing is lazy: the first query
after start reconciles every source with the mark it was indexed at (a crash between a commit and
its indexing loses nothing), each later query first indexes what the parts noted since the last
one. So a search always sees every committed write, and no index write ever lands behind a
write's reply (the suite's whole-store snapshots of "a refusal writes nothing" stay exact).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from hubcore.parts import Part, Task
from hubcore.services.core import Core
from hubcore.services.search import index
from hubcore.services.search.index import SearchIndex
from hubcore.services.search.semantic import SemanticIndex
from hubcore.services.search.service import SearchService


class SearchPart(Part):
    name = "search"

    def __init__(self, core: Core) -> None:
        self.index = SearchIndex(core)
        self.semantic = SemanticIndex(core)
        self.search = SearchService(core, self.index, self.semantic)

    def background(self) -> Sequence[Task]:
        return (self.semantic.run,)

    def purge_rows(self, conn: sqlite3.Connection, project_id: str) -> None:
        index.purge_project(conn, project_id)
