"""The artifact service (`hub.artifacts`): publish, update, draft and the live states, reads, delete,
protection and the password policy, idempotency, events and stream changes, the part's share of
stats, storage and project deletion. Every refusal leaves rows, events, keys and blobs unchanged."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from hubcore.caller import Caller
from hubcore.clock import FakeClock
from hubcore.errors import HubError
from hubcore.hub import Hub
from hubcore.services.artifacts import (
    ArtifactDraft,
    ArtifactGet,
    ArtifactList,
    ArtifactPublish,
    ArtifactRef,
    ArtifactUpdate,
)
from hubcore.services.artifacts.models import DESCRIPTION_MAX, LABEL_MAX_BYTES
from hubcore.services.requests import parse
from hubcore.store.blobs import digest_of
from tests.artifacts.support import CIPHERTEXT, ENVELOPE, blob_files, envelope, query, state

pytestmark = pytest.mark.anyio


async def publish(hub: Hub, caller: Caller, **members: Any) -> dict[str, Any]:
    body = {"project_id": "web", "title": "Report", "kind": "html", "content": "<p>hi</p>", **members}
    return await hub.artifacts.publish_artifact(caller, parse(ArtifactPublish, body))


async def update(hub: Hub, caller: Caller, artifact_id: str, **members: Any) -> dict[str, Any]:
    return await hub.artifacts.update(caller, parse(ArtifactUpdate, {"artifact_id": artifact_id, **members}))


async def draft(hub: Hub, caller: Caller, artifact_id: str, **members: Any) -> dict[str, Any]:
    return await hub.artifacts.draft(caller, parse(ArtifactDraft, {"artifact_id": artifact_id, **members}))


async def get(hub: Hub, caller: Caller, artifact_id: str, **members: Any) -> dict[str, Any]:
    return await hub.artifacts.get(caller, parse(ArtifactGet, {"artifact_id": artifact_id, **members}))


async def refused(hub: Hub, code: str, call: Any) -> HubError:
    """`call()` raises `code` and writes nothing (no row, no event, no key, no blob)."""
    before = state(hub)
    with pytest.raises(HubError) as caught:
        await call()
    assert caught.value.code == code, caught.value.message
    assert state(hub) == before
    return caught.value


async def test_publish_stores_version_one_its_blob_and_an_event(hub: Hub, alice: Caller) -> None:
    made = await publish(hub, alice, description="first cut", label="v1 draft", session_id="s1")
    assert made["version"] == 1
    got = await get(hub, alice, made["artifact_id"])
    assert (got["title"], got["kind"], got["content"], got["version"], got["label"]) == (
        "Report",
        "html",
        "<p>hi</p>",
        1,
        "v1 draft",
    )
    assert (got["actor"], got["session_id"], got["protected"], got["envelope"]) == ("alice", "s1", False, None)
    assert (got["size_bytes"], got["comments_count"], got["comments_open"]) == (9, 0, 0)
    digest = digest_of(b"<p>hi</p>")
    assert blob_files(hub) == [f"{digest[:2]}/{digest}"]
    assert (hub.data_dir / "blobs" / digest[:2] / digest).read_bytes() == b"<p>hi</p>"
    events = query(hub, "SELECT kind, actor, summary, payload, session_id FROM events WHERE kind = 'artifact'")
    assert events == [
        (
            "artifact",
            "alice",
            "published Report",
            f'{{"action":"published","artifact_id":"{made["artifact_id"]}","version":1,"title":"Report"}}',
            "s1",
        )
    ]


async def test_title_falls_back_to_the_first_markdown_heading(hub: Hub, alice: Caller) -> None:
    text = "```\n# not this\n```\nintro\n\n##  The Plan  ##\n# later\n"
    made = await publish(hub, alice, title="  ", kind="markdown", content=text)
    assert (await get(hub, alice, made["artifact_id"]))["title"] == "The Plan"
    await refused(
        hub, "invalid_argument", lambda: publish(hub, alice, title=" ", kind="markdown", content="no heading")
    )
    await refused(hub, "invalid_argument", lambda: publish(hub, alice, title="", content="<h1>Html</h1>"))
    await refused(
        hub,
        "invalid_argument",
        lambda: publish(hub, alice, title=None, kind="markdown", content=CIPHERTEXT, envelope=ENVELOPE),
    )


async def test_limits_at_their_edges(hub: Hub, alice: Caller) -> None:
    await publish(hub, alice, description="d" * DESCRIPTION_MAX, label="é" * (LABEL_MAX_BYTES // 2))
    with pytest.raises(HubError) as long_description:
        parse(
            ArtifactPublish,
            {
                "project_id": "web",
                "title": "t",
                "kind": "html",
                "content": "x",
                "description": "d" * (DESCRIPTION_MAX + 1),
            },
        )
    assert long_description.value.code == "invalid_argument"
    with pytest.raises(HubError) as long_label:
        parse(
            ArtifactPublish,
            {
                "project_id": "web",
                "title": "t",
                "kind": "html",
                "content": "x",
                "label": "é" * (LABEL_MAX_BYTES // 2) + "x",
            },
        )
    assert long_label.value.code == "invalid_argument" and "label" in long_label.value.message
    for bad in ({"kind": "pdf"}, {"content": ""}, {"title": "a\nb"}, {"label": "a\nb"}):
        with pytest.raises(HubError):
            parse(ArtifactPublish, {"project_id": "web", "title": "t", "kind": "html", "content": "x", **bad})


async def test_blob_limit_is_payload_too_large_and_writes_nothing(hub: Hub, alice: Caller) -> None:
    hub.blobs.max_bytes = 1000  # the 50 MiB rule, at a size a test can afford
    await publish(hub, alice, content="x" * 1000)
    await refused(hub, "payload_too_large", lambda: publish(hub, alice, content="y" * 1001))


async def test_missing_denied_and_policies(hub: Hub, alice: Caller, admin: Caller) -> None:
    await refused(hub, "not_found", lambda: publish(hub, alice, project_id="vault"))
    await refused(hub, "not_found", lambda: publish(hub, alice, project_id="nowhere"))
    secret = await publish(hub, admin, project_id="vault")
    for ask in (lambda: get(hub, alice, secret["artifact_id"]), lambda: get(hub, alice, "nope")):
        error = await refused(hub, "not_found", ask)
        assert error.message.startswith("artifact ")
    await refused(hub, "not_found", lambda: update(hub, alice, secret["artifact_id"], content="x"))
    await refused(hub, "not_found", lambda: hub.artifacts.delete(alice, ArtifactRef(artifact_id=secret["artifact_id"])))
    plain = await refused(hub, "invalid_argument", lambda: publish(hub, alice, project_id="locked"))
    assert "requires password-protected" in plain.message and "password" in plain.message
    sealed = await refused(
        hub, "invalid_argument", lambda: publish(hub, alice, project_id="open", content=CIPHERTEXT, envelope=ENVELOPE)
    )
    assert "policy 'off'" in sealed.message
    locked = await publish(hub, alice, project_id="locked", content=CIPHERTEXT, envelope=ENVELOPE)
    await refused(
        hub, "invalid_argument", lambda: update(hub, alice, locked["artifact_id"], content="x", envelope=None)
    )


async def test_envelope_is_checked_and_stored_as_given(hub: Hub, alice: Caller) -> None:
    made = await publish(hub, alice, content=CIPHERTEXT, envelope=ENVELOPE)
    got = await get(hub, alice, made["artifact_id"])
    assert (got["protected"], got["envelope"], got["content"]) == (True, ENVELOPE, CIPHERTEXT)
    for bad in (
        envelope(alg="AES-128-GCM"),
        envelope(iterations=1000),
        envelope(kdf="scrypt"),
        envelope(iv="aGVsbG8="),
        envelope(salt="not base64!"),
        envelope(extra=1),
        {k: v for k, v in ENVELOPE.items() if k != "salt"},
    ):
        with pytest.raises(HubError) as caught:
            parse(
                ArtifactPublish,
                {"project_id": "web", "title": "t", "kind": "html", "content": CIPHERTEXT, "envelope": bad},
            )
        assert caught.value.code == "invalid_argument"
    await refused(hub, "invalid_argument", lambda: publish(hub, alice, content="plain <p>", envelope=ENVELOPE))
    await refused(hub, "invalid_argument", lambda: publish(hub, alice, content="AAAA", envelope=ENVELOPE))
    # An omitted envelope keeps the protection: the new version's envelope must come with it.
    await refused(hub, "invalid_argument", lambda: update(hub, alice, made["artifact_id"], content=CIPHERTEXT))
    again = await update(hub, alice, made["artifact_id"], content=CIPHERTEXT, envelope=envelope(iv="AAAAAAAAAAAAAAAA"))
    plain = await update(hub, alice, made["artifact_id"], content="now public", envelope=None)
    assert (again["version"], plain["version"]) == (2, 3)
    assert (await get(hub, alice, made["artifact_id"]))["protected"] is False
    assert (await update(hub, alice, made["artifact_id"], content="still public"))["version"] == 4


async def test_update_base_version_force_and_the_row_actor(hub: Hub, alice: Caller, bob: Caller) -> None:
    made = await publish(hub, alice, session_id="s1")
    aid = made["artifact_id"]
    assert (await update(hub, bob, aid, content="two", base_version=1, session_id="s9"))["version"] == 2
    stale = await refused(hub, "conflict", lambda: update(hub, alice, aid, content="three", base_version=1))
    assert "version 2" in stale.message and (stale.details or {})["current_version"] == 2
    assert (await update(hub, alice, aid, content="three", base_version=1, force=True))["version"] == 3
    got = await get(hub, alice, aid)
    assert (got["actor"], got["session_id"], got["content"]) == ("alice", "s1", "three")
    versions = (await hub.artifacts.versions(alice, ArtifactRef(artifact_id=aid)))["versions"]
    assert [(v["version"], v["actor"]) for v in versions] == [(1, "alice"), (2, "bob"), (3, "alice")]
    assert [r[0] for r in query(hub, "SELECT actor FROM events WHERE kind = 'artifact' ORDER BY id")] == [
        "alice",
        "bob",
        "alice",
    ]
    assert (await get(hub, alice, aid, version=1))["content"] == "<p>hi</p>"
    await refused(hub, "not_found", lambda: get(hub, alice, aid, version=4))


async def test_idempotency_keys_per_operation(hub: Hub, alice: Caller, bob: Caller) -> None:
    first = await publish(hub, alice, idempotency_key="k")
    before = state(hub)
    assert await publish(hub, alice, idempotency_key="k", content="<p>other</p>") == first
    assert state(hub) == before  # the replay's own body was not kept
    assert (await publish(hub, bob, idempotency_key="k"))["artifact_id"] != first["artifact_id"]
    await refused(
        hub,
        "conflict",
        lambda: publish(hub, alice, project_id="locked", idempotency_key="k", content=CIPHERTEXT, envelope=ENVELOPE),
    )
    up = await update(hub, alice, first["artifact_id"], content="v2", idempotency_key="k")
    assert await update(hub, alice, first["artifact_id"], content="v2 again", idempotency_key="k") == up
    other = await publish(hub, alice)
    await refused(hub, "conflict", lambda: update(hub, alice, other["artifact_id"], content="x", idempotency_key="k"))


async def test_event_ceiling_refuses_publish_and_update(hub: Hub, alice: Caller) -> None:
    made = await publish(hub, alice)
    held = len(query(hub, "SELECT id FROM events WHERE project_id = 'web'"))
    hub.core.settings = replace(hub.core.settings, events_per_project=held)
    error = await refused(hub, "conflict", lambda: publish(hub, alice, content="<p>new bytes</p>"))
    assert "events_per_project" in error.message
    await refused(hub, "conflict", lambda: update(hub, alice, made["artifact_id"], content="new bytes"))
    # A delete is never refused for the ceiling.
    assert await hub.artifacts.delete(alice, ArtifactRef(artifact_id=made["artifact_id"])) == {"ok": True}


async def test_draft_lifecycle_live_idle_sealed(hub: Hub, alice: Caller, bob: Caller, clock: FakeClock) -> None:
    aid = (await publish(hub, alice, session_id="s1"))["artifact_id"]
    ref = ArtifactRef(artifact_id=aid)
    assert (await hub.artifacts.live(alice, ref))["state"] == "sealed"
    first = await draft(hub, alice, aid, content="draft one", session_id="s1")
    assert first == {"artifact_id": aid, "live_version": 2, "live_rev": 1, "viewer_url": f"artifacts/{aid}?version=2"}
    second = await draft(hub, alice, aid, content="draft two", session_id="s1", label="wip")
    assert (second["live_version"], second["live_rev"]) == (2, 2)
    assert blob_files(hub) == sorted(f"{d[:2]}/{d}" for d in (digest_of(b"<p>hi</p>"), digest_of(b"draft two")))
    # The current version (what the public page serves) stays the last sealed one.
    assert (await get(hub, alice, aid))["content"] == "<p>hi</p>"
    live = await get(hub, alice, aid, live=True)
    assert (live["content"], live["version"], live["live"], live["live_rev"], live["label"]) == (
        "draft two",
        2,
        True,
        2,
        "wip",
    )
    assert await hub.artifacts.live(alice, ref) == {
        "state": "live",
        "version": 2,
        "live_rev": 2,
        "actor": "alice",
        "session_id": "s1",
    }
    await refused(hub, "conflict", lambda: draft(hub, bob, aid, content="mine", session_id="s2"))
    taken = await draft(hub, bob, aid, content="mine", session_id="s2", force=True)
    assert (taken["live_version"], taken["live_rev"]) == (2, 3)
    clock.advance(901)
    assert (await hub.artifacts.live(alice, ref))["state"] == "idle"
    assert not query(hub, "SELECT id FROM events WHERE kind = 'artifact' AND payload LIKE '%draft%'")
    sealed = await update(hub, alice, aid, content="final", base_version=2)
    assert sealed["version"] == 3
    got = await hub.artifacts.versions(alice, ref)
    assert [(v["version"], v["live"]) for v in got["versions"]] == [(1, False), (2, False), (3, False)]
    assert (await get(hub, alice, aid, version=2))["content"] == "mine"
    assert (await hub.artifacts.live(alice, ref))["state"] == "sealed"
    # A new draft after the seal mints the next version.
    assert (await draft(hub, alice, aid, content="next", session_id="s1"))["live_version"] == 4


async def test_draft_viewer_url_is_absolute_with_a_public_url(hub: Hub, alice: Caller) -> None:
    hub.core.settings = replace(hub.core.settings, public_url="https://hub.example/")
    aid = (await publish(hub, alice))["artifact_id"]
    assert (await draft(hub, alice, aid, content="x"))["viewer_url"] == f"https://hub.example/artifacts/{aid}?version=2"


async def test_live_moves_reach_the_stream_log(hub: Hub, alice: Caller) -> None:
    aid = (await publish(hub, alice))["artifact_id"]
    start = hub.changes.published
    await draft(hub, alice, aid, content="a")
    await draft(hub, alice, aid, content="b")
    await update(hub, alice, aid, content="c")
    changes = hub.changes.log.since(0) or []
    live = [c for c in changes if c.topic == "artifact-live"]
    assert [(c.event_id, c.version, c.live_rev) for c in live] == [(aid, 2, 1), (aid, 2, 2), (aid, 2, 0)]
    assert live[0].ids == f'{{"artifact_id":"{aid}","version":2,"live_rev":1}}'.encode()
    assert hub.changes.published - start == 4  # three live moves and the update's feed event


async def test_list_and_versions(hub: Hub, alice: Caller, admin: Caller, clock: FakeClock) -> None:
    one = await publish(hub, alice, session_id="s1", title="One")
    clock.advance(1)
    two = await publish(hub, alice, session_id="s2", title="Two")
    clock.advance(1)
    await publish(hub, admin, project_id="vault", title="Secret")
    clock.advance(1)
    await update(hub, alice, one["artifact_id"], content="newer")

    async def titles(caller: Caller, **members: Any) -> list[str]:
        found = await hub.artifacts.list(caller, parse(ArtifactList, members))
        return [a["title"] for a in found["artifacts"]]

    assert await titles(alice) == ["One", "Two"]
    assert await titles(admin) == ["One", "Secret", "Two"]
    assert await titles(alice, session_id="s2") == ["Two"]
    assert await titles(alice, project_id="web", limit=1) == ["One"]
    await refused(hub, "not_found", lambda: titles(alice, project_id="vault"))
    summary = (await hub.artifacts.list(alice, parse(ArtifactList, {"session_id": "s1"})))["artifacts"][0]
    assert (summary["version"], summary["size_bytes"], summary["id"]) == (2, 5, one["artifact_id"])
    assert "content" not in summary and two["version"] == 1


async def test_delete_removes_rows_blobs_and_records_an_event(hub: Hub, alice: Caller) -> None:
    keep = await publish(hub, alice, content="shared")
    gone = await publish(hub, alice, content="shared")
    await update(hub, alice, gone["artifact_id"], content="only mine")
    await hub.artifacts.delete(alice, ArtifactRef(artifact_id=gone["artifact_id"]))
    assert blob_files(hub) == [f"{digest_of(b'shared')[:2]}/{digest_of(b'shared')}"]
    assert query(hub, "SELECT artifact_id FROM artifact_versions") == [(keep["artifact_id"],)]
    deleted = query(hub, "SELECT summary, payload FROM events WHERE payload LIKE '%deleted%'")
    assert deleted == [
        ("deleted Report", f'{{"action":"deleted","artifact_id":"{gone["artifact_id"]}","title":"Report"}}')
    ]
    await refused(hub, "not_found", lambda: get(hub, alice, gone["artifact_id"]))
    await refused(hub, "not_found", lambda: hub.artifacts.delete(alice, ArtifactRef(artifact_id=gone["artifact_id"])))


async def test_stats_storage_and_project_delete(hub: Hub, alice: Caller, admin: Caller) -> None:
    await hub.projects.create(admin, parse_project("temp"))
    made = await publish(hub, alice, project_id="temp", content="12345")
    await update(hub, alice, made["artifact_id"], content="1234567")
    await publish(hub, alice, content="abc")
    stats = await hub.feed.stats(admin, "temp")
    assert stats["artifacts"] == 1
    report = await hub.storage.report(admin)
    rows = {r["project_id"]: r["artifact_bytes"] for r in report["projects"]}
    assert (rows["temp"], rows["web"], rows["vault"]) == (12, 3, 0)
    await hub.projects.delete(admin, "temp")
    assert blob_files(hub) == [f"{digest_of(b'abc')[:2]}/{digest_of(b'abc')}"]
    assert query(hub, "SELECT project_id FROM artifacts") == [("web",)]


def parse_project(project_id: str) -> Any:
    from hubcore.services.projects import ProjectCreate

    return parse(ProjectCreate, {"id": project_id})


async def test_backup_gate_holds_deletes(hub: Hub, alice: Caller) -> None:
    import anyio

    made = await publish(hub, alice, content="to go")
    done = anyio.Event()

    async def delete() -> None:
        await hub.artifacts.delete(alice, ArtifactRef(artifact_id=made["artifact_id"]))
        done.set()

    async with anyio.create_task_group() as tg:
        async with hub.blobs.gate.held():
            tg.start_soon(delete)
            await publish(hub, alice, content="new bytes are written while held")
            for _ in range(50):
                await anyio.lowlevel.checkpoint()
            assert not done.is_set() and len(blob_files(hub)) == 2
        await done.wait()
    assert len(blob_files(hub)) == 1


async def test_title_and_content_limits_at_the_model(hub: Hub, alice: Caller) -> None:
    from hubcore.services.artifacts.models import TITLE_MAX
    from hubcore.store.blobs import BLOB_MAX

    base = {"project_id": "web", "kind": "html", "content": "x"}
    assert (await publish(hub, alice, title="t" * TITLE_MAX))["version"] == 1
    with pytest.raises(HubError) as long_title:
        parse(ArtifactPublish, {**base, "title": "t" * (TITLE_MAX + 1)})
    assert long_title.value.code == "invalid_argument"
    assert parse(ArtifactPublish, {**base, "title": "t", "content": "x" * BLOB_MAX}).content == "x" * BLOB_MAX
    with pytest.raises(HubError) as huge:
        parse(ArtifactPublish, {**base, "title": "t", "content": "é" * (BLOB_MAX // 2) + "x"})
    assert huge.value.code == "payload_too_large" and "content" in huge.value.message


async def test_a_read_racing_a_live_draft_reads_again(hub: Hub, alice: Caller, monkeypatch: pytest.MonkeyPatch) -> None:
    aid = (await publish(hub, alice))["artifact_id"]
    await hub.search_index.settled()  # the index reads the new body too: only the get's reads count
    real, calls = hub.blobs.read, []

    def read(digest: str) -> bytes:
        calls.append(digest)
        if len(calls) == 1:  # the body the row named was replaced (and removed) before it was read
            raise FileNotFoundError(digest)
        return real(digest)

    monkeypatch.setattr(hub.blobs, "read", read)
    assert (await get(hub, alice, aid))["content"] == "<p>hi</p>" and len(calls) == 2
    monkeypatch.setattr(hub.blobs, "read", lambda digest: (_ for _ in ()).throw(FileNotFoundError(digest)))
    with pytest.raises(HubError) as caught:
        await get(hub, alice, aid)
    assert caught.value.code == "unavailable" and caught.value.retryable
