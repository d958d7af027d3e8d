"""The artifacts family of the search index: each artifact's current version (title, description,
text; an HTML artifact's visible text; a protected one's title only, never its ciphertext), the
hit's `artifact_id`, `version`, `size_bytes` and `project_display_name`, visibility on both
surfaces, and no hit, row or mark left by a delete."""

from __future__ import annotations

import base64
import sqlite3
from typing import Any

import pytest

from hubcore.caller import Caller
from hubcore.errors import HubError
from hubcore.hub import Hub
from hubcore.services.artifacts import ArtifactDraft, ArtifactPublish, ArtifactRef, ArtifactUpdate
from hubcore.services.requests import parse
from tests.artifacts.support import ENVELOPE
from tests.harness import ADMIN, HubClient
from tests.mcp.live import ERAS, LiveHub, structured
from tests.requests import a_session_end, a_session_start
from tests.search.conftest import ADMIN_CALLER, ALICE, BOB, hits, search

pytestmark = pytest.mark.anyio

PAGE = """<!doctype html><html><head><title>Pelican report</title><style>.gannet { color: red }</style>
<script>const cormorant = 1;</script></head><body><h1>Pelican census</h1><p>The <b>peli</b>can colony grew.</p>
<div data-x="puffin">terns &amp; skuas</div></body></html>"""
SECRET = base64.b64encode(b"albatross-ciphertext-bytes-" * 3).decode()


async def publish(hub: Hub, who: Caller, **members: Any) -> dict[str, Any]:
    body = {"project_id": "web", "title": "Seabirds", "kind": "html", "content": PAGE, **members}
    return await hub.artifacts.publish_artifact(who, parse(ArtifactPublish, body))


def index_state(hub: Hub, artifact_id: str) -> tuple[int, int, int]:
    """One artifact's search documents, FTS rows without a document, and its index mark."""
    conn = sqlite3.connect(f"file:{hub.data_dir / 'hub.db'}?mode=ro", uri=True)
    try:
        docs = conn.execute(
            "SELECT COUNT(*) FROM search_docs WHERE family = 'artifact' AND key = ?", (artifact_id,)
        ).fetchone()[0]
        orphans = conn.execute(
            "SELECT COUNT(*) FROM search_fts WHERE rowid NOT IN (SELECT id FROM search_docs)"
        ).fetchone()[0]
        marks = conn.execute(
            "SELECT COUNT(*) FROM search_marks WHERE source = ?", (f"artifact:{artifact_id}",)
        ).fetchone()[0]
        return int(docs), int(orphans), int(marks)
    finally:
        conn.close()


def artifact_hits(result: dict[str, Any]) -> list[dict[str, Any]]:
    return [h for h in hits(result) if h["type"] == "artifact"]


async def test_an_html_artifact_is_indexed_by_its_visible_text(hub: Hub) -> None:
    made = await publish(hub, ALICE, description="yearly count")
    found = artifact_hits(await search(hub, ALICE, "pelican colony"))
    assert len(found) == 1
    hit = found[0]
    assert (hit["artifact_id"], hit["version"], hit["size_bytes"]) == (made["artifact_id"], 1, len(PAGE.encode()))
    assert hit["project_id"] == "web" and hit["project_display_name"] == "The web"
    assert hit["snippet"].startswith("Seabirds yearly count Pelican report Pelican census The pelican colony grew.")
    assert "<" not in hit["snippet"] and len(hit["snippet"]) <= 200
    for word in ("terns", "skuas", "census", "yearly"):  # the text and the description
        assert len(artifact_hits(await search(hub, ALICE, word))) == 1, word
    for word in ("gannet", "cormorant", "puffin", "doctype", "div"):  # style, script, attributes, markup
        assert artifact_hits(await search(hub, ALICE, word)) == [], word


async def test_a_markdown_artifact_and_a_long_one(hub: Hub) -> None:
    text = "# Heron plan\n\n" + "heron wading " * 200 + "\n\nfinal egret line\n"
    await publish(hub, ALICE, title="", kind="markdown", content=text)
    hit = artifact_hits(await search(hub, ALICE, "egret"))[0]
    assert hit["snippet"].startswith("Heron plan # Heron plan heron wading") and len(hit["snippet"]) <= 200
    assert hit["snippet"].endswith("…") and hit["size_bytes"] == len(text.encode())


