"""The derived views from a walk: lint over a fixture bundle exercising every finding code, with
the exact findings expected; backlinks; stats; the meta listing; the per-project walk cache."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import date
from typing import Any

import anyio
import pytest

from hubcore.clock import FakeClock
from hubcore.services.kb import facts, views
from hubcore.services.kb.facts import PageFacts
from hubcore.services.kb.views import ViewCache, Walk

AT = "2026-11-20T10:00:00.000Z"
TODAY = date(2026, 11, 23)


def page(path: str, content: str, *, trust: str = "unverified", by: str = "agent-1", at: str = AT) -> PageFacts:
    data = content.encode()
    return PageFacts(path, len(data), f"sha256:{len(data)}", facts.derive(path, content), trust, by, at)


def walk(pages: dict[str, str]) -> Walk:
    return Walk([page(p, c) for p, c in pages.items()], AT)


# The fixture bundle: every finding code at least once (the comments say which and why).
BUNDLE = {
    # Root index: may carry okf_version; links to a directory (its index), a page, the missing log.
    "/fs/index.md": "---\ntype: Guide\ntitle: Home\nokf_version: 1\n---\n"
    "[Guides](guides/) [A](concepts/a.md)\n[Log](log.md)\n",  # broken_link line 7
    "/fs/guides/index.md": "# Guides\n\n[Setup](setup.md)\n",  # a section index needs no block
    # A concept page: a self-link, a broken link, an escaping link, a good link.
    "/fs/guides/setup.md": "---\ntype: Runbook\ntitle: Setup\n---\n"
    "[top](#top) [here](setup.md)\n"
    "[gone](missing.md)\n"  # broken_link line 6
    "[out](../../etc/passwd)\n"  # link_escapes_bundle line 7
    "[a](../concepts/a.md) [b](/fs/concepts/b.md#x)\n",
    # In a section without an index (missing_index), under guides/ whose index does not list it
    # (missing_index_entry), no block (missing_frontmatter), linked from nowhere (orphan_page).
    "/fs/guides/deep/x.md": "# X\n",
    # A block without a type (missing_type) carrying okf_version (okf_version_misplaced).
    "/fs/concepts/a.md": "---\ntitle: A\nstatus: draft\nokf_version: 1\n---\n# A\n",
    # A block the subset cannot read (unparsed_frontmatter line 2, and no other frontmatter
    # finding); its links still count (notes.md is linked). setup.md links here: no orphan.
    "/fs/concepts/b.md": "---\ntype Guide\n---\n[me](b.md) [notes](../notes.md)\n",
    # Linked only from an unparsed page: no orphan. Type set: no finding.
    "/fs/notes.md": "---\ntype: Concept\ntitle: Notes\n---\n[self](notes.md)\n",
    # Linked from nowhere but itself: orphan_page.
    "/fs/lonely.md": "---\ntype: Concept\n---\n[me](#me) [me](lonely.md) [home](index.md)\n",
}

EXPECTED: list[dict[str, Any]] = [
    {"code": "missing_type", "path": "/fs/concepts/a.md", "message": "the frontmatter gives no type"},
    {
        "code": "okf_version_misplaced",
        "path": "/fs/concepts/a.md",
        "message": "okf_version belongs only on /fs/index.md",
        "line": 4,
    },
    {
        "code": "unparsed_frontmatter",
        "path": "/fs/concepts/b.md",
        "message": "the frontmatter block cannot be read: line 2 is not a top-level 'key: value' line",
        "line": 2,
    },
    {
        "code": "missing_index",
        "path": "/fs/concepts/index.md",
        "message": "the section /fs/concepts has no index page /fs/concepts/index.md",
        "meta": {"section": "/fs/concepts"},
    },
    {
        "code": "missing_index",
        "path": "/fs/guides/deep/index.md",
        "message": "the section /fs/guides/deep has no index page /fs/guides/deep/index.md",
        "meta": {"section": "/fs/guides/deep"},
    },
    {
        "code": "missing_frontmatter",
        "path": "/fs/guides/deep/x.md",
        "message": "the page has no frontmatter block (--- on line one)",
    },
    {
        "code": "missing_index_entry",
        "path": "/fs/guides/deep/x.md",
        "message": "the section index /fs/guides/index.md does not link here",
        "meta": {"index": "/fs/guides/index.md"},
    },
    {"code": "orphan_page", "path": "/fs/guides/deep/x.md", "message": "no other page links to this page"},
    {
        "code": "broken_link",
        "path": "/fs/guides/setup.md",
        "message": "the link missing.md goes to no page (/fs/guides/missing.md)",
        "line": 6,
        "meta": {"href": "missing.md", "target": "/fs/guides/missing.md"},
    },
    {
        "code": "link_escapes_bundle",
        "path": "/fs/guides/setup.md",
        "message": "the link ../../etc/passwd leaves /fs",
        "line": 7,
        "meta": {"href": "../../etc/passwd"},
    },
    {
        "code": "broken_link",
        "path": "/fs/index.md",
        "message": "the link log.md goes to no page (/fs/log.md)",
        "line": 7,
        "meta": {"href": "log.md", "target": "/fs/log.md"},
    },
    {"code": "missing_log", "path": "/fs/log.md", "message": "the bundle has no log page /fs/log.md"},
    {"code": "orphan_page", "path": "/fs/lonely.md", "message": "no other page links to this page"},
]


def test_lint_over_the_fixture_bundle() -> None:
    findings = walk(BUNDLE).lint()
    assert findings == EXPECTED
    assert {f["code"] for f in findings} == {
        "missing_frontmatter",
        "missing_type",
        "unparsed_frontmatter",
        "okf_version_misplaced",
        "link_escapes_bundle",
        "broken_link",
        "missing_index",
        "missing_log",
        "orphan_page",
        "missing_index_entry",
    }


def test_a_write_reports_its_own_page_findings() -> None:
    content = (
        "---\ntitle: T\nokf_version: 1\n---\n[gone](gone.md) [out](../../x) [ok](/fs/notes.md)\n"
        "[dir](/fs/guides) [here](.) [self](new.md) [ext](https://e.x)\n"
    )
    derived = facts.derive("/fs/fresh/new.md", content)
    alone = views.page_findings("/fs/fresh/new.md", derived)
    assert [(f["code"], f.get("line")) for f in alone] == [
        ("link_escapes_bundle", 5),
        ("missing_type", None),
        ("okf_version_misplaced", 3),
    ]
    with_bundle = views.page_findings("/fs/fresh/new.md", derived, walk(BUNDLE))
    assert [(f["code"], f.get("line")) for f in with_bundle] == [
        ("broken_link", 5),
        ("link_escapes_bundle", 5),
        ("missing_type", None),
        ("okf_version_misplaced", 3),
    ]
    assert with_bundle[0] == {
        "code": "broken_link",
        "path": "/fs/fresh/new.md",
        "message": "the link gone.md goes to no page (/fs/fresh/gone.md)",
        "line": 5,
        "meta": {"href": "gone.md", "target": "/fs/fresh/gone.md"},
    }
    unparsed = views.page_findings("/fs/x.md", facts.derive("/fs/x.md", "---\nbad\n---\n"))
    assert [(f["code"], f.get("line")) for f in unparsed] == [("unparsed_frontmatter", 2)]


def test_lint_is_sorted_by_path_then_code() -> None:
    findings = walk(BUNDLE).lint()
    assert findings == sorted(findings, key=lambda f: (f["path"], f["code"], f.get("line", 0)))


def test_an_empty_bundle_has_no_findings() -> None:
    assert walk({}).lint() == []


def test_a_whole_bundle_has_no_findings() -> None:
    bundle = {
        "/fs/index.md": "---\ntype: Guide\nokf_version: 1\n---\n[g](guides/index.md) [l](log.md) [n](notes.md)\n",
        "/fs/log.md": "# Log\n",
        "/fs/notes.md": "---\ntype: Concept\n---\n[ext](https://example.com) [pic](pic.svg)\n",
        "/fs/pic.svg": "---\ntype: Reference\n---\n<svg/>\n",
        "/fs/guides/index.md": "---\ntitle: Guides\n---\n[a](a.md) [b](deeper/b.md)\n",
        "/fs/guides/a.md": "---\ntype: Guide\n---\n",
        "/fs/guides/deeper/index.md": "[b](b.md)\n",
        "/fs/guides/deeper/b.md": "---\ntype: Guide\n---\n",
    }
    findings = walk(bundle).lint()
    # deeper/index.md is under the guides section, whose index does not link to it.
    assert findings == [
        {
            "code": "missing_index_entry",
            "path": "/fs/guides/deeper/index.md",
            "message": "the section index /fs/guides/index.md does not link here",
            "meta": {"index": "/fs/guides/index.md"},
        }
    ]


def test_every_section_index_above_a_page_must_link_to_it() -> None:
    bundle = {
        "/fs/index.md": "---\ntype: Guide\n---\n[a](a/)\n",
        "/fs/log.md": "x",
        "/fs/a/index.md": "[b](b/)\n",  # links b's index, not the pages under b
        "/fs/a/b/index.md": "[p](p.md) [q](c/q.md)\n",
        "/fs/a/b/p.md": "---\ntype: Guide\n---\n",
        "/fs/a/b/c/q.md": "---\ntype: Guide\n---\n",  # c has no index: missing_index
    }
    assert [(f["code"], f["path"], f.get("meta")) for f in walk(bundle).lint()] == [
        ("missing_index", "/fs/a/b/c/index.md", {"section": "/fs/a/b/c"}),
        ("missing_index_entry", "/fs/a/b/c/q.md", {"index": "/fs/a/index.md"}),
        ("missing_index_entry", "/fs/a/b/p.md", {"index": "/fs/a/index.md"}),
    ]


@pytest.mark.parametrize(
    ("path", "content", "codes"),
    [
        ("/fs/index.md", "# Home\n", ["missing_frontmatter"]),  # the root index needs a block
        ("/fs/log.md", "# Log\n", []),  # the log does not
        ("/fs/a/index.md", "# A\n", []),  # nor a section index
        ("/fs/a/index.md", "---\nokf_version: 1\n---\n", ["okf_version_misplaced"]),
        ("/fs/log.md", "---\nokf_version: 1\n---\n", ["okf_version_misplaced"]),
        ("/fs/index.md", "---\ntitle: Home\n---\n", []),  # only a concept page needs a type
        ("/fs/a/page.md", '---\ntype: ""\n---\n', ["missing_type"]),
        ("/fs/a/page.md", '---\ntype: "  "\n---\n', ["missing_type"]),
        ("/fs/a/page.md", "---\ntype: Anything at all\n---\n", []),
        ("/fs/a/page.md", "---\ntype: Guide\n", ["unparsed_frontmatter"]),  # never closes: one finding only
        ("/fs/a/page.md", "---\ntitle: [x]\nokf_version: 1\n---\n", ["unparsed_frontmatter"]),
    ],
)
def test_page_classes(path: str, content: str, codes: list[str]) -> None:
    # Home links to the page and the log exists, so only the page's own findings remain.
    bundle = {"/fs/index.md": "---\ntype: Guide\n---\n[p](" + path + ")\n", "/fs/log.md": "x", path: content}
    if "/a/" in path and not path.endswith("index.md"):
        bundle["/fs/a/index.md"] = "[p](" + path + ")\n"
    found = [f["code"] for f in walk(bundle).lint() if f["path"] == path]
    assert found == codes


def test_links_to_directories() -> None:
    bundle = {
        "/fs/index.md": "---\ntype: Guide\n---\n[a](a) [b](b/) [root](/fs/) [up](.)\n",
        "/fs/log.md": "x",
        "/fs/a/index.md": "[p](p.md)\n",
        "/fs/a/p.md": "---\ntype: Guide\n---\n",
        "/fs/b/q.md": "---\ntype: Guide\n---\n",  # b has no index: the link to b/ is not broken
    }
    w = walk(bundle)
    assert [f["code"] for f in w.lint()] == ["missing_index", "orphan_page"]  # /fs/b/index.md; /fs/b/q.md
    assert w.backlinks("/fs/a/index.md") == [{"path": "/fs/index.md", "title": None}]
    assert w.backlinks("/fs/index.md") == []  # its links to the root are links to itself


def test_backlinks() -> None:
    w = walk(BUNDLE)
    assert w.backlinks("/fs/concepts/a.md") == [
        {"path": "/fs/guides/setup.md", "title": "Setup"},
        {"path": "/fs/index.md", "title": "Home"},
    ]
    assert w.backlinks("/fs/concepts/b.md") == [{"path": "/fs/guides/setup.md", "title": "Setup"}]  # not itself
    assert w.backlinks("/fs/notes.md") == [{"path": "/fs/concepts/b.md", "title": None}]  # unparsed: no title
    assert w.backlinks("/fs/lonely.md") == []  # only self-links
    assert w.backlinks("/fs/guides/missing.md") == []  # a broken link is no backlink
    assert w.backlinks("/fs/nowhere.md") == []


def test_a_page_linking_twice_is_listed_once() -> None:
    w = walk({"/fs/a.md": "[b](b.md) [b again](./b.md#x)\n", "/fs/b.md": "b"})
    assert w.backlinks("/fs/b.md") == [{"path": "/fs/a.md", "title": None}]


# --- stats and the meta listing ----------------------------------------------------------------------


def _trusted() -> Walk:
    return Walk(
        [
            page("/fs/a.md", "---\nstale_after: 2026-11-22\n---\n", trust="unverified", at="2026-11-20T10:00:00.000Z"),
            page(
                "/fs/b.md",
                "---\nstale_after: 2026-11-23\n---\n",
                trust="human_reviewed",
                by="human",
                at="2026-11-21T10:00:00.000Z",
            ),
            page("/fs/c.md", "cc", trust="machine_confirmed", by="agent-2", at="2026-11-19T10:00:00.000Z"),
            page("/fs/d/e.md", "---\nstale_after: 2026-02-30\n---\n", trust="edited_since_review"),
            page("/fs/d/f.md", "---\nstale_after: 20261101\n---\n", trust="edited_since_review"),
        ],
        AT,
    )


def test_stats() -> None:
    w = _trusted()
    assert w.stats(TODAY) == {
        "pages": 5,
        "bytes": sum(p.size_bytes for p in w.pages),
        "unverified": 1,
        "stale": 1,
        "last_change_at": "2026-11-21T10:00:00.000Z",
        "last_change_by": "human",
        "needs_review": {"unverified": 1, "machine_confirmed": 1, "edited_since_review": 2, "total": 4},
    }
    assert w.stats(TODAY, ("2026-11-22T00:00:00.000Z", "agent-9"))["last_change_by"] == "agent-9"
    assert w.stats(date(2026, 11, 24))["stale"] == 2  # the day after stale_after


def test_stats_of_an_empty_bundle() -> None:
    assert walk({}).stats(TODAY) == {
        "pages": 0,
        "bytes": 0,
        "unverified": 0,
        "stale": 0,
        "last_change_at": None,
        "last_change_by": None,
        "needs_review": {"unverified": 0, "machine_confirmed": 0, "edited_since_review": 0, "total": 0},
    }


def test_meta_rows() -> None:
    w = Walk(
        [
            page(
                "/fs/a.md",
                "---\ntype: Guide\ntitle: A\ndescription: D\nstatus: stable\ntags: [x]\n"
                "stale_after: 2026-11-01\nverified:\n  - by: human\n    at: t1\n---\n",
                trust="human_reviewed",
            ),
            page("/fs/d/b.md", "b"),
            page("/fs/d/c/e.md", "e"),
            page("/fs/d0.md", "x"),
            page("/fs/dz/x.md", "x"),
        ],
        AT,
    )
    rows, truncated = w.meta_rows("/fs/", TODAY)
    assert [r["path"] for r in rows] == ["/fs/a.md", "/fs/d/b.md", "/fs/d/c/e.md", "/fs/d0.md", "/fs/dz/x.md"]
    assert not truncated
    assert rows[0] == {
        "path": "/fs/a.md",
        "type": "file",
        "size_bytes": w.by_path["/fs/a.md"].size_bytes,
        "children": None,
        "title": "A",
        "description": "D",
        "page_type": "Guide",
        "status": "stable",
        "tags": ["x"],
        "trust": "human_reviewed",
        "verified_by": "human",
        "verified_at": "t1",
        "stale": True,
        "stale_after": "2026-11-01",
        "last_write_by": "agent-1",
        "last_write_at": AT,
    }
    assert rows[1] | {"size_bytes": 0} == {
        "path": "/fs/d/b.md",
        "type": "file",
        "size_bytes": 0,
        "children": None,
        "title": None,
        "description": None,
        "page_type": None,
        "status": None,
        "tags": None,
        "trust": "unverified",
        "verified_by": None,
        "verified_at": None,
        "stale": False,
        "stale_after": None,
        "last_write_by": "agent-1",
        "last_write_at": AT,
    }
    assert [r["path"] for r in w.meta_rows("/fs/d", TODAY)[0]] == ["/fs/d/b.md", "/fs/d/c/e.md"]
    assert w.meta_rows("/fs/d", TODAY, limit=1) == ([views.meta_row(w.by_path["/fs/d/b.md"], TODAY)], True)
    assert w.meta_rows("/fs/d", TODAY, limit=2)[1] is False
    assert w.meta_rows("/fs/none", TODAY) == ([], False)


def test_today_of() -> None:
    assert views.today_of(FakeClock().now()) == date(2027, 1, 15)


# --- the cache ---------------------------------------------------------------------------------------


class Loader:
    """A walk loader that counts its walks and, when told, waits to be released."""

    def __init__(self) -> None:
        self.calls = 0
        self.release: anyio.Event | None = None
        self.fail: Exception | None = None

    async def __call__(self, checked_at: str) -> Walk:
        self.calls += 1
        if self.release is not None:
            await self.release.wait()
        if self.fail is not None:
            raise self.fail
        return Walk([], checked_at)


def held() -> tuple[ViewCache, Loader]:
    """A cache whose loader holds every walk until `load.release` is set."""
    cache, load = ViewCache(FakeClock()), Loader()
    load.release = anyio.Event()
    return cache, load


def reader(cache: ViewCache, load: Loader, got: list[Walk]) -> Callable[[], Awaitable[None]]:
    """A task that reads web's walk at generation 0 into `got`."""

    async def read() -> None:
        got.append(await cache.get("web", 0, load))

    return read


