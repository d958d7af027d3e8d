"""Search never shows a caller what it may not see: no hit, count or snippet from a confidential
project without a grant, nor from a pruned session; scopes it may not see are missing."""

from __future__ import annotations

import pytest

from hubcore.errors import HubError
from hubcore.hub import Hub
from tests.harness import ADMIN, HubClient
from tests.kb.support import put as kb_put
from tests.requests import a_brain_put, a_session_end, a_session_start, a_signal
from tests.search.conftest import ADMIN_CALLER, ALICE, BOB, hits, search

pytestmark = pytest.mark.anyio


async def fill(hub: Hub, project: str, word: str) -> str:
    """A signal, a brain entry and a page carrying `word` in `project`; the session's id."""
    who = BOB if project == "vault" else ALICE
    await hub.posts.signal_append(
        who,
        a_signal(
            project_id=project,
            summary=f"{word} summary",
            payload={"body": f"the {word} body", "deep": {"k": [f"{word}x"]}},
        ),
    )
    s = await hub.sessions.start(who, a_session_start(project, f"{word}-task"))
    await hub.brains.write_entry(
        who, a_brain_put(path="/fs/plan.md", content=f"plan for {word}", store="session", session_id=s["session_id"])
    )
    await kb_put(hub, who, f"/fs/{word}.md", f"---\ntype: Concept\n---\n{word} page\n", project_id=project)
    return str(s["session_id"])


async def test_confidential_project_gives_no_hit_count_or_snippet_without_a_grant(hub: Hub) -> None:
    await fill(hub, "vault", "zebra")
    await fill(hub, "web", "yak")
    mine = await search(hub, ALICE, "zebra")
    assert mine["count"] == 0 and mine["groups"] == [] and mine["truncated"] is False
    assert hits(await search(hub, ALICE, "zeb")) == [] and (await search(hub, ALICE, "zebra yak"))["count"] == 0
    granted = await search(hub, BOB, "zebra")
    assert {h["type"] for h in hits(granted)} == {"feed", "brain", "kb"}
    assert all(h["project_id"] == "vault" for h in hits(granted))
    assert (await search(hub, ADMIN_CALLER, "zebra"))["count"] == granted["count"]
    for scoped in ({"project": "vault"}, {"scope": "project", "project": "vault"}):
        with pytest.raises(HubError) as caught:
            await search(hub, ALICE, "zebra", **scoped)
        assert caught.value.code == "not_found"


async def test_a_session_alice_cannot_see_is_missing(hub: Hub) -> None:
    sid = await fill(hub, "vault", "zebra")
    with pytest.raises(HubError) as caught:
        await search(hub, ALICE, "zebra", session_id=sid)
    assert caught.value.code == "not_found"
    own = hits(await search(hub, BOB, "zebra", session_id=sid))
    assert "brain" in {h["type"] for h in own} and all(h["session_id"] == sid for h in own)


async def test_hit_fields_and_snippets(hub: Hub) -> None:
    sid = await fill(hub, "web", "yak")
    found = await search(hub, ALICE, "yak")
    by_type = {h["type"]: h for h in hits(found)}
    feed = next(h for h in hits(found) if h["type"] == "feed" and h["event_kind"] == "signal")
    assert feed["snippet"] == "the yak body" and feed["actor"] == "alice"
    assert feed["project_display_name"] == "The web"
    brain = by_type["brain"]
    assert (brain["session_id"], brain["path"], brain["session_name"], brain["session_status"]) == (
        sid,
        "/fs/plan.md",
        "yak-task",
        "active",
    )
    assert brain["snippet"] == "plan for yak"
    assert by_type["kb"]["path"] == "/fs/yak.md" and by_type["kb"]["snippet"] == "yak page"
    assert found["count"] == len(hits(found)) and found["backend"] == "fts" and found["took_ms"] >= 0
    nested = await search(hub, ALICE, "yakx")  # the whole payload is indexed, not only the body
    assert [h["type"] for h in hits(nested)] == ["feed"] and nested["groups"][0]["hits"][0]["snippet"] == "the yak body"


async def test_snippet_is_at_most_200_characters_of_plain_text(hub: Hub) -> None:
    body = "word " * 300
    await hub.posts.signal_append(ALICE, a_signal(project_id="web", summary="s", payload={"body": body}))
    await hub.posts.signal_append(
        ALICE, a_signal(project_id="web", summary="no string body word", payload={"body": {"x": 1}})
    )
    found = hits(await search(hub, ALICE, "word"))
    assert all(len(h["snippet"]) <= 200 for h in found)
    assert {h["snippet"] for h in found} >= {"no string body word"}
    assert not any("{" in h["snippet"] for h in found)


async def test_pruned_session_gives_no_hit_until_undone(client: HubClient, hub: Hub) -> None:
    s = await hub.sessions.start(ALICE, a_session_start("web", "gone"))
    sid = s["session_id"]
    await hub.brains.write_entry(ALICE, a_brain_put(path="/kv/n", content="quokka", store="session", session_id=sid))
    await hub.posts.signal_append(ALICE, a_signal(project_id="web", summary="quokka seen", session_id=sid))
    await hub.sessions.end(ALICE, a_session_end(session_id=sid, handoff="bye"))
    assert {h["type"] for h in hits(await search(hub, ALICE, "quokka"))} == {"brain", "feed"}
    r = await client.delete(f"/api/v1/storage/sessions/{sid}", headers=ADMIN)
    token = r.json()["pruned"][0]["undo_token"]
    for who in (ALICE, ADMIN_CALLER):
        pruned = await search(hub, who, "quokka")
        assert not any(h.get("session_id") == sid for h in hits(pruned))
    with pytest.raises(HubError):
        await search(hub, ALICE, "quokka", session_id=sid)
    assert (await client.post(f"/api/v1/prune/undo/{token}", headers=ADMIN)).status_code == 200
    assert {h["type"] for h in hits(await search(hub, ALICE, "quokka", session_id=sid))} == {"brain", "feed"}