async def test_a_diff_is_indexed_by_its_paths_and_changed_lines(hub: Hub) -> None:
    diff = (
        "--- a/birds/osprey_nest.py\n+++ b/birds/osprey_nest.py\n@@ -1,3 +1,3 @@\n unchanged_kittiwake\n"
        "-removed_shearwater\n+added_guillemot\n trailing_fulmar\n"
    )
    made = await publish(hub, ALICE, kind="diff", content=diff)
    for word in ("osprey_nest", "removed_shearwater", "added_guillemot"):
        assert [h["artifact_id"] for h in artifact_hits(await search(hub, ALICE, word))] == [made["artifact_id"]]
    for word in ("unchanged_kittiwake", "trailing_fulmar"):  # context lines are not the change
        assert artifact_hits(await search(hub, ALICE, word)) == [], word


async def test_update_indexes_the_new_version_and_a_draft_leaves_the_current_one(hub: Hub) -> None:
    made = await publish(hub, ALICE)
    aid = made["artifact_id"]
    await hub.artifacts.update(ALICE, parse(ArtifactUpdate, {"artifact_id": aid, "content": "<p>flamingo</p>"}))
    assert artifact_hits(await search(hub, ALICE, "pelican")) == []
    hit = artifact_hits(await search(hub, ALICE, "flamingo"))[0]
    assert (hit["version"], hit["size_bytes"]) == (2, len(b"<p>flamingo</p>"))
    await hub.artifacts.draft(ALICE, parse(ArtifactDraft, {"artifact_id": aid, "content": "<p>kestrel</p>"}))
    assert artifact_hits(await search(hub, ALICE, "kestrel")) == []  # a draft is not the current version
    assert artifact_hits(await search(hub, ALICE, "flamingo"))[0]["version"] == 2
    await hub.artifacts.update(ALICE, parse(ArtifactUpdate, {"artifact_id": aid, "content": "<p>kestrel</p>"}))
    assert [h["version"] for h in artifact_hits(await search(hub, ALICE, "kestrel"))] == [4]
    assert index_state(hub, aid) == (1, 0, 1)


async def test_a_protected_artifact_is_found_by_its_title_only(hub: Hub) -> None:
    made = await publish(
        hub, ALICE, title="Osprey accounts", description="ledger notes", content=SECRET, envelope=ENVELOPE
    )
    hit = artifact_hits(await search(hub, ALICE, "osprey"))[0]
    assert hit["artifact_id"] == made["artifact_id"] and hit["snippet"] == "Osprey accounts"
    for probe in (SECRET[:12], SECRET, "albatross", "ledger"):
        assert artifact_hits(await search(hub, ADMIN_CALLER, probe)) == [], probe
    conn = sqlite3.connect(f"file:{hub.data_dir / 'hub.db'}?mode=ro", uri=True)
    try:
        stored = conn.execute(
            "SELECT d.snippet, d.meta, f.body FROM search_docs d JOIN search_fts f ON f.rowid = d.id "
            "WHERE d.family = 'artifact'"
        ).fetchall()
    finally:
        conn.close()
    assert stored and not any(SECRET[:12] in "".join(row) for row in stored)


async def test_delete_leaves_no_hit_row_or_mark(hub: Hub) -> None:
    made = await publish(hub, ALICE)
    aid = made["artifact_id"]
    assert len(artifact_hits(await search(hub, ALICE, "pelican"))) == 1
    assert index_state(hub, aid) == (1, 0, 1)
    await hub.artifacts.delete(ALICE, parse(ArtifactRef, {"artifact_id": aid}))
    assert index_state(hub, aid) == (0, 0, 0)  # in the delete's own command, before any search
    assert artifact_hits(await search(hub, ALICE, "pelican")) == []
    assert index_state(hub, aid) == (0, 0, 0)


async def test_an_artifact_deleted_before_it_was_indexed_leaves_nothing(hub: Hub) -> None:
    made = await publish(hub, ALICE)
    await hub.artifacts.delete(ALICE, parse(ArtifactRef, {"artifact_id": made["artifact_id"]}))
    assert artifact_hits(await search(hub, ALICE, "pelican")) == []
    assert index_state(hub, made["artifact_id"]) == (0, 0, 0)