@pytest.mark.anyio
async def test_a_walk_is_kept_while_nothing_is_written() -> None:
    clock, load = FakeClock(), Loader()
    cache = ViewCache(clock)
    first = await cache.get("web", 0, load)
    clock.advance(9.9)
    assert await cache.get("web", 0, load) is first
    assert load.calls == 1
    assert first.checked_at == "2027-01-15T08:00:00.000Z"


@pytest.mark.anyio
async def test_a_write_renews_the_walk() -> None:
    cache, load = ViewCache(FakeClock()), Loader()
    first = await cache.get("web", 0, load)
    second = await cache.get("web", 1, load)
    assert second is not first and load.calls == 2
    assert await cache.get("web", 1, load) is second


@pytest.mark.anyio
async def test_a_walk_is_dropped_after_ten_seconds() -> None:
    clock, load = FakeClock(), Loader()
    cache = ViewCache(clock)
    first = await cache.get("web", 0, load)
    await cache.get("api", 0, load)
    clock.advance(10)
    assert await cache.get("web", 0, load) is not first
    assert load.calls == 3
    assert set(cache._kept) == {"web"}  # the idle project's walk is gone too


@pytest.mark.anyio
async def test_fresh_walks_again() -> None:
    cache, load = ViewCache(FakeClock()), Loader()
    first = await cache.get("web", 0, load)
    fresh = await cache.get("web", 0, load, fresh=True)
    assert fresh is not first
    assert await cache.get("web", 0, load) is fresh


