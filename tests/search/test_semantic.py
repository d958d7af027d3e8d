"""Semantic search (issue 15 part 4): vectors follow the lexical index's documents, a semantic
query blends nearest neighbours into the lexical hits (`backend: hybrid`), and without a model or
before any vector exists it answers lexically (`backend: fts-fallback`). Nothing is shown that the
caller may not see, every removal takes its vectors, and a restart catches up in the background."""

from __future__ import annotations

import sqlite3
from typing import Any

import anyio
import pytest

from hubcore.config import HubSettings
from hubcore.errors import HubError
from hubcore.hub import Hub
from hubcore.services.search import semantic
from hubcore.services.search.semantic import SemanticIndex
from tests.harness import ADMIN, HubClient, hub_client
from tests.mcp.live import LiveHub, structured
from tests.requests import a_brain_delete, a_brain_put, a_session_end, a_session_start, a_signal
from tests.search.conftest import ADMIN_CALLER, ALICE, BOB, hits, search

pytestmark = pytest.mark.anyio

# A document and a query sharing no word with it: only meaning can join them.
BACKUP = "database backups run nightly at 02:00 UTC and are copied to the NAS"
BACKUP_QUERY = "when is our data saved for safekeeping"
FLAKY = "the payment integration test is flaky: checkout times out in CI"
FLAKY_QUERY = "unreliable billing check that sometimes breaks"


def count(client: HubClient, sql: str, *args: Any) -> int:
    conn = client.db()
    try:
        return int(conn.execute(sql, args).fetchone()[0])
    finally:
        conn.close()


def vectors(client: HubClient) -> int:
    return count(client, "SELECT COUNT(*) FROM search_vectors")


def dump(client: HubClient) -> str:
    conn = client.db()
    try:
        return "\n".join(conn.iterdump())
    finally:
        conn.close()


def snippets(result: dict[str, Any]) -> list[str]:
    return [h["snippet"] for h in hits(result)]


async def post(hub: Hub, project: str, text: str) -> str:
    who = BOB if project == "vault" else ALICE
    return str((await hub.posts.signal_append(who, a_signal(project_id=project, summary=text)))["event_id"])


async def test_a_paraphrase_finds_its_answer_by_meaning_and_lexical_does_not(client: HubClient, hub: Hub) -> None:
    await post(hub, "web", BACKUP)
    await post(hub, "web", FLAKY)
    lexical = await search(hub, ALICE, BACKUP_QUERY)
    assert lexical["backend"] == "fts" and lexical["count"] == 0
    assert vectors(client) == 0  # a lexical query embeds nothing (nor loads the model)
    assert hub.search.semantic.model is None
    found = await search(hub, ALICE, BACKUP_QUERY, mode="semantic")
    assert found["backend"] == "hybrid"
    assert snippets(found)[0] == BACKUP
    assert snippets(await search(hub, ALICE, FLAKY_QUERY, mode="semantic"))[0] == FLAKY
    assert vectors(client) == 2
    # A word match and its neighbours: the document holding the words ranks first.
    assert snippets(await search(hub, ALICE, "payment", mode="semantic"))[0] == FLAKY


async def test_a_query_embeds_a_small_backlog_before_it_answers_and_writes_nothing_after(
    client: HubClient, hub: Hub
) -> None:
    await search(hub, ALICE, "warm", mode="semantic")  # the model loaded, nothing to embed yet
    await post(hub, "web", BACKUP)
    found = await search(hub, ALICE, BACKUP_QUERY, mode="semantic")
    assert snippets(found) == [BACKUP] and vectors(client) == 1
    before = dump(client)
    await anyio.sleep(0.5)  # nothing lands behind the reply (the suite's "nothing written" checks)
    assert dump(client) == before
    assert (await search(hub, ALICE, BACKUP_QUERY, mode="semantic"))["backend"] == "hybrid"
    assert dump(client) == before  # nothing new: the query wrote nothing


