"""The derived views of a project's knowledge base: the meta listing, backlinks, lint and stats,
all from one walk (a `Walk` over every page's `PageFacts`), so no view re-reads or re-parses a page
(spec "Knowledge base routes"; lint as DESIGN section 7 settles it).

Page classes: the root index `/fs/index.md`; the log `/fs/log.md`; a section index `<dir>/index.md`;
every other page is a concept page. Sections are the parent directories (other than `/fs`) of
existing pages; a section's index must link to every page under it, nested pages included. A link
resolves to a page, or to an existing directory, which stands for its index page when it has one
(`[Guides](guides/)`); anything else under `/fs` is broken. A link from a page to itself is never
an incoming link: it neither shows in backlinks nor saves the page from `orphan_page`.

`ViewCache` keeps one walk per project, shared by concurrent readers, renewed when the project's
generation moves (the store bumps it on every write) and dropped ten seconds after it was taken.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from operator import attrgetter
from typing import Any

import anyio

from hubcore.clock import Clock, iso
from hubcore.services.kb.facts import Derived, PageFacts, PageLink
from hubcore.services.kb.links import ROOT, index_of

ROOT_INDEX = "/fs/index.md"
LOG = "/fs/log.md"
INDEX_NAME = "index.md"
NEEDS_REVIEW = ("unverified", "machine_confirmed", "edited_since_review")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def parent_of(path: str) -> str:
    """A page's directory: `/fs/` for a page at the root, else `/fs/a/b` (no trailing slash)."""
    head = path.rsplit("/", 1)[0]
    return ROOT if head == ROOT.rstrip("/") else head


def page_class(path: str) -> str:
    """`root_index`, `log`, `section_index` or `concept` (DESIGN section 7)."""
    if path == ROOT_INDEX:
        return "root_index"
    if path == LOG:
        return "log"
    return "section_index" if path.rsplit("/", 1)[-1] == INDEX_NAME else "concept"


def stale_date(value: str | None) -> date | None:
    """`stale_after` as a date when it is a real `YYYY-MM-DD`; anything else never goes stale."""
    if value is None or not _DATE.fullmatch(value):
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        return None


def today_of(now: float) -> date:
    """The UTC day of a clock reading: what `stale_after` is compared with."""
    return datetime.fromtimestamp(now, tz=UTC).date()


def is_stale(page: PageFacts, today: date) -> bool:
    """After its `stale_after` day (UTC) a page reads as stale."""
    when = stale_date(page.derived.stale_after)
    return when is not None and today > when


