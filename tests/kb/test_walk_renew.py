"""A walk renewed from the previous one reads exactly as a walk built whole, whatever changed; the
service renews it through every write path; the knowledge base files are checkpointed in the
background and never by the write that crosses SQLite's own threshold."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from hubcore.caller import Caller
from hubcore.hub import Hub
from hubcore.services.kb import facts, files, models
from hubcore.services.kb.facts import PageFacts
from hubcore.services.kb.views import Walk
from tests.core.support import wait_until
from tests.kb.support import kb_file, put, req

pytestmark = pytest.mark.anyio

AT = "2026-11-20T10:00:00.000Z"
PATHS = [
    "/fs/index.md",
    "/fs/log.md",
    "/fs/a/index.md",
    "/fs/a/one.md",
    "/fs/a/two.md",
    "/fs/a/deep/three.md",
    "/fs/b/index.md",
    "/fs/b/four.md",
    "/fs/b/five.md",
    "/fs/c/six.md",
]
LINKS = [*PATHS, "/fs/a/", "/fs/b", "/fs/nowhere.md", "../../out.md", "https://example.com/"]


def page(path: str, content: str, trust: str = "unverified") -> PageFacts:
    return PageFacts(path, len(content), f"sha256:{hash(content)}", facts.derive(path, content), trust, "agent", AT)


def content(rng: random.Random) -> str:
    block = rng.choice(["", "---\ntype: Guide\ntitle: T\n---\n", "---\ntitle: No type\n---\n", "---\nbad: [\n---\n"])
    links = " ".join(f"[x]({rng.choice(LINKS)})" for _ in range(rng.randint(0, 4)))
    return f"{block}# Page\n\n{links}\n"


def views_of(walk: Walk) -> dict[str, Any]:
    return {
        "lint": walk.lint(),
        "backlinks": {p: walk.backlinks(p) for p in PATHS},
        "stats": walk.stats(walk_today(), ("t", "a")),
        "meta": walk.meta_rows("/fs/", walk_today()),
    }


def walk_today() -> Any:
    from datetime import date

    return date(2026, 11, 23)


@pytest.mark.parametrize("seed", range(12))
def test_a_renewed_walk_reads_as_a_walk_built_whole(seed: int) -> None:
    rng = random.Random(seed)
    pages = {p: page(p, content(rng)) for p in PATHS}
    previous = Walk(pages.values(), AT)
    previous.lint()
    for _ in range(30):
        changed = rng.sample(PATHS, rng.randint(1, 3))
        for path in changed:  # an overwrite (new links, new frontmatter) or a trust change only
            old = pages[path]
            pages[path] = (
                page(path, content(rng))
                if rng.random() < 0.8
                else PageFacts(path, old.size_bytes, old.version, old.derived, "human_reviewed", "human", AT)
            )
        renewed = Walk(pages.values(), AT, previous)
        assert renewed.dirs is previous.dirs  # same paths: renewed, not built
        assert views_of(renewed) == views_of(Walk(pages.values(), AT))
        if rng.random() < 0.5:
            renewed.lint()  # a walk whose findings were worked out, or not, before the next one
        previous = renewed


def test_a_renewal_leaves_the_previous_walk_as_it_was() -> None:
    pages = {
        "/fs/index.md": page("/fs/index.md", "[a](a/one.md)\n"),
        "/fs/a/index.md": page("/fs/a/index.md", "x\n"),
        "/fs/a/one.md": page("/fs/a/one.md", "---\ntype: Guide\n---\n"),
    }
    first = Walk(pages.values(), AT)
    before = (views_of(first), {k: set(v) for k, v in first.incoming.items()})
    pages["/fs/a/index.md"] = page("/fs/a/index.md", "[one](one.md)\n")
    pages["/fs/index.md"] = page("/fs/index.md", "nothing\n")
    second = Walk(pages.values(), AT, first)
    assert second.backlinks("/fs/a/one.md") == [{"path": "/fs/a/index.md", "title": None}]
    assert [f["code"] for f in second.lint() if f["path"] == "/fs/a/one.md"] == []
    assert (views_of(first), {k: set(v) for k, v in first.incoming.items()}) == before
    assert first.backlinks("/fs/a/one.md") == [{"path": "/fs/index.md", "title": None}]


def test_a_created_or_deleted_page_builds_the_walk_whole() -> None:
    pages = {p: page(p, "[a](/fs/a/one.md)\n") for p in PATHS[:4]}
    first = Walk(pages.values(), AT)
    first.lint()
    pages["/fs/a/new.md"] = page("/fs/a/new.md", "[one](one.md)\n")
    grown = Walk(pages.values(), AT, first)
    assert grown.dirs is not first.dirs
    assert views_of(grown) == views_of(Walk(pages.values(), AT))
    del pages["/fs/a/one.md"]
    shrunk = Walk(pages.values(), AT, grown)
    assert any(f["code"] == "broken_link" for f in shrunk.lint())
    assert views_of(shrunk) == views_of(Walk(pages.values(), AT))


async def lint_of(hub: Hub, admin: Caller) -> list[dict[str, Any]]:
    return list((await hub.kb.lint(admin, req(models.KbLint)))["findings"])


async def test_every_write_path_renews_the_services_walk(hub: Hub, admin: Caller) -> None:
    """Lint after each kind of write reads as a walk taken from nothing (a new service's)."""
    from hubcore.services.kb.bundle import BundleService

    await put(hub, admin, "/fs/index.md", "---\ntype: Guide\n---\n[a](a/one.md)\n")
    await put(hub, admin, "/fs/a/index.md", "# A\n")
    one = await put(hub, admin, "/fs/a/one.md", "---\ntype: Guide\n---\n[gone](two.md)\n")
    await put(hub, admin, "/fs/a/two.md", "---\ntype: Guide\n---\nhi\n")

    async def same_as_fresh() -> list[dict[str, Any]]:
        seen = await lint_of(hub, admin)
        fresh = BundleService(hub.kb.core, hub.kb.files)
        assert seen == (await fresh.walk("web")).lint()
        return seen

    await same_as_fresh()
    await put(hub, admin, "/fs/a/index.md", "[one](one.md)\n")  # write
    assert not [f for f in await same_as_fresh() if f["code"] == "missing_index_entry" and f["path"] == "/fs/a/one.md"]
    await hub.kb.review(admin, req(models.KbReview, path="/fs/a/one.md"))  # review
    await same_as_fresh()
    await hub.kb.revert(admin, req(models.KbRevert, path="/fs/a/one.md", version=one["version"]))  # revert
    await same_as_fresh()
    await hub.kb.delete(admin, req(models.KbDelete, path="/fs/a/two.md"))  # delete
    assert any(f["code"] == "broken_link" for f in await same_as_fresh())


async def test_the_writer_leaves_checkpoints_to_the_background(
    hub: Hub, admin: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(files, "CHECKPOINT_EVERY", 5)
    await put(hub, admin, "/fs/a.md", "first")
    path = kb_file(hub)
    async with hub.kb.files.pool.use("web") as actor:
        pragma = await actor.execute(lambda conn: conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0])
    assert pragma == files.WRITER_AUTOCHECKPOINT
    before = hub.kb.files.checkpoints
    for n in range(9):
        await put(hub, admin, "/fs/a.md", f"version {n} " + "x" * 3000)
    # 11 commands (the pragma read is one): two rounds of five
    await wait_until(lambda: hub.kb.files.checkpoints >= before + 2, "two background checkpoints")
    # Everything the log held was copied into the file: a reader of the file alone sees the page.
    assert files.checkpoint(path) is not None
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        assert conn.execute("PRAGMA wal_checkpoint").fetchone()[0] == 0
        assert conn.execute("SELECT COUNT(*) FROM log").fetchone()[0] == 10
    finally:
        conn.close()


def test_a_checkpoint_of_a_removed_file_creates_nothing(tmp_path: Path) -> None:
    gone = tmp_path / "kb" / "gone.db"
    assert files.checkpoint(gone) is None
    assert not gone.exists() and not gone.parent.exists()
