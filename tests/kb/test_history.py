"""Review, revert, promote, history, versions and forget through the service, each rule at its
edge; refusals leave the pages, the log, the kept bytes and the feed as they were."""

from __future__ import annotations

import orjson
import pytest

from hubcore.caller import Caller
from hubcore.clock import FakeClock
from hubcore.errors import HubError
from hubcore.hub import Hub
from hubcore.services.kb import models
from hubcore.store import kb as kb_store
from tests.kb.support import get, kb_events, kb_rows, page, put, req, state
from tests.kb.test_pages import refused
from tests.requests import a_brain_put, a_session_start

pytestmark = pytest.mark.anyio


async def test_review_appends_a_human_entry_and_changes_no_other_byte(
    hub: Hub, alice: Caller, admin: Caller, clock: FakeClock
) -> None:
    content = page("Alpha", "# Alpha\n\nText   with  spacing.\n", verified="\n  - by: bot\n    at: x")
    content = content.replace("verified: \n", "verified:\n")
    wrote = await put(hub, alice, "/fs/a.md", content)
    reviewed = await hub.kb.review(
        admin, req(models.KbReview, path="/fs/a.md", if_version=wrote["version"], verified_by="human")
    )
    after = (await get(hub, admin, "/fs/a.md"))["content"]
    assert reviewed == {"ok": True, "path": "/fs/a.md", "version": (await get(hub, admin, "/fs/a.md"))["version"]}
    stamp = "2027-01-15T08:00:00.000Z"
    assert after == content.replace("    at: x\n", f"    at: x\n  - by: human\n    at: {stamp}\n")
    assert kb_rows(hub, "SELECT op, actor, verifies FROM log ORDER BY id")[-1] == ("kb.review", "human", 1)
    assert orjson.loads(kb_events(hub)[-1][2]) == {"action": "kb_reviewed", "path": "/fs/a.md", "verified_by": "human"}


async def test_review_refusals(hub: Hub, alice: Caller, admin: Caller) -> None:
    wrote = await put(hub, alice, "/fs/a.md", page())
    await put(hub, alice, "/fs/bad.md", "---\ntitle: [unclosed\n---\nbody\n")
    await refused(hub, "forbidden", hub.kb.review(alice, req(models.KbReview, path="/fs/a.md")))
    await refused(hub, "not_found", hub.kb.review(admin, req(models.KbReview, path="/fs/none.md")))
    await put(hub, alice, "/fs/a.md", page("Changed"))
    await refused(
        hub, "conflict", hub.kb.review(admin, req(models.KbReview, path="/fs/a.md", if_version=wrote["version"]))
    )
    await refused(hub, "invalid_argument", hub.kb.review(admin, req(models.KbReview, path="/fs/bad.md")))
    with pytest.raises(HubError) as err:
        req(models.KbReview, path="/fs/a.md", verified_by="bot")
    assert err.value.code == "invalid_argument"


async def test_revert_writes_a_kept_version_back(hub: Hub, alice: Caller, admin: Caller) -> None:
    one = await put(hub, alice, "/fs/a.md", "one")
    await put(hub, alice, "/fs/a.md", "two")
    reverted = await hub.kb.revert(admin, req(models.KbRevert, path="/fs/a.md", version=one["version"]))
    assert reverted == {
        "ok": True,
        "path": "/fs/a.md",
        "store": "project",
        "version": one["version"],
        "size_bytes": 3,
        "lint": reverted["lint"],
        "warnings": [],
        "changed": True,
    }
    assert [f["code"] for f in reverted["lint"]] == ["missing_frontmatter"]
    assert (await get(hub, alice, "/fs/a.md"))["content"] == "one"
    assert kb_rows(hub, "SELECT op, actor FROM log ORDER BY id")[-1] == ("kb.revert", "human")
    assert orjson.loads(kb_events(hub)[-1][2])["action"] == "kb_reverted"
    # Reverting to the held version writes, logs and signals nothing.
    before = state(hub)
    same = await hub.kb.revert(admin, req(models.KbRevert, path="/fs/a.md", version=one["version"]))
    assert same["changed"] is False and state(hub) == before


async def test_revert_refusals_and_absent_restores_only_while_gone(hub: Hub, alice: Caller) -> None:
    one = await put(hub, alice, "/fs/a.md", "one")
    two = await put(hub, alice, "/fs/a.md", "two")
    await refused(
        hub, "not_found", hub.kb.revert(alice, req(models.KbRevert, path="/fs/a.md", version="sha256:" + "4" * 64))
    )
    await refused(hub, "not_found", hub.kb.revert(alice, req(models.KbRevert, path="/fs/b.md", version=one["version"])))
    await refused(
        hub,
        "conflict",
        hub.kb.revert(alice, req(models.KbRevert, path="/fs/a.md", version=one["version"], if_version="absent")),
    )
    await hub.kb.delete(alice, req(models.KbDelete, path="/fs/a.md"))
    restored = await hub.kb.revert(
        alice, req(models.KbRevert, path="/fs/a.md", version=two["version"], if_version="absent")
    )
    assert restored["changed"] and (await get(hub, alice, "/fs/a.md"))["content"] == "two"
    await refused(
        hub,
        "conflict",
        hub.kb.revert(alice, req(models.KbRevert, path="/fs/a.md", version=one["version"], if_version="absent")),
    )