async def test_without_the_model_semantic_answers_lexically(client: HubClient, hub: Hub) -> None:
    hub.search.semantic.loader = lambda: None  # the extra not installed
    await post(hub, "web", BACKUP)
    await post(hub, "web", "nightly job report")
    found = await search(hub, ALICE, "nightly", mode="semantic")
    lexical = await search(hub, ALICE, "nightly")
    assert found["backend"] == "fts-fallback" and lexical["backend"] == "fts"
    assert found["semantic"] == "unavailable" and "semantic" not in lexical  # never worth a retry
    assert found["groups"] == lexical["groups"] and found["count"] == 2
    assert (await search(hub, ALICE, BACKUP_QUERY, mode="semantic"))["count"] == 0
    assert vectors(client) == 0


async def test_a_model_that_fails_to_load_answers_lexically(client: HubClient, hub: Hub) -> None:
    def broken() -> None:
        raise OSError("model file unreadable")

    hub.search.semantic.loader = broken
    await post(hub, "web", BACKUP)
    found = await search(hub, ALICE, "backups", mode="semantic")
    assert found["backend"] == "fts-fallback" and snippets(found) == [BACKUP]
    assert found["semantic"] == "unavailable"
    assert vectors(client) == 0


async def test_before_vectors_exist_a_large_backlog_is_embedded_in_the_background(
    client: HubClient, hub: Hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(semantic, "INLINE_MAX", 2)
    monkeypatch.setattr(semantic, "BATCH", 2)
    await post(hub, "web", BACKUP)
    for i in range(4):
        await post(hub, "web", f"unrelated note number {i}")
    index: SemanticIndex = hub.search.semantic
    async with index._embed_lock:  # as while the background task embeds: no vector exists yet
        first = await search(hub, ALICE, "backups", mode="semantic")
    assert first["backend"] == "fts-fallback" and snippets(first) == [BACKUP]  # lexical, meanwhile
    assert first["semantic"] == "warming"  # the model is there: a client asks again shortly
    assert vectors(client) == 0
    await search(hub, ALICE, "backups", mode="semantic")  # too many to embed itself: wakes the background
    with anyio.fail_after(30):
        await index.idle()
    assert vectors(client) == 5
    found = await search(hub, ALICE, BACKUP_QUERY, mode="semantic")
    assert found["backend"] == "hybrid" and snippets(found)[0] == BACKUP


async def test_an_agent_never_gets_a_neighbour_it_may_not_see(client: HubClient, hub: Hub) -> None:
    await post(hub, "vault", BACKUP)
    await post(hub, "web", FLAKY)
    mine = await search(hub, ALICE, BACKUP_QUERY, mode="semantic")
    assert mine["backend"] == "hybrid" and snippets(mine) == [FLAKY]  # the nearest it may see
    assert all(h["project_id"] == "web" for h in hits(mine))
    assert snippets(await search(hub, BOB, BACKUP_QUERY, mode="semantic"))[0] == BACKUP
    assert set(snippets(await search(hub, ADMIN_CALLER, BACKUP_QUERY, mode="semantic"))) == {BACKUP, FLAKY}
    scoped = await search(hub, BOB, BACKUP_QUERY, mode="semantic", project="web")
    assert snippets(scoped) == [FLAKY]
    assert (await search(hub, BOB, BACKUP_QUERY, mode="semantic", type="kb"))["count"] == 0


async def test_session_scope_and_pruned_sessions(client: HubClient, hub: Hub) -> None:
    keep = (await hub.sessions.start(ALICE, a_session_start("web", "keep")))["session_id"]
    gone = (await hub.sessions.start(ALICE, a_session_start("web", "gone")))["session_id"]
    await hub.brains.write_entry(ALICE, a_brain_put(path="/fs/a.md", content=FLAKY, store="session", session_id=keep))
    await hub.brains.write_entry(ALICE, a_brain_put(path="/fs/b.md", content=BACKUP, store="session", session_id=gone))
    await post(hub, "web", "an unrelated lunch menu")
    assert BACKUP in snippets(await search(hub, ALICE, BACKUP_QUERY, mode="semantic"))
    only = await search(hub, ALICE, BACKUP_QUERY, mode="semantic", session_id=keep)
    assert only["backend"] == "hybrid" and FLAKY in snippets(only)
    assert {h["session_id"] for h in hits(only)} == {keep}
    await hub.sessions.end(ALICE, a_session_end(session_id=gone))
    assert (await client.delete(f"/api/v1/storage/sessions/{gone}", headers=ADMIN)).status_code == 200
    for who in (ALICE, ADMIN_CALLER):
        found = await search(hub, who, BACKUP_QUERY, mode="semantic")
        assert found["backend"] == "hybrid" and FLAKY in snippets(found)
        assert BACKUP not in snippets(found) and gone not in {h.get("session_id") for h in hits(found)}


def vectors_of(client: HubClient, where: str, *args: Any) -> int:
    return count(
        client, f"SELECT COUNT(*) FROM search_vectors v JOIN search_docs d ON d.id = v.doc_id WHERE {where}", *args
    )


async def test_removals_take_their_vectors(client: HubClient, hub: Hub) -> None:
    sid = (await hub.sessions.start(ALICE, a_session_start("web", "t")))["session_id"]
    await hub.brains.write_entry(ALICE, a_brain_put(path="/kv/a", content=BACKUP, store="session", session_id=sid))
    await client.make_project("doomed")
    await post(hub, "doomed", FLAKY)
    assert {BACKUP, FLAKY} <= set(snippets(await search(hub, ADMIN_CALLER, BACKUP_QUERY, mode="semantic")))
    assert vectors_of(client, "d.family = 'brain'") == 1 and vectors_of(client, "d.project_id = 'doomed'") == 1
    await hub.brains.delete_entry(ALICE, a_brain_delete(path="/kv/a", store="session", session_id=sid))
    assert BACKUP not in snippets(await search(hub, ADMIN_CALLER, BACKUP_QUERY, mode="semantic"))
    assert vectors_of(client, "d.family = 'brain'") == 0
    assert (await client.delete("/api/v1/projects/doomed", headers=ADMIN)).status_code == 204
    assert FLAKY not in snippets(await search(hub, ADMIN_CALLER, FLAKY_QUERY, mode="semantic"))
    assert count(client, "SELECT COUNT(*) FROM search_docs WHERE project_id = 'doomed'") == 0
    # Every vector left belongs to a document still indexed (the trigger took the others).
    assert count(client, "SELECT COUNT(*) FROM search_vectors WHERE doc_id NOT IN (SELECT id FROM search_docs)") == 0
    assert vectors(client) == count(client, "SELECT COUNT(*) FROM search_docs") > 0


async def test_a_rebuild_embeds_again(client: HubClient, hub: Hub) -> None:
    await post(hub, "web", BACKUP)
    await search(hub, ALICE, BACKUP_QUERY, mode="semantic")
    assert vectors(client) == count(client, "SELECT COUNT(*) FROM search_docs") > 0
    await hub.search_index.rebuild()
    assert vectors(client) == 0  # the documents went, and their vectors with them
    found = await search(hub, ALICE, BACKUP_QUERY, mode="semantic")
    assert found["backend"] == "hybrid" and snippets(found)[0] == BACKUP
    assert vectors(client) == count(client, "SELECT COUNT(*) FROM search_docs") > 0
    assert count(client, "SELECT COUNT(*) FROM search_vectors WHERE doc_id NOT IN (SELECT id FROM search_docs)") == 0


async def test_a_restart_embeds_what_is_missing_without_a_query(settings: HubSettings) -> None:
    async with hub_client(settings) as client:
        await client.make_agent("alice")
        await client.make_project("web")
        hub = client.app.hub
        await post(hub, "web", FLAKY)
        await search(hub, ALICE, FLAKY_QUERY, mode="semantic")  # the hub now has vectors
        # As a hub that stops before its background task embeds what the last pass indexed:
        hub.search_index.after_pass = lambda: None
        await post(hub, "web", BACKUP)
        await search(hub, ALICE, "backups")  # indexed lexically, not embedded (a lexical query)
        assert vectors(client) == 1
    async with hub_client(settings) as client:
        with anyio.fail_after(30):
            await client.app.hub.search.semantic.idle()  # the background task at start, with no query
        assert vectors(client) == 2
        held = client.app.hub.search.semantic.vectors  # read at start, the new vector added
        assert held is not None and len(held) == 2
        found = await search(client.app.hub, ALICE, BACKUP_QUERY, mode="semantic")
        assert found["backend"] == "hybrid" and snippets(found)[0] == BACKUP


async def test_a_served_hub_loads_the_model_only_once_it_serves(settings: HubSettings) -> None:
    async with hub_client(settings) as client:
        await client.make_agent("alice")
        await client.make_project("web")
        await post(client.app.hub, "web", FLAKY)
        await search(client.app.hub, ALICE, FLAKY_QUERY, mode="semantic")  # the hub now has vectors
        # As a hub that stops before its background task embeds what the last pass indexed:
        client.app.hub.search_index.after_pass = lambda: None
        await post(client.app.hub, "web", BACKUP)
        await search(client.app.hub, ALICE, "backups")  # indexed lexically, not embedded
        assert vectors(client) == 1
    async with Hub.open(settings, serving_later=True) as hub:  # as the server opens it
        await anyio.sleep(1)  # time enough to load the model, were the start not held back
        assert not hub.core.serving.is_set() and hub.search.semantic.model is None
        hub.mark_serving()  # the server is ready
        with anyio.fail_after(30):
            await hub.search.semantic.idle()
        assert hub.search.semantic.model is not None
        held = hub.search.semantic.vectors
        assert held is not None and len(held) == 2  # the missing vector embedded after ready


async def test_a_hub_that_never_searched_by_meaning_loads_no_model(settings: HubSettings) -> None:
    async with hub_client(settings) as client:
        await client.make_agent("alice")
        await client.make_project("web")
        await post(client.app.hub, "web", BACKUP)
        await search(client.app.hub, ALICE, "backups")
    async with hub_client(settings) as client:
        with anyio.fail_after(30):
            await client.app.hub.search.semantic.idle()  # its start: no vector, so nothing to catch up
        assert client.app.hub.search.semantic.model is None and vectors(client) == 0


async def test_rest_semantic_mode(client: HubClient, hub: Hub) -> None:
    await post(hub, "web", BACKUP)
    r = await client.get("/api/v1/search", params={"q": BACKUP_QUERY, "mode": "semantic", "limit": "1"}, headers=ADMIN)
    assert r.status_code == 200
    body = r.json()
    assert body["backend"] == "hybrid" and body["groups"][0]["hits"][0]["snippet"] == BACKUP
    assert body["count"] == 1


async def test_mcp_search_tool_semantic_mode(live: LiveHub) -> None:
    token = await live.make_agent("bot")
    await live.make_project("demo")
    async with live.client(token) as c:
        await c.call_tool("signal_append", {"project_id": "demo", "summary": FLAKY})
        found = structured(await c.call_tool("search", {"query": FLAKY_QUERY, "mode": "semantic"}))
        assert found["backend"] == "hybrid"
        assert found["groups"][0]["hits"][0]["snippet"] == FLAKY
        assert structured(await c.call_tool("search", {"query": FLAKY_QUERY}))["count"] == 0


async def test_a_vector_is_never_given_to_another_document_under_a_reused_id(client: HubClient, hub: Hub) -> None:
    """A document removed and another indexed under its id between the read and the write of a
    vector: the write finds other text and stores nothing."""
    await post(hub, "web", BACKUP)
    await search(hub, ALICE, "backups")
    index: SemanticIndex = hub.search.semantic
    model = await index.load()
    assert model is not None
    rows = await index._pending(0, 10)
    assert len(rows) == 1
    stale = [(rows[0][0], *rows[0][1:4], "some other text entirely")]
    await index._embed(model, stale)
    assert vectors(client) == 0
    await index._embed(model, rows)
    assert vectors(client) == 1


def test_fusion_ranks_by_reciprocal_rank() -> None:
    conn = sqlite3.connect(":memory:")
    conn.row_factory = sqlite3.Row
    row = {i: conn.execute("SELECT ? AS id", (i,)).fetchone() for i in range(1, 6)}
    fused = semantic.fuse([row[1], row[2], row[3]], [row[3], row[4], row[1]])
    # 1: 1/61 + 1/63; 3: 1/63 + 1/61 (a tie, the lexical order); 2: 1/62; 4: 1/62 (lexical first)
    assert [r["id"] for r in fused] == [1, 3, 2, 4]
    assert [r["id"] for r in semantic.fuse([], [row[5], row[2]])] == [5, 2]
    conn.close()


def test_the_vector_set_keeps_to_its_filter() -> None:
    import numpy as np

    from hubcore.services.search.vectors import VectorSet, quantize

    rng = np.random.default_rng(15)
    vectors = rng.standard_normal((600, 256)).astype(np.float32)
    stored = quantize(vectors)
    rows = [(i, stored[i], f"p{i % 3}", ("feed", "brain")[i % 2], f"s{i % 5}" if i % 2 else None) for i in range(600)]
    vs = VectorSet()
    vs.add(rows[:300])
    vs.add(rows[300:])
    query = vectors[7] / np.linalg.norm(vectors[7])
    everything = vs.nearest(query, vs.filter(None, None, None), k=10)
    assert everything[0] == 7 and len(everything) == 10
    p1 = vs.nearest(query, vs.filter(["p1"], None, None), k=1000)
    assert sorted(p1) == [i for i in range(600) if i % 3 == 1]
    brains = vs.nearest(query, vs.filter(["p0", "p1", "p2"], "brain", "s2"), k=1000)
    assert brains and all(i % 2 == 1 and i % 5 == 2 for i in brains)
    assert vs.nearest(query, vs.filter(["p9"], None, None)) == []
    assert vs.nearest(query, vs.filter([], None, None)) == []
    assert vs.nearest(query, vs.filter(None, "kb", None)) == []


async def test_the_vector_set_is_read_again_once_many_candidates_are_gone(
    client: HubClient, hub: Hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hubcore.services.search import vectors as vectors_module

    monkeypatch.setattr(vectors_module, "CANDIDATES", 4)  # more than 2 of them gone: read again
    await client.make_project("doomed")
    for i in range(3):
        await post(hub, "doomed", f"{FLAKY} {i}")
    await post(hub, "web", BACKUP)
    await search(hub, ADMIN_CALLER, FLAKY_QUERY, mode="semantic")
    index: SemanticIndex = hub.search.semantic
    assert index.vectors is not None and len(index.vectors) == 4
    assert (await client.delete("/api/v1/projects/doomed", headers=ADMIN)).status_code == 204
    assert snippets(await search(hub, ADMIN_CALLER, FLAKY_QUERY, mode="semantic")) == [BACKUP]
    assert index._stale  # three of four candidates had no vector any more
    assert snippets(await search(hub, ADMIN_CALLER, FLAKY_QUERY, mode="semantic")) == [BACKUP]
    assert index.vectors is not None and len(index.vectors) == 1
    # Candidates no caller may see (a pruned session's entries, still indexed) are not gone.
    sid = (await hub.sessions.start(ALICE, a_session_start("web", "pruned")))["session_id"]
    for i in range(3):
        await hub.brains.write_entry(
            ALICE, a_brain_put(path=f"/kv/{i}", content=f"{FLAKY} {i}", store="session", session_id=sid)
        )
    await search(hub, ADMIN_CALLER, FLAKY_QUERY, mode="semantic")  # embedded and added to the set
    await hub.sessions.end(ALICE, a_session_end(session_id=sid))
    assert (await client.delete(f"/api/v1/storage/sessions/{sid}", headers=ADMIN)).status_code == 200
    held = index.vectors
    found = await search(hub, ADMIN_CALLER, FLAKY_QUERY, mode="semantic")
    assert FLAKY not in " ".join(snippets(found)) and vectors_of(client, "d.family = 'brain'") == 3
    assert index.vectors is held


def test_a_project_new_to_the_set_after_a_filter_was_made_is_not_allowed_through_it() -> None:
    import numpy as np

    from hubcore.services.search.vectors import VectorSet, quantize

    vectors = np.random.default_rng(3).standard_normal((40, 256)).astype(np.float32)
    stored = quantize(vectors)
    vs = VectorSet()
    vs.add([(i, stored[i], "a", "feed", None) for i in range(20)])
    only_a = vs.filter(["a"], None, None)
    vs.add([(i, stored[i], "bc"[i % 2], "feed", None) for i in range(20, 40)])  # codes given out after
    query = vectors[30] / np.linalg.norm(vectors[30])
    assert sorted(vs.nearest(query, only_a, k=100)) == list(range(20))
    # Chunks merged as they come: few of them however many adds.
    for start in range(40, 2000, 10):
        vs.add([(i, stored[i % 40], "a", "feed", None) for i in range(start, start + 10)])
    assert len(vs) == 2000 and len(vs.chunks) <= 12


@pytest.mark.parametrize(
    "scope", [{"project": "vault"}, {"project": "nope"}, {"session_id": "ses_01MCC5RM005TE1P8RDK5PG903Q"}]
)
async def test_a_refused_scope_writes_nothing(client: HubClient, hub: Hub, scope: dict[str, str]) -> None:
    await post(hub, "web", BACKUP)
    await search(hub, ALICE, BACKUP_QUERY, mode="semantic")  # indexed and embedded: the model is warm
    await post(hub, "web", FLAKY)  # indexed and embedded on the write side (the model is loaded)
    await hub.search_index.settled()
    with anyio.fail_after(30):
        await hub.search.semantic.idle()
    before = dump(client)
    for mode in ("semantic", "lexical"):
        with pytest.raises(HubError) as refused:
            await search(hub, ALICE, FLAKY_QUERY, mode=mode, **scope)
        assert refused.value.code == "not_found"
    assert dump(client) == before  # nothing indexed, nothing embedded
    assert FLAKY in snippets(await search(hub, ALICE, FLAKY_QUERY, mode="semantic"))


async def test_concurrent_first_queries_load_the_model_once_and_a_longest_query_works(
    client: HubClient, hub: Hub
) -> None:
    from hubcore.services.search.vectors import load_wordllama

    loads: list[int] = []

    def counted() -> Any:
        loads.append(1)
        return load_wordllama()

    hub.search.semantic.loader = counted
    await post(hub, "web", BACKUP)
    results: list[dict[str, Any]] = []

    async def one() -> None:
        results.append(await search(hub, ALICE, BACKUP_QUERY, mode="semantic"))

    async with anyio.create_task_group() as tg:
        for _ in range(5):
            tg.start_soon(one)
    assert loads == [1] and [r["backend"] for r in results] == ["hybrid"] * 5
    assert all(snippets(r) == [BACKUP] for r in results) and vectors(client) == 1
    longest = ("safekeeping " * 700)[:8192]  # the query's 8 KiB limit (a model reads its first 2,000 characters)
    assert (await search(hub, ALICE, longest, mode="semantic"))["backend"] == "hybrid"
