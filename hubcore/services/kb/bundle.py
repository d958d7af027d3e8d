"""The derived views of a project's knowledge base, served from one walk (spec "Knowledge base
routes"): the meta listing, backlinks, lint and stats all read a `views.Walk` over every page's
stored facts, taken once per project and shared through `views.ViewCache` (renewed when the
project's generation moves: every write bumps it; dropped after ten seconds).

A write's own `lint[]` is the findings about the written page that its bytes and its links decide
(frontmatter, `link_escapes_bundle`, `broken_link`), worked out against only the pages its links
name, so that a write never pays for a walk of the whole bundle; the bundle's structure (orphans,
indexes, the log) is the lint route's.
"""

from __future__ import annotations

import builtins
import sqlite3
from collections import OrderedDict
from typing import Any

from hubcore.caller import Caller
from hubcore.clock import iso
from hubcore.errors import conflict
from hubcore.services.core import Core
from hubcore.services.kb import facts, signals, views
from hubcore.services.kb.derive import decoded
from hubcore.services.kb.facts import PageFacts
from hubcore.services.kb.files import KbFiles
from hubcore.services.kb.models import KbBacklinks, KbLint, KbProject
from hubcore.store import kb
from hubcore.store.kb import TOP


def facts_of(conn: sqlite3.Connection, page: kb.Page) -> PageFacts:
    """A stored page as the views read it (a row derived by another hub version is derived again)."""
    derived = facts.Derived.from_json(page.derived) or decoded(page.derived, page.path, kb.blob(conn, page.version))
    return PageFacts(
        page.path, page.size_bytes, page.version, derived, page.trust, page.written_by, iso(page.written_at)
    )


def _stub(path: str) -> PageFacts:
    """A page the views need only as existing (a link target)."""
    return PageFacts(path, 0, "", facts.Derived("parsed", page_type="Concept"), "unverified")


def _neighbours(conn: sqlite3.Connection, page: PageFacts) -> list[PageFacts]:
    """What the page's links need to resolve: each target that is a page, one page beneath each
    target that is a directory, and that directory's index when it has one."""
    found: dict[str, PageFacts] = {}
    for link in page.derived.links:
        target = link.target
        if link.kind != "page" or target is None or target == page.path:
            continue
        root = target.rstrip("/") + "/"
        for path in (target, root + "index.md"):
            if path not in found and kb.page(conn, path) is not None:
                found[path] = _stub(path)
        below = conn.execute(
            "SELECT path FROM pages WHERE path > ? AND path < ? LIMIT 1", (root, root + TOP)
        ).fetchone()
        if below is not None:
            found.setdefault(below[0], _stub(below[0]))
    found.pop(page.path, None)
    return list(found.values())


def page_findings(conn: sqlite3.Connection, page: PageFacts) -> list[dict[str, Any]]:
    """The findings about `page` that its own bytes and links decide, as the file stands: the
    write-time rule (`views.page_findings`, which import's lint uses too) over the pages its
    links name."""
    return views.page_findings(page.path, page.derived, views.Walk(_neighbours(conn, page), ""))


Known = dict[str, tuple[tuple[Any, ...], PageFacts]]
"""A project's pages as last walked: path -> (its row's light columns, its facts)."""
LIGHT = "SELECT path, version, size_bytes, written_at, written_by, trust FROM pages"
KNOWN_PROJECTS = 8  # projects whose decoded pages are kept between walks (the most recently walked)
SCAN_OVER = 256  # more pages than this to decode: one scan of the table instead of a read per page


def read_facts(conn: sqlite3.Connection, known: Known) -> tuple[builtins.list[PageFacts], Known]:
    """Every page's facts, in path order, and the renewed `known`: a page whose light columns are
    as last walked keeps its facts; only pages written since are decoded (a cold walk after a
    write decodes one page, not the bundle)."""
    rows = [tuple(r) for r in conn.execute(LIGHT)]
    stale = [r for r in rows if (hit := known.get(r[0])) is None or hit[0] != r]
    decoded_rows = _decode(conn, stale)
    fresh: Known = {}
    for row in rows:
        hit = known.get(row[0])
        fresh[row[0]] = hit if hit is not None and hit[0] == row else (row, decoded_rows[row[0]])
    return [fresh[r[0]][1] for r in sorted(rows)], fresh


