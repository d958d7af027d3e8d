"""The index follows its sources: every removal path leaves no hit (and no row) behind, and a
crash between a source's commit and its index update is healed when the hub starts."""

from __future__ import annotations

import functools
import sqlite3
from pathlib import Path

import pytest

from hubcore.clock import FakeClock
from hubcore.config import HubSettings
from hubcore.hub import Hub, hub_migrations
from hubcore.services.kb import models
from hubcore.store import migrations as store_migrations
from tests.harness import ADMIN, HubClient, hub_client
from tests.kb.support import put as kb_put
from tests.kb.support import req
from tests.requests import a_brain_delete, a_brain_put, a_session_end, a_session_start, a_signal
from tests.search.conftest import ADMIN_CALLER, ALICE, hits, search

pytestmark = pytest.mark.anyio

MIGRATIONS = hub_migrations()  # hub.db's chain, gathered from the parts
migrate = functools.partial(store_migrations.migrate, migrations=MIGRATIONS)


def index_rows(data: Path, project_id: str) -> int:
    conn = sqlite3.connect(f"file:{data / 'hub.db'}?mode=ro", uri=True)
    try:
        docs = conn.execute("SELECT COUNT(*) FROM search_docs WHERE project_id = ?", (project_id,)).fetchone()[0]
        orphans = conn.execute(
            "SELECT COUNT(*) FROM search_fts WHERE rowid NOT IN (SELECT id FROM search_docs)"
        ).fetchone()[0]
        return int(docs) + int(orphans)
    finally:
        conn.close()


async def test_brain_entry_delete_and_overwrite_leave_no_hit(hub: Hub) -> None:
    s = await hub.sessions.start(ALICE, a_session_start("web", "t"))
    sid = s["session_id"]
    await hub.brains.write_entry(
        ALICE, a_brain_put(path="/kv/a", content="walrus one", store="session", session_id=sid)
    )
    assert len(hits(await search(hub, ALICE, "walrus", type="brain"))) == 1
    await hub.brains.write_entry(ALICE, a_brain_put(path="/kv/a", content="narwhal", store="session", session_id=sid))
    assert hits(await search(hub, ALICE, "walrus", type="brain")) == []
    assert len(hits(await search(hub, ALICE, "narwhal", type="brain"))) == 1
    await hub.brains.delete_entry(ALICE, a_brain_delete(path="/kv/a", store="session", session_id=sid))
    assert hits(await search(hub, ALICE, "narwhal", type="brain")) == []


async def test_page_delete_and_forget_leave_no_hit(hub: Hub) -> None:
    await kb_put(hub, ALICE, "/fs/walrus.md", "---\ntype: Concept\n---\nwalrus facts\n", project_id="web")
    assert [h["path"] for h in hits(await search(hub, ALICE, "walrus", type="kb"))] == ["/fs/walrus.md"]
    await hub.kb.delete(ALICE, req(models.KbDelete, path="/fs/walrus.md", project_id="web"))
    assert hits(await search(hub, ALICE, "walrus", type="kb")) == []
    await hub.kb.forget(ADMIN_CALLER, req(models.KbForget, path="/fs/walrus.md", project_id="web"))
    assert hits(await search(hub, ADMIN_CALLER, "walrus", type="kb")) == []


async def test_pruned_session_swept_leaves_no_row(client: HubClient, hub: Hub, clock: FakeClock) -> None:
    s = await hub.sessions.start(ALICE, a_session_start("web", "gone"))
    sid = s["session_id"]
    await hub.brains.write_entry(ALICE, a_brain_put(path="/kv/n", content="quokka", store="session", session_id=sid))
    await hub.sessions.end(ALICE, a_session_end(session_id=sid))
    assert len(hits(await search(hub, ADMIN_CALLER, "quokka", type="brain"))) == 1
    await client.delete(f"/api/v1/storage/sessions/{sid}", headers=ADMIN)
    clock.advance(61)
    assert await hub.storage.sweep() == [sid]
    assert hits(await search(hub, ADMIN_CALLER, "quokka", type="brain")) == []
    conn = client.db()
    try:
        assert (
            conn.execute(
                "SELECT COUNT(*) FROM search_docs WHERE session_id = ? AND family = 'brain'", (sid,)
            ).fetchone()[0]
            == 0
        )
    finally:
        conn.close()


