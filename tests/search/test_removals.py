"""Removal paths the search index must follow at the level where they happen: an event removed by
`events.remove_events` (an abandoned enrolment request's), a project delete holding every family
(no document, FTS row or mark left), and artifacts changed behind the index healed on start."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from hubcore.config import HubSettings
from hubcore.hub import Hub
from hubcore.services import events as ev
from hubcore.services.artifacts import ArtifactPublish, ArtifactUpdate
from hubcore.services.requests import parse
from tests.harness import ADMIN, HubClient, hub_client
from tests.kb.support import put as kb_put
from tests.requests import a_brain_put, a_session_end, a_session_start, a_signal
from tests.search.conftest import ADMIN_CALLER, ALICE, hits, search

pytestmark = pytest.mark.anyio


def counts(data: Path) -> dict[str, int]:
    """What the index holds: documents, FTS rows, marks, and FTS rows without a document."""
    conn = sqlite3.connect(f"file:{data / 'hub.db'}?mode=ro", uri=True)
    try:
        one = lambda sql: int(conn.execute(sql).fetchone()[0])  # noqa: E731
        return {
            "docs": one("SELECT COUNT(*) FROM search_docs"),
            "fts": one("SELECT COUNT(*) FROM search_fts"),
            "marks": one("SELECT COUNT(*) FROM search_marks"),
            "orphans": one("SELECT COUNT(*) FROM search_fts WHERE rowid NOT IN (SELECT id FROM search_docs)"),
        }
    finally:
        conn.close()


def feed_docs(data: Path, event_id: str) -> int:
    conn = sqlite3.connect(f"file:{data / 'hub.db'}?mode=ro", uri=True)
    try:
        return int(
            conn.execute("SELECT COUNT(*) FROM search_docs WHERE family = 'feed' AND key = ?", (event_id,)).fetchone()[
                0
            ]
        )
    finally:
        conn.close()


async def publish(hub: Hub, project: str, content: str) -> dict[str, Any]:
    return await hub.artifacts.publish_artifact(
        ALICE, parse(ArtifactPublish, {"project_id": project, "title": "Notes", "kind": "markdown", "content": content})
    )


async def test_remove_events_takes_the_events_search_rows_in_its_own_command(hub: Hub, settings: HubSettings) -> None:
    kept = await hub.posts.signal_append(ALICE, a_signal(project_id="web", summary="lemur kept"))
    gone = await hub.posts.signal_append(ALICE, a_signal(project_id="web", summary="lemur request"))
    assert len(hits(await search(hub, ALICE, "lemur"))) == 2  # both indexed
    before = counts(settings.data_path)
    removed = await hub.core.store.execute(lambda conn: ev.remove_events(conn, [gone["event_id"]]))
    assert removed == 1
    assert feed_docs(settings.data_path, gone["event_id"]) == 0  # before any search runs
    after = counts(settings.data_path)
    assert (after["docs"], after["fts"], after["orphans"]) == (before["docs"] - 1, before["fts"] - 1, 0)
    assert [h["event_id"] for h in hits(await search(hub, ALICE, "lemur"))] == [kept["event_id"]]


async def test_an_event_removed_before_it_was_indexed_is_never_indexed(hub: Hub, settings: HubSettings) -> None:
    await search(hub, ALICE, "warmup")  # the start's reconcile is done
    gone = await hub.posts.signal_append(ALICE, a_signal(project_id="web", summary="loris request"))
    await hub.core.store.execute(lambda conn: ev.remove_events(conn, [gone["event_id"]]))
    assert hits(await search(hub, ALICE, "loris")) == []
    assert feed_docs(settings.data_path, gone["event_id"]) == 0


async def test_project_delete_leaves_no_document_row_or_mark(
    client: HubClient, hub: Hub, settings: HubSettings
) -> None:
    await search(hub, ALICE, "warmup")
    empty = counts(settings.data_path)
    await client.make_project("doomed")
    await hub.posts.signal_append(ALICE, a_signal(project_id="doomed", summary="okapi"))
    s = await hub.sessions.start(ALICE, a_session_start("doomed", "t"))
    await hub.brains.write_entry(
        ALICE, a_brain_put(path="/kv/a", content="okapi", store="session", session_id=s["session_id"])
    )
    await kb_put(hub, ALICE, "/fs/o.md", "---\ntype: Concept\n---\nokapi\n", project_id="doomed")
    await publish(hub, "doomed", "okapi notes")
    found = await search(hub, ADMIN_CALLER, "okapi")
    assert {h["type"] for h in hits(found)} == {"feed", "brain", "kb", "artifact"}
    await hub.sessions.end(ALICE, a_session_end(session_id=s["session_id"]))
    assert (await client.delete("/api/v1/projects/doomed", headers=ADMIN)).status_code == 204
    assert hits(await search(hub, ADMIN_CALLER, "okapi")) == []
    left = counts(settings.data_path)
    # The hub's own audit events of the delete stay (project "_hub"), and the feed's one mark.
    conn = sqlite3.connect(f"file:{settings.data_path / 'hub.db'}?mode=ro", uri=True)
    try:
        doomed = conn.execute("SELECT COUNT(*) FROM search_docs WHERE project_id = 'doomed'").fetchone()[0]
        marks = [r[0] for r in conn.execute("SELECT source FROM search_marks ORDER BY source")]
    finally:
        conn.close()
    assert doomed == 0 and left["orphans"] == 0
    assert marks == [m for m in marks if not m.startswith(("brain:", "kb:doomed", "artifact:"))]
    assert left["marks"] <= empty["marks"] + 1


async def test_artifacts_changed_behind_the_index_are_healed_on_start(settings: HubSettings) -> None:
    async with hub_client(settings) as client:
        await client.make_agent("alice")
        await client.make_project("web")
        hub = client.app.hub
        old = await publish(hub, "web", "old wombat")
        doomed = await publish(hub, "web", "doomed wombat")
        assert len(hits(await search(hub, ALICE, "wombat"))) == 2
        # The crash: the sources change and the hub dies before indexing (the in-memory notes are lost).
        await hub.search_index._lock.acquire()
        await hub.artifacts.update(
            ALICE, parse(ArtifactUpdate, {"artifact_id": old["artifact_id"], "content": "new numbat"})
        )
        fresh = await publish(hub, "web", "fresh numbat")
        for part in hub.parts:
            part.search_touched()
        hub.search_index._lock.release()
        assert hits(await search(hub, ALICE, "numbat")) == []  # nothing noted: this hub cannot know
        conn = sqlite3.connect(settings.data_path / "hub.db")  # and a row removed behind the index
        try:
            with conn:
                conn.execute("DELETE FROM artifacts WHERE id = ?", (doomed["artifact_id"],))
        finally:
            conn.close()
    async with hub_client(settings) as client:
        hub = client.app.hub
        found = [(h["artifact_id"], h["version"]) for h in hits(await search(hub, ALICE, "numbat"))]
        assert sorted(found) == sorted([(old["artifact_id"], 2), (fresh["artifact_id"], 1)])
        assert hits(await search(hub, ALICE, "wombat")) == []