def _decode(conn: sqlite3.Connection, rows: builtins.list[tuple[Any, ...]]) -> dict[str, PageFacts]:
    wanted = {r[0] for r in rows}
    if len(wanted) > SCAN_OVER:
        found = [p for p in kb.pages(conn) if p.path in wanted]
    else:
        found = [p for p in (kb.page(conn, path) for path in wanted) if p is not None]
    return {p.path: facts_of(conn, p) for p in found}


class BundleService:
    def __init__(self, core: Core, files: KbFiles) -> None:
        self.core = core
        self.files = files
        self.cache = views.ViewCache(core.clock)
        self._known: OrderedDict[str, tuple[Known, views.Walk]] = OrderedDict()

    async def walk(self, project_id: str, *, fresh: bool = False) -> views.Walk:
        """The project's walk: kept while no write moved its generation, for ten seconds."""

        async def load(checked_at: str) -> views.Walk:
            known, previous = self._known.get(project_id, ({}, None))
            nothing: tuple[builtins.list[PageFacts], Known] = ([], {})
            pages, renewed = await self.files.read(project_id, lambda conn: read_facts(conn, known), nothing)
            walk = views.Walk(pages, checked_at, previous)
            self._remember(project_id, renewed, walk)
            return walk

        return await self.cache.get(project_id, self.files.generation(project_id), load, fresh=fresh)

    def _remember(self, project_id: str, known: Known, walk: views.Walk) -> None:
        """Keep the decoded pages and the walk of the most recently walked projects (replaced
        whole, never changed in place: a walk on a worker thread reads the dict it was handed);
        the next walk decodes only what changed and renews this one (`views.Walk`)."""
        self._known[project_id] = (known, walk)
        self._known.move_to_end(project_id)
        while len(self._known) > KNOWN_PROJECTS:
            self._known.popitem(last=False)

    async def meta_listing(self, project_id: str, prefix: str, limit: int) -> dict[str, Any]:
        walk = await self.walk(project_id)
        if prefix in walk.by_path:
            raise conflict(f"{prefix} is a page, not a directory; read it instead")
        rows, truncated = walk.meta_rows(prefix, views.today_of(self.core.now()), limit)
        return {"entries": rows, "truncated": truncated}

    async def lint(self, caller: Caller, req: KbLint) -> dict[str, Any]:
        """`{checked_at, findings}`; `fresh` walks again."""
        await signals.require_project(self.core, caller, req.project_id)
        walk = await self.walk(req.project_id, fresh=req.fresh)
        return {"checked_at": walk.checked_at, "findings": walk.lint()}

    async def backlinks(self, caller: Caller, req: KbBacklinks) -> builtins.list[dict[str, Any]]:
        """`[{path, title}]` of the pages linking to `path`, in path order (self-links left out)."""
        await signals.require_project(self.core, caller, req.project_id)
        return (await self.walk(req.project_id)).backlinks(req.path)

    async def stats(self, caller: Caller, req: KbProject) -> dict[str, Any]:
        """`{pages, bytes, unverified, stale, last_change_at, last_change_by, needs_review}`; the
        last change comes from the write log (a delete is a change no page shows)."""
        await signals.require_project(self.core, caller, req.project_id)
        walk = await self.walk(req.project_id)
        newest = await self.files.read(req.project_id, _newest_change, None)
        return walk.stats(views.today_of(self.core.now()), newest)


def _newest_change(conn: sqlite3.Connection) -> tuple[str, str] | None:
    row = conn.execute("SELECT at, actor FROM log ORDER BY id DESC LIMIT 1").fetchone()
    return None if row is None else (iso(row[0]), str(row[1]))