async def test_a_confidential_projects_artifacts_are_hidden_without_a_grant(hub: Hub) -> None:
    await publish(hub, BOB, project_id="vault", title="Vault seabirds")
    assert (await search(hub, ALICE, "pelican"))["count"] == 0
    assert (await search(hub, ALICE, "vault"))["count"] == 0
    assert (await search(hub, ALICE, "pelican", type="artifact"))["groups"] == []
    with pytest.raises(HubError) as caught:
        await search(hub, ALICE, "pelican", project="vault")
    assert caught.value.code == "not_found"
    assert [h["project_id"] for h in artifact_hits(await search(hub, BOB, "pelican"))] == ["vault"]


async def test_a_pruned_sessions_artifact_stays_findable(client: HubClient, hub: Hub) -> None:
    """A prune never touches artifacts (spec), so an artifact published in a session outlives it."""
    s = await hub.sessions.start(ALICE, a_session_start("web", "birds"))
    await publish(hub, ALICE, session_id=s["session_id"])
    await hub.sessions.end(ALICE, a_session_end(session_id=s["session_id"]))
    r = await client.delete(f"/api/v1/storage/sessions/{s['session_id']}", headers=ADMIN)
    assert r.status_code == 200
    assert len(artifact_hits(await search(hub, ALICE, "pelican"))) == 1


async def test_rest_type_artifact(client: HubClient, hub: Hub) -> None:
    made = await publish(hub, ALICE)
    await publish(hub, BOB, project_id="vault", title="Vault seabirds")
    r = await client.get("/api/v1/search", params={"q": "pelican", "type": "artifact"}, headers=ADMIN)
    assert r.status_code == 200
    body = r.json()
    assert [g["type"] for g in body["groups"]] == ["artifact"] and body["count"] == 2
    web = (await client.get("/api/v1/search", params={"q": "pelican", "project": "web"}, headers=ADMIN)).json()
    assert [(h["artifact_id"], h["version"]) for h in web["groups"][0]["hits"]] == [(made["artifact_id"], 1)]


@pytest.mark.parametrize("mode", ERAS)
async def test_mcp_search_finds_artifacts_it_may_see(live: LiveHub, mode: str) -> None:
    token = await live.make_agent("bot")
    await live.make_project("demo")
    await live.make_project("secret", confidential=True)
    async with live.client(mode=mode) as admin:
        await admin.call_tool(
            "artifact_publish",
            {"project_id": "secret", "title": "Secret lapwing", "kind": "markdown", "content": "lapwing hidden"},
        )
    async with live.client(token, mode=mode) as c:
        made = structured(
            await c.call_tool(
                "artifact_publish",
                {"project_id": "demo", "title": "Lapwing survey", "kind": "markdown", "content": "# Lapwing\n\nplover"},
            )
        )
        found = structured(await c.call_tool("search", {"query": "lapwing", "type": "artifact"}))
        assert found["count"] == 1 and found["groups"][0]["type"] == "artifact"
        hit = found["groups"][0]["hits"][0]
        assert (hit["artifact_id"], hit["version"], hit["project_id"]) == (made["artifact_id"], 1, "demo")
        assert hit["size_bytes"] == len(b"# Lapwing\n\nplover")
        assert structured(await c.call_tool("search", {"query": "hidden"}))["count"] == 0


async def test_an_artifact_whose_body_is_missing_is_indexed_by_title_and_description(hub: Hub) -> None:
    """A damaged blob store (the check reports it) leaves the artifact findable by what hub.db holds."""
    made = await publish(hub, ALICE, title="Shag colony", description="census notes")
    for path in (hub.data_dir / "blobs").rglob("*"):
        if path.is_file():
            path.unlink()
    found = artifact_hits(await search(hub, ALICE, "shag"))
    assert [h["artifact_id"] for h in found] == [made["artifact_id"]]
    assert found[0]["snippet"] == "Shag colony census notes"
    assert artifact_hits(await search(hub, ALICE, "pelican")) == []