def finding(
    code: str, path: str, message: str, line: int | None = None, meta: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A lint finding `{code, path, message, line?, meta?}`; absent members are left out."""
    found: dict[str, Any] = {"code": code, "path": path, "message": message}
    if line is not None:
        found["line"] = line
    if meta:
        found["meta"] = meta
    return found


class Walk:
    """Every page of one project at one moment, indexed for the views. Built once per walk (each
    link resolved once); lint findings and stale counts are worked out on first use and kept.

    Given the `previous` walk of the same project, a walk over the same set of paths (pages were
    overwritten, none created or deleted) is renewed instead of built: only the pages that are not
    the previous walk's own `PageFacts` objects are resolved again, and only the lint findings that
    those pages' links can move are worked out again (the page itself, the pages it stopped or
    started linking to, and the pages under a section index whose links changed). Anything else
    (a page created or deleted) builds the walk whole. Either way the views read the same."""

    def __init__(self, pages: Iterable[PageFacts], checked_at: str, previous: Walk | None = None) -> None:
        self.pages: tuple[PageFacts, ...] = tuple(sorted(pages, key=attrgetter("path")))
        self.checked_at = checked_at
        self.paths = [p.path for p in self.pages]
        self.by_path = {p.path: p for p in self.pages}
        self._lint: list[dict[str, Any]] | None = None
        self._stale: dict[date, int] = {}
        self._totals: tuple[dict[str, int], int] | None = None
        if previous is not None and previous.paths == self.paths:
            self._renew(previous)
            return
        self.dirs = _directories(self.paths)
        self.broken: dict[str, list[PageLink]] = {}  # page -> its links to no page
        self.outgoing = {p.path: self._land(p) for p in self.pages}  # page -> the other pages it links to
        self.incoming: dict[str, set[str]] = {}
        for source, targets in self.outgoing.items():
            for target in targets:
                self.incoming.setdefault(target, set()).add(source)
        self._own: dict[str, list[dict[str, Any]]] = {}  # page -> the findings about it, as worked out
        self._bundle: list[dict[str, Any]] | None = None  # findings about no page (missing log, indexes)

    def _renew(self, previous: Walk) -> None:
        """Take over `previous` (same paths), resolving again only the pages that changed. Nothing
        of `previous` is changed: its sets and lists are replaced here, never mutated."""
        self.dirs = previous.dirs
        self.broken = dict(previous.broken)
        self.outgoing = dict(previous.outgoing)
        self.incoming = dict(previous.incoming)
        moved: set[str] = set()  # pages whose findings may differ from the previous walk's
        for page in self.pages:
            if previous.by_path[page.path] is page:
                continue
            before = self.outgoing[page.path]
            self.broken.pop(page.path, None)
            after = self._land(page)
            self.outgoing[page.path] = after
            for target in before - after:
                self.incoming[target] = self.incoming[target] - {page.path}
            for target in after - before:
                self.incoming[target] = self.incoming.get(target, set()) | {page.path}
            moved.add(page.path)
            moved |= before ^ after
            if before != after and page_class(page.path) == "section_index":
                moved.update(p.path for p in self.under(parent_of(page.path)))
        self._own = {path: found for path, found in previous._own.items() if path not in moved}
        self._bundle = previous._bundle

    def _land(self, page: PageFacts) -> set[str]:
        """Where the page's links land: a page, or an existing directory, which stands for its
        index page when it has one; a link under /fs to neither is broken (kept in `broken`).
        External and escaping links (no target) land nowhere here; self-links are left out."""
        targets: set[str] = set()
        for link in page.derived.links:
            target = link.target
            if target is None:
                continue
            if target in self.by_path:
                targets.add(target)
            elif target not in self.dirs:
                self.broken.setdefault(page.path, []).append(link)
            elif index_of(target) in self.by_path:
                targets.add(index_of(target))
        targets.discard(page.path)
        return targets

    def under(self, prefix: str) -> Sequence[PageFacts]:
        """The pages beneath directory `prefix` (canonical: `/fs/` or `/fs/a`), in path order."""
        start = prefix.rstrip("/") + "/"
        low = bisect.bisect_left(self.paths, start)
        high = bisect.bisect_left(self.paths, start[:-1] + "0")  # "0" sorts just after "/"
        return self.pages[low:high]

    # -- the views ---------------------------------------------------------------------------------

    def backlinks(self, path: str) -> list[dict[str, Any]]:
        """The pages linking to `path`, `[{path, title}]` in path order; self-links left out."""
        return [
            {"path": source, "title": self.by_path[source].derived.title}
            for source in sorted(self.incoming.get(path, ()))
        ]

    def meta_rows(self, prefix: str, today: date, limit: int | None = None) -> tuple[list[dict[str, Any]], bool]:
        """Every page under `prefix` with its row fields, in path order: at most `limit` rows, and
        whether more were left out."""
        pages = self.under(prefix)
        shown = pages if limit is None else pages[:limit]
        return [meta_row(p, today) for p in shown], len(shown) < len(pages)

    def lint(self) -> list[dict[str, Any]]:
        """Every finding, sorted by (path, code) and then line."""
        if self._lint is None:
            if self._bundle is None:
                self._bundle = _bundle_findings(self)
            own = self._own
            found = list(self._bundle)
            for page in self.pages:
                mine = own.get(page.path)
                if mine is None:
                    mine = own[page.path] = _findings_about(self, page)
                found += mine
            self._lint = sorted(found, key=lambda f: (f["path"], f["code"], f.get("line", 0)))
        return self._lint

    def stats(self, today: date, last_change: tuple[str, str] | None = None) -> dict[str, Any]:
        """`{pages, bytes, unverified, stale, last_change_at, last_change_by, needs_review}`.
        `last_change` (at, by) comes from the write log when the caller has it (a delete is a
        change no page shows); else it is the newest write of a page that exists."""
        counts, size = self._count()
        if last_change is None:
            newest = max(self.pages, key=lambda p: p.last_write_at or "", default=None)
            last_change = (newest.last_write_at or "", newest.last_write_by or "") if newest else None
        return {
            "pages": len(self.pages),
            "bytes": size,
            "unverified": counts["unverified"],
            "stale": self.stale_count(today),
            "last_change_at": last_change[0] if last_change else None,
            "last_change_by": last_change[1] if last_change else None,
            "needs_review": {**counts, "total": sum(counts.values())},
        }

    def _count(self) -> tuple[dict[str, int], int]:
        """The pages of each trust that needs review, and the bytes of all pages (kept)."""
        if self._totals is None:
            counts = {trust: 0 for trust in NEEDS_REVIEW}
            for page in self.pages:
                if page.trust in counts:
                    counts[page.trust] += 1
            self._totals = (counts, sum(p.size_bytes for p in self.pages))
        return self._totals

    def stale_count(self, today: date) -> int:
        if today not in self._stale:
            self._stale[today] = sum(1 for p in self.pages if is_stale(p, today))
        return self._stale[today]


def meta_row(page: PageFacts, today: date) -> dict[str, Any]:
    """A page's listing entry with the page row fields (listing with `meta=1`)."""
    d = page.derived
    return {
        "path": page.path,
        "type": "file",
        "size_bytes": page.size_bytes,
        "children": None,
        "title": d.title,
        "description": d.description,
        "page_type": d.page_type,
        "status": d.status,
        "tags": None if d.tags is None else list(d.tags),
        "trust": page.trust,
        "verified_by": d.verified_by,
        "verified_at": d.verified_at,
        "stale": is_stale(page, today),
        "stale_after": d.stale_after,
        "last_write_by": page.last_write_by,
        "last_write_at": page.last_write_at,
    }