async def test_project_delete_leaves_no_hit_and_no_row(client: HubClient, hub: Hub, settings: HubSettings) -> None:
    await client.make_project("doomed")
    await hub.posts.signal_append(ALICE, a_signal(project_id="doomed", summary="ocelot"))
    s = await hub.sessions.start(ALICE, a_session_start("doomed", "t"))
    await hub.brains.write_entry(
        ALICE, a_brain_put(path="/kv/a", content="ocelot", store="session", session_id=s["session_id"])
    )
    await kb_put(hub, ALICE, "/fs/o.md", "---\ntype: Concept\n---\nocelot\n", project_id="doomed")
    assert {h["type"] for h in hits(await search(hub, ADMIN_CALLER, "ocelot"))} == {"feed", "brain", "kb"}
    await hub.sessions.end(ALICE, a_session_end(session_id=s["session_id"]))
    assert (await client.delete("/api/v1/projects/doomed", headers=ADMIN)).status_code == 204
    assert hits(await search(hub, ADMIN_CALLER, "ocelot")) == []
    await hub.search_index.catch_up()
    assert index_rows(settings.data_path, "doomed") == 0


async def test_a_crash_between_commit_and_index_is_healed_on_start(settings: HubSettings) -> None:
    async with hub_client(settings) as client:
        await client.make_agent("alice")
        await client.make_project("web")
        hub = client.app.hub
        s = await hub.sessions.start(ALICE, a_session_start("web", "t"))
        sid = s["session_id"]
        await hub.brains.write_entry(
            ALICE, a_brain_put(path="/kv/a", content="old capybara", store="session", session_id=sid)
        )
        await kb_put(hub, ALICE, "/fs/p.md", "---\ntype: Concept\n---\nold capybara\n", project_id="web")
        assert len(hits(await search(hub, ALICE, "capybara"))) >= 2
        # The crash: the sources change and the hub dies before indexing (the in-memory notes are lost).
        await hub.search_index._lock.acquire()  # the indexer may not run past this point
        await hub.brains.write_entry(
            ALICE, a_brain_put(path="/kv/a", content="new tapir", store="session", session_id=sid)
        )
        await kb_put(hub, ALICE, "/fs/p.md", "---\ntype: Concept\n---\nnew tapir\n", project_id="web")
        await hub.posts.signal_append(ALICE, a_signal(project_id="web", summary="tapir sighted"))
        for part in hub.parts:
            part.search_touched()
        hub.search_index._lock.release()
        assert hits(await search(hub, ALICE, "tapir")) == []  # nothing noted: this hub cannot know
    async with hub_client(settings) as client:
        hub = client.app.hub
        found = await search(hub, ALICE, "tapir")
        assert {h["type"] for h in hits(found)} == {"feed", "brain", "kb"}
        assert not any("capybara" in h["snippet"] for h in hits(await search(hub, ALICE, "capybara")))


def test_the_index_merges_its_segments_sixteen_at_a_time(tmp_path: Path) -> None:
    """Migration v11: FTS5's `automerge` at 16 (its default 4 made merging most of indexing's
    cost at a million documents), kept in the index's own config table; v12 keeps it."""
    db = tmp_path / "hub.db"
    migrate(db, now=1_800_000_000.0, migrations=MIGRATIONS[:10])
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT v FROM search_fts_config WHERE k = 'automerge'").fetchone() is None
    migrate(db, now=1_800_000_000.0, migrations=MIGRATIONS[:11])
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT v FROM search_fts_config WHERE k = 'automerge'").fetchone() == (16,)
    migrate(db, now=1_800_000_000.0)
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT v FROM search_fts_config WHERE k = 'automerge'").fetchone() == (16,)


def test_the_index_is_rebuilt_with_four_character_prefixes_and_its_terms(tmp_path: Path) -> None:
    """Migration v12: the index's rows copied under their ids into a table with a prefix index
    of 4 characters, `search_terms` filled from its vocabulary (tokens as the index made them:
    folded, lower case), and the removal triggers still at work."""
    db = tmp_path / "hub.db"
    migrate(db, now=1_800_000_000.0, migrations=MIGRATIONS[:11])
    with sqlite3.connect(db) as conn:
        conn.execute("INSERT INTO search_fts (rowid, body) VALUES (7, 'Héron otters'), (9, 'heronry 2026')")
    migrate(db, now=1_800_000_000.0)
    with sqlite3.connect(db) as conn:
        sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'search_fts'").fetchone()[0]
        assert "prefix = '1 2 3 4'" in sql
        terms = [r[0] for r in conn.execute("SELECT term FROM search_terms ORDER BY term")]
        assert terms == ["2026", "heron", "heronry", "otters"]
        assert conn.execute(
            "SELECT rowid FROM search_fts WHERE search_fts MATCH 'hero*' ORDER BY rowid"
        ).fetchall() == [(7,), (9,)]
        triggers = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
        assert {"search_event_gone", "search_artifact_gone"} <= triggers
