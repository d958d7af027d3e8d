"""The knowledge base in the rest of the hub: the brief's stale pages, project stats, the storage
report, project deletion, the write count, and the derived views served through the service."""

from __future__ import annotations

import pytest

from hubcore.caller import Caller
from hubcore.clock import FakeClock
from hubcore.hub import Hub
from hubcore.services.kb import models
from tests.harness import ADMIN, HubClient
from tests.kb.support import kb_file, page, put, req
from tests.requests import a_brief

pytestmark = pytest.mark.anyio


async def test_stale_pages_in_the_brief(hub: Hub, alice: Caller, clock: FakeClock) -> None:
    # The clock reads 2027-01-15: a page is stale after its stale_after day.
    for day in range(1, 13):
        await put(hub, alice, f"/fs/p{day:02}.md", page(f"Page {day}", stale_after=f"2027-01-{day:02}"))
    await put(hub, alice, "/fs/today.md", page("Today", stale_after="2027-01-15"))
    await put(hub, alice, "/fs/bad.md", page("Bad", stale_after="2027-02-30"))
    await put(hub, alice, "/fs/week.md", page("Week", stale_after="2027-W01-1"))  # ISO, but not YYYY-MM-DD
    await hub.kb.delete(alice, req(models.KbDelete, path="/fs/p01.md"))
    stale = (await hub.brief.brief(alice, a_brief(project_id="web")))["stale_pages"]
    assert [i["path"] for i in stale["items"]] == [f"/fs/p{d:02}.md" for d in range(2, 12)]
    assert stale["more"] == 1
    assert stale["items"][0] == {
        "path": "/fs/p02.md",
        "title": "Page 2",
        "stale_after": "2027-01-02",
        "overdue_days": 13,
        "trust": "unverified",
    }
    clock.advance(86400)
    stale = (await hub.brief.brief(alice, a_brief(project_id="web")))["stale_pages"]
    assert stale["more"] == 2 and "/fs/today.md" not in [i["path"] for i in stale["items"]]
    other = (await hub.brief.brief(alice, a_brief(project_id="space-alice")))["stale_pages"]
    assert other == {"items": [], "more": 0}


async def test_stats_storage_and_the_write_count(client: HubClient, hub: Hub, alice: Caller) -> None:
    before = hub.core.write_count()
    await put(hub, alice, "/fs/a.md", "one")
    await put(hub, alice, "/fs/b.md", "two")
    assert hub.core.write_count() >= before + 2
    stats = (await client.get("/api/v1/projects/web/stats", headers=ADMIN)).json()
    assert stats["kb_pages"] == 2
    storage = (await client.get("/api/v1/storage", headers=ADMIN)).json()
    row = next(r for r in storage["projects"] if r["project_id"] == "web")
    size = kb_file(hub).stat().st_size + kb_file(hub).with_name("web.db-wal").stat().st_size
    assert row["kb_bytes"] == size and storage["by_kind"]["knowledge"] == size
    assert next(r for r in storage["projects"] if r["project_id"] == "vault")["kb_bytes"] == 0


async def test_a_project_delete_removes_its_file(client: HubClient, hub: Hub, alice: Caller) -> None:
    await put(hub, alice, "/fs/a.md", "one")
    assert kb_file(hub).exists()
    r = await client.delete("/api/v1/projects/web", headers=ADMIN)
    assert r.status_code in (200, 204), r.text
    assert not kb_file(hub).exists() and not kb_file(hub).with_name("web.db-wal").exists()
    await client.make_project("web")  # a new project of the same id starts empty
    assert await hub.kb.list(alice, req(models.KbList)) == {"entries": [], "truncated": False}


async def test_the_views_come_from_one_walk_renewed_by_writes(hub: Hub, alice: Caller, clock: FakeClock) -> None:
    await put(hub, alice, "/fs/index.md", page("Home", "[a](a.md)\n", okf_version="1"))
    await put(hub, alice, "/fs/a.md", page("A", "[home](index.md) [self](a.md)\n"))
    lint = await hub.kb.lint(alice, req(models.KbLint))
    assert [(f["code"], f["path"]) for f in lint["findings"]] == [("missing_log", "/fs/log.md")]
    assert lint["checked_at"] == "2027-01-15T08:00:00.000Z"
    walks = hub.kb.cache.walks
    assert await hub.kb.backlinks(alice, req(models.KbBacklinks, path="/fs/a.md")) == [
        {"path": "/fs/index.md", "title": "Home"}
    ]
    assert hub.kb.cache.walks == walks  # the same walk served the next view
    await put(hub, alice, "/fs/log.md", page("Log"))
    assert (await hub.kb.lint(alice, req(models.KbLint)))["findings"] == []  # the log is no concept page
    assert hub.kb.cache.walks == walks + 1  # the write moved the generation
    clock.advance(10)
    await hub.kb.stats(alice, req(models.KbProject))
    assert hub.kb.cache.walks == walks + 2  # ten seconds later the walk was dropped
    await hub.kb.lint(alice, req(models.KbLint, fresh=True))
    assert hub.kb.cache.walks == walks + 3
    await hub.kb.delete(alice, req(models.KbDelete, path="/fs/log.md"))
    stats = await hub.kb.stats(alice, req(models.KbProject))
    assert stats["pages"] == 2 and stats["needs_review"] == {
        "unverified": 2,
        "machine_confirmed": 0,
        "edited_since_review": 0,
        "total": 2,
    }
    assert (stats["last_change_at"], stats["last_change_by"]) == ("2027-01-15T08:00:10.000Z", "alice")
    meta = await hub.kb.list(alice, req(models.KbList, meta=True, limit=1))
    assert [e["path"] for e in meta["entries"]] == ["/fs/a.md"] and meta["truncated"]


async def test_an_unreadable_file_leaves_the_brief_answering(
    hub: Hub, alice: Caller, caplog: pytest.LogCaptureFixture
) -> None:
    await hub.kb.files.remove("web")
    kb_file(hub).parent.mkdir(exist_ok=True)
    kb_file(hub).write_bytes(b"not a database at all" * 100)
    brief = await hub.brief.brief(alice, a_brief(project_id="web"))
    assert brief["stale_pages"] == {"items": [], "more": 0}
    assert "stale pages of project web could not be read" in caplog.text


async def test_a_walk_decodes_only_the_pages_written_since_the_last(hub: Hub, alice: Caller) -> None:
    await put(hub, alice, "/fs/a.md", page("A"))
    await put(hub, alice, "/fs/b.md", page("B"))
    first = {p.path: p for p in (await hub.kb.walk("web")).pages}
    await put(hub, alice, "/fs/b.md", page("B2"))
    await put(hub, alice, "/fs/c.md", page("C"))
    second = {p.path: p for p in (await hub.kb.walk("web")).pages}
    assert second["/fs/a.md"] is first["/fs/a.md"]  # unchanged: the facts decoded before
    assert second["/fs/b.md"].derived.title == "B2" and second["/fs/c.md"].derived.title == "C"
    await hub.kb.delete(alice, req(models.KbDelete, path="/fs/a.md"))
    assert [p.path for p in (await hub.kb.walk("web")).pages] == ["/fs/b.md", "/fs/c.md"]