async def test_promote_copies_a_brain_entry_citing_its_session(hub: Hub, alice: Caller, admin: Caller) -> None:
    session = await hub.sessions.start(alice, a_session_start("web", "research"))
    sid = session["session_id"]
    await hub.brains.write_entry(
        alice, a_brain_put(path="/fs/notes.md", content="# Notes\nFound it.\n", store="session", session_id=sid)
    )
    promoted = await hub.kb.promote(
        alice,
        req(
            models.KbPromote,
            from_session_id=sid,
            from_path="/fs/notes.md",
            to_path="/fs/guide/notes.md",
            type="Guide",
            title="Notes",
            tags=["research"],
        ),
    )
    content = (await get(hub, admin, "/fs/guide/notes.md"))["content"]
    assert promoted == {"ok": True, "path": "/fs/guide/notes.md", "version": promoted["version"], "lint": []}
    assert content.endswith("---\n# Notes\nFound it.\n")
    assert "type: Guide" in content and "title: Notes" in content and "research" in content
    assert f"resource: hub://brain/{sid}/fs/notes.md" in content and "research: /fs/notes.md" in content
    assert kb_rows(hub, "SELECT op, actor FROM log") == [("kb.promote", "alice")]
    assert orjson.loads(kb_events(hub)[-1][2]) == {
        "action": "kb_promoted",
        "path": "/fs/guide/notes.md",
        "from_session_id": sid,
        "from_path": "/fs/notes.md",
    }
    await refused(
        hub,
        "not_found",
        hub.kb.promote(
            alice, req(models.KbPromote, from_session_id="ses_none", from_path="/fs/notes.md", to_path="/fs/x.md")
        ),
    )
    await refused(
        hub,
        "not_found",
        hub.kb.promote(alice, req(models.KbPromote, from_session_id=sid, from_path="/fs/none.md", to_path="/fs/x.md")),
    )
    await refused(
        hub,
        "conflict",
        hub.kb.promote(
            alice,
            req(
                models.KbPromote,
                from_session_id=sid,
                from_path="/fs/notes.md",
                to_path="/fs/guide/notes.md",
                if_version="absent",
            ),
        ),
    )
    await hub.brains.write_entry(
        alice, a_brain_put(path="/fs/bad.md", content="---\ntitle: [open\n---\nx\n", store="session", session_id=sid)
    )
    await refused(
        hub,
        "invalid_argument",
        hub.kb.promote(alice, req(models.KbPromote, from_session_id=sid, from_path="/fs/bad.md", to_path="/fs/bad.md")),
    )
    await refused(
        hub,
        "not_found",
        hub.kb.promote(
            alice,
            req(
                models.KbPromote, project_id="vault", from_session_id=sid, from_path="/fs/notes.md", to_path="/fs/x.md"
            ),
        ),
        project_id="vault",
    )


async def test_history_filters_pages_and_counts(hub: Hub, alice: Caller, admin: Caller) -> None:
    for i in range(3):
        await put(hub, alice, f"/fs/a/{i}.md", f"v{i}")
    await put(hub, admin, "/fs/b.md", "b")
    await hub.kb.delete(admin, req(models.KbDelete, path="/fs/b.md"))
    everything = await hub.kb.history(alice, req(models.KbHistory))
    assert [(r["op"], r["path"], r["actor"]) for r in everything["rows"]] == [
        ("kb.delete", "/fs/b.md", "human"),
        ("kb.put", "/fs/b.md", "human"),
        ("kb.put", "/fs/a/2.md", "alice"),
        ("kb.put", "/fs/a/1.md", "alice"),
        ("kb.put", "/fs/a/0.md", "alice"),
    ]
    assert everything["total"] == 5 and everything["next_before"] is None and not everything["truncated"]
    first = await hub.kb.history(alice, req(models.KbHistory, prefix="/fs/a", limit=2))
    assert [r["path"] for r in first["rows"]] == ["/fs/a/2.md", "/fs/a/1.md"] and first["truncated"]
    rest = await hub.kb.history(alice, req(models.KbHistory, prefix="/fs/a", limit=2, before=first["next_before"]))
    assert [r["path"] for r in rest["rows"]] == ["/fs/a/0.md"] and not rest["truncated"]
    assert (await hub.kb.history(alice, req(models.KbHistory, actor="human")))["total"] == 2
    assert (await hub.kb.history(alice, req(models.KbHistory, op="kb.delete")))["total"] == 1
    count = await hub.kb.history(alice, req(models.KbHistory, path="/fs/b.md", limit=0))
    assert count == {"rows": [], "total": 2, "next_before": None, "truncated": False}
    await refused(hub, "not_found", hub.kb.history(alice, req(models.KbHistory, path="/fs/never.md")))
    for bad in ({"limit": 201}, {"limit": -1}, {"op": "kb.move"}, {"before": 0}):
        with pytest.raises(HubError) as err:
            req(models.KbHistory, **bad)
        assert err.value.code == "invalid_argument"