@pytest.mark.anyio
async def test_projects_are_kept_apart() -> None:
    cache, load = ViewCache(FakeClock()), Loader()
    assert await cache.get("web", 0, load) is not await cache.get("api", 0, load)
    cache.forget("web")
    await cache.get("web", 0, load)
    assert load.calls == 3


@pytest.mark.anyio
async def test_concurrent_readers_share_one_walk() -> None:
    cache, load = held()
    got: list[Walk] = []
    read = reader(cache, load, got)
    async with anyio.create_task_group() as tg:
        for _ in range(3):
            tg.start_soon(read)
        await anyio.wait_all_tasks_blocked()
        load.release.set()
    assert load.calls == 1
    assert got[0] is got[1] is got[2]


@pytest.mark.anyio
async def test_a_reader_at_a_newer_generation_does_not_wait_for_an_older_walk() -> None:
    cache, load = held()
    got: dict[int, Walk] = {}

    async def read(generation: int) -> None:
        got[generation] = await cache.get("web", generation, load)

    async with anyio.create_task_group() as tg:
        tg.start_soon(read, 0)
        await anyio.wait_all_tasks_blocked()
        tg.start_soon(read, 1)
        await anyio.wait_all_tasks_blocked()
        assert load.calls == 2
        load.release.set()
    assert got[0] is not got[1]
    load.release = None
    assert await cache.get("web", 1, load) is got[1]  # the older walk did not replace the newer
    assert load.calls == 2