def _directories(paths: Iterable[str]) -> set[str]:
    """Every directory holding a page, however deep: `/fs/` and `/fs/a`, `/fs/a/b` ..."""
    dirs = {ROOT}
    for path in paths:
        parent = parent_of(path)
        while parent != ROOT and parent not in dirs:
            dirs.add(parent)
            parent = parent_of(parent)
    return dirs


# --- lint ------------------------------------------------------------------------------------------


def page_findings(path: str, derived: Derived, walk: Walk | None = None) -> list[dict[str, Any]]:
    """The findings of one page as a write reports them (its `lint[]`): what its frontmatter and
    links say alone, and with `walk` (the bundle as it stood), its links that land on no page or
    directory of it (the page's own path and directories count as there). Sorted by code, line."""
    found = _frontmatter_findings(path, derived) + _escape_findings(path, derived)
    if walk is not None:
        here = _directories([path]) | {path}
        found += [
            _broken(path, link)
            for link in derived.links
            if link.target is not None
            and link.target not in walk.by_path
            and link.target not in walk.dirs
            and link.target not in here
        ]
    return sorted(found, key=lambda f: (f["code"], f.get("line", 0)))


def _findings_about(walk: Walk, page: PageFacts) -> list[dict[str, Any]]:
    """Every finding about `page`: what its frontmatter and links say, its broken links, and
    where the bundle's structure leaves it (an orphan, missing from a section index)."""
    path = page.path
    found = _frontmatter_findings(path, page.derived) + _escape_findings(path, page.derived)
    found += [_broken(path, link) for link in walk.broken.get(path, ())]
    if page_class(path) == "concept" and not walk.incoming.get(path):
        found.append(finding("orphan_page", path, "no other page links to this page"))
    found += [
        finding("missing_index_entry", path, f"the section index {index} does not link here", meta={"index": index})
        for index in _section_indexes(walk, path)
        if path not in walk.outgoing[index]
    ]
    return found


def _frontmatter_findings(path: str, d: Derived) -> list[dict[str, Any]]:
    kind = page_class(path)
    if d.frontmatter == "unparsed":
        return [finding("unparsed_frontmatter", path, f"the frontmatter block cannot be read: {d.error}", d.error_line)]
    found: list[dict[str, Any]] = []
    if d.frontmatter == "absent" and kind in ("concept", "root_index"):
        found.append(finding("missing_frontmatter", path, "the page has no frontmatter block (--- on line one)"))
    if d.frontmatter == "parsed" and kind == "concept" and not (d.page_type or "").strip():
        found.append(finding("missing_type", path, "the frontmatter gives no type"))
    if d.has_okf_version and path != ROOT_INDEX:
        found.append(finding("okf_version_misplaced", path, f"okf_version belongs only on {ROOT_INDEX}", d.okf_line))
    return found


def _escape_findings(path: str, d: Derived) -> list[dict[str, Any]]:
    return [
        finding("link_escapes_bundle", path, f"the link {link.href} leaves /fs", link.line, {"href": link.href})
        for link in d.links
        if link.kind == "escapes"
    ]