async def test_versions_say_what_is_kept_and_current(hub: Hub, alice: Caller) -> None:
    one = await put(hub, alice, "/fs/a.md", "---\ntitle: First\n---\nx\n")
    two = await put(hub, alice, "/fs/a.md", "# Second\n")
    listed = await hub.kb.versions(alice, req(models.KbVersions, path="/fs/a.md"))
    assert listed["current_version"] == two["version"] and listed["total"] == 2
    assert [(v["op"], v["version"], v["summary"], v["kept"], v["current"]) for v in listed["versions"]] == [
        ("kb.put", two["version"], "Second", True, True),
        ("kb.put", one["version"], "First", True, False),
    ]
    await hub.kb.delete(alice, req(models.KbDelete, path="/fs/a.md"))
    gone = await hub.kb.versions(alice, req(models.KbVersions, path="/fs/a.md", limit=1))
    assert gone["current_version"] is None and gone["truncated"] and gone["next_before"] == gone["versions"][0]["id"]
    assert {k: gone["versions"][0][k] for k in ("op", "version", "size_bytes", "current")} == {
        "op": "kb.delete",
        "version": None,
        "size_bytes": None,
        "current": False,
    }
    await refused(hub, "not_found", hub.kb.versions(alice, req(models.KbVersions, path="/fs/never.md")))


async def test_forget_keeps_the_held_version_and_records_its_counts_first(
    hub: Hub, alice: Caller, admin: Caller
) -> None:
    one = await put(hub, alice, "/fs/a.md", "one")
    await put(hub, alice, "/fs/a.md", "two")
    three = await put(hub, alice, "/fs/a.md", "three")
    await put(hub, alice, "/fs/copy.md", "one")  # the same bytes elsewhere stay kept
    await refused(hub, "forbidden", hub.kb.forget(alice, req(models.KbForget, path="/fs/a.md")))
    await refused(hub, "not_found", hub.kb.forget(admin, req(models.KbForget, path="/fs/never.md")))
    forgot = await hub.kb.forget(admin, req(models.KbForget, path="/fs/a.md"))
    assert forgot == {
        "ok": True,
        "path": "/fs/a.md",
        "versions_forgotten": 2,
        "bytes_forgotten": 6,
        "unreferenced_forgotten": 1,
    }
    kind, actor, payload = kb_events(hub)[-1]
    assert (kind, actor, orjson.loads(payload)) == (
        "system",
        "human",
        {
            "action": "kb_history_forgotten",
            "path": "/fs/a.md",
            "versions_forgotten": 2,
            "bytes_forgotten": 6,
            "unreferenced_forgotten": 1,
        },
    )
    await refused(hub, "not_found", get(hub, admin, "/fs/a.md", version=one["version"]))
    assert (await get(hub, admin, "/fs/a.md", version=three["version"]))["current"]
    assert (await get(hub, admin, "/fs/copy.md"))["content"] == "one"
    kept = [v["kept"] for v in (await hub.kb.versions(admin, req(models.KbVersions, path="/fs/a.md")))["versions"]]
    assert kept == [True, False, False]
    # A deleted page forgets every version.
    await hub.kb.delete(admin, req(models.KbDelete, path="/fs/a.md"))
    assert (await hub.kb.forget(admin, req(models.KbForget, path="/fs/a.md")))["versions_forgotten"] == 1
    assert kb_rows(hub, "SELECT COUNT(*) FROM blobs") == [(1,)]  # only copy.md's bytes remain


async def test_a_failed_forget_is_rolled_back_and_recorded(
    hub: Hub, alice: Caller, admin: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    await put(hub, alice, "/fs/a.md", "one")
    await put(hub, alice, "/fs/a.md", "two")

    def broken(conn: object, rows: object) -> None:
        raise OSError("disk gone")

    monkeypatch.setattr(kb_store, "forget_rows", broken)
    blobs = kb_rows(hub, "SELECT version FROM blobs")
    with pytest.raises(OSError):
        await hub.kb.forget(admin, req(models.KbForget, path="/fs/a.md"))
    assert kb_rows(hub, "SELECT version FROM blobs") == blobs
    assert [orjson.loads(p)["action"] for k, _, p in kb_events(hub) if k == "system"] == [
        "kb_history_forgotten",
        "kb_history_forget_rolled_back",
    ]