@pytest.mark.anyio
async def test_a_failed_walk_reaches_its_waiters_and_is_not_kept() -> None:
    cache, load = held()
    load.fail = RuntimeError("locked")
    errors: list[BaseException] = []

    async def read() -> None:
        try:
            await cache.get("web", 0, load)
        except RuntimeError as exc:
            errors.append(exc)

    async with anyio.create_task_group() as tg:
        tg.start_soon(read)
        tg.start_soon(read)
        await anyio.wait_all_tasks_blocked()
        load.release.set()
    assert len(errors) == 2 and load.calls == 1
    load.release, load.fail = None, None
    await cache.get("web", 0, load)
    assert load.calls == 2


@pytest.mark.anyio
async def test_a_waiter_takes_the_walk_when_its_taker_is_cancelled() -> None:
    cache, load = held()
    got: list[Walk] = []
    read = reader(cache, load, got)
    async with anyio.create_task_group() as tg:
        taker = anyio.CancelScope()
        tg.start_soon(_cancellable, cache, load, taker)
        await anyio.wait_all_tasks_blocked()
        tg.start_soon(read)
        await anyio.wait_all_tasks_blocked()
        taker.cancel()
        await anyio.wait_all_tasks_blocked()
        load.release.set()
    assert len(got) == 1 and load.calls == 2


async def _cancellable(cache: ViewCache, load: Loader, scope: anyio.CancelScope) -> None:
    with scope:
        await cache.get("web", 0, load)