def _broken(path: str, link: PageLink) -> dict[str, Any]:
    return finding(
        "broken_link",
        path,
        f"the link {link.href} goes to no page ({link.target})",
        link.line,
        {"href": link.href, "target": link.target},
    )


def _bundle_findings(walk: Walk) -> list[dict[str, Any]]:
    """The findings about pages that are not there: the log, and each section's index."""
    if not walk.pages:
        return []  # a knowledge base never written has nothing to lint
    found: list[dict[str, Any]] = []
    if LOG not in walk.by_path:
        found.append(finding("missing_log", LOG, f"the bundle has no log page {LOG}"))
    sections = sorted({parent_of(p) for p in walk.paths} - {ROOT})
    found += [
        finding("missing_index", index_of(s), f"the section {s} has no index page {index_of(s)}", meta={"section": s})
        for s in sections
        if index_of(s) not in walk.by_path
    ]
    return found


def _section_indexes(walk: Walk, path: str) -> list[str]:
    """The indexes a page must be listed in, nearest first: that of every section it is under,
    its own directory's and every ancestor's (nested pages included), never the page itself.
    A directory whose index exists is a section (the index is a page directly in it); `/fs` is
    no section."""
    indexes: list[str] = []
    directory = parent_of(path)
    while directory != ROOT:
        index = index_of(directory)
        if index in walk.by_path and index != path:
            indexes.append(index)
        directory = parent_of(directory)
    return indexes


# --- the cache -------------------------------------------------------------------------------------

WALK_TTL = 10.0  # seconds a walk serves reads (spec "Limits": derived view cache)


@dataclass
class _Flight:
    """A walk being taken: later readers of the same generation wait for it."""

    generation: int
    done: anyio.Event
    walk: Walk | None = None
    error: BaseException | None = None


@dataclass(frozen=True, slots=True)
class _Kept:
    generation: int
    taken_at: float
    walk: Walk


class ViewCache:
    """One walk per project, shared: a reader gets the kept walk while the project's generation is
    the one it was taken at and it is under ten seconds old; otherwise one reader takes a new walk
    (`load`) and every reader arriving meanwhile waits for that one. Walks past their ten seconds
    are dropped on the next call. Time comes from the injected clock."""

    def __init__(self, clock: Clock, ttl: float = WALK_TTL) -> None:
        self.clock = clock
        self.ttl = ttl
        self._kept: dict[str, _Kept] = {}
        self._flights: dict[str, _Flight] = {}
        self.walks = 0  # walks taken, for tests and metrics

    async def get(
        self, project_id: str, generation: int, load: Callable[[str], Awaitable[Walk]], *, fresh: bool = False
    ) -> Walk:
        """The project's walk at `generation`; `fresh` takes a new one (or joins one being taken).
        `load(checked_at)` takes the walk; its failure reaches every reader waiting on it."""
        while True:
            self._drop_old()
            kept = self._kept.get(project_id)
            if kept is not None and kept.generation == generation and not fresh:
                return kept.walk
            flight = self._flights.get(project_id)
            if flight is None or flight.generation != generation:
                return await self._take(project_id, generation, load)
            await flight.done.wait()
            if flight.error is not None:
                raise flight.error
            if flight.walk is not None:
                return flight.walk
            # The reader taking it was cancelled: take it again.

    def forget(self, project_id: str) -> None:
        """Drop the project's walk (its knowledge base was removed)."""
        self._kept.pop(project_id, None)

    def _drop_old(self) -> None:
        now = self.clock.now()
        for project_id in [p for p, k in self._kept.items() if now - k.taken_at >= self.ttl]:
            del self._kept[project_id]

    async def _take(self, project_id: str, generation: int, load: Callable[[str], Awaitable[Walk]]) -> Walk:
        flight = _Flight(generation, anyio.Event())
        self._flights[project_id] = flight
        taken_at = self.clock.now()
        try:
            flight.walk = await load(iso(taken_at))
            self.walks += 1
            kept = self._kept.get(project_id)
            if kept is None or kept.generation <= generation:
                self._kept[project_id] = _Kept(generation, taken_at, flight.walk)
            return flight.walk
        except Exception as exc:
            flight.error = exc
            raise
        finally:
            flight.done.set()
            if self._flights.get(project_id) is flight:
                del self._flights[project_id]
