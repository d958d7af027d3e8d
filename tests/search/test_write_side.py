"""The index follows the writes on the write side, so a search query only reads (issue 27 part 5),
and it takes each family's documents, hits and visibility from the part that owns the rows (issue
28 part 5): search holds no other feature's SQL."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

import anyio
import pytest

from hubcore.config import HubSettings
from hubcore.hub import Hub
from hubcore.parts.protocol import SearchBatch, SearchDoc
from hubcore.services.artifacts.models import ArtifactPublish
from hubcore.services.requests import parse
from hubcore.services.search import index
from tests.harness import ADMIN, HubClient
from tests.kb.support import put as kb_put
from tests.requests import a_brain_put, a_session_end, a_session_start, a_signal
from tests.search.conftest import ADMIN_CALLER, ALICE, BOB, hits, search

pytestmark = pytest.mark.anyio

SEARCH_DIR = Path(__file__).parents[2] / "hubcore" / "services" / "search"
# Other features' tables (the hub's `projects`, which decides visibility, is the hub's own rule).
OTHERS = (
    "events",
    "sessions",
    "entries",
    "pages",
    "log",
    "blobs",
    "artifacts",
    "artifact_versions",
    "inbox",
    "agents",
    "grants",
    "artifact_comments",
)


async def fill(hub: Hub) -> dict[str, Any]:
    """One document of every family in `web`, and one event in `vault`."""
    event = await hub.posts.signal_append(ALICE, a_signal(project_id="web", summary="quokka on the feed"))
    await hub.posts.signal_append(BOB, a_signal(project_id="vault", summary="quokka in the vault"))
    session = await hub.sessions.start(ALICE, a_session_start("web", "t"))
    await hub.brains.write_entry(
        ALICE, a_brain_put(path="/kv/q", content="quokka in a brain", store="session", session_id=session["session_id"])
    )
    await kb_put(hub, ALICE, "/fs/q.md", "---\ntype: Concept\n---\nquokka on a page\n", project_id="web")
    artifact = await hub.artifacts.publish_artifact(
        ALICE,
        parse(
            ArtifactPublish,
            {"project_id": "web", "title": "Quokka notes", "kind": "markdown", "content": "quokka in an artifact"},
        ),
    )
    return {"event": event["event_id"], "session": session["session_id"], "artifact": artifact["artifact_id"]}


def state(settings: HubSettings) -> tuple[str, list[tuple[str, int, int]]]:
    """hub.db's every row, and each of its files' size and modification time."""
    db = settings.data_path / "hub.db"
    files = [(p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(db.parent.glob("hub.db*"))]
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return "\n".join(conn.iterdump()), files
    finally:
        conn.close()


async def test_a_write_is_indexed_without_any_query(hub: Hub, settings: HubSettings) -> None:
    made = await fill(hub)
    await hub.search_index.settled()  # no search ran: the passes followed the writes
    conn = sqlite3.connect(f"file:{settings.data_path / 'hub.db'}?mode=ro", uri=True)
    try:
        families = dict(
            conn.execute("SELECT family, COUNT(*) FROM search_docs WHERE project_id = 'web' GROUP BY family").fetchall()
        )
        keys = {r[0] for r in conn.execute("SELECT key FROM search_docs")}
    finally:
        conn.close()
    assert set(families) == {"feed", "brain", "kb", "artifact"}
    assert {made["event"], made["artifact"], f"{made['session']}:/kv/q", "web:/fs/q.md"} <= keys


async def test_a_search_query_writes_nothing(client: HubClient, hub: Hub, settings: HubSettings) -> None:
    made = await fill(hub)
    await hub.search_index.settled()
    commands, before = hub.core.store.statistics().commands, state(settings)
    asked = [
        (ALICE, {}),
        (BOB, {}),
        (ADMIN_CALLER, {}),
        (ALICE, {"scope": "project", "project": "web"}),
        (ALICE, {"type": "brain"}),
        (ALICE, {"session_id": made["session"]}),
        (ALICE, {"type": "artifact"}),
    ]
    for who, fields in asked:
        assert hits(await search(hub, who, "quokka", **fields)), fields
    assert hits(await search(hub, ALICE, "quok"))  # a prefix
    assert hits(await search(hub, ALICE, '"quokka in a brain"'))  # a phrase
    assert hits(await search(hub, ALICE, "nothingmatchesthis")) == []
    found = {h["type"] for h in hits(await search(hub, ALICE, "quokka"))}
    assert found == {"feed", "brain", "kb", "artifact"}
    r = await client.get("/api/v1/search", params={"q": "quokka"}, headers=ADMIN)
    assert r.status_code == 200 and r.json()["count"] >= 6
    assert hub.core.store.statistics().commands == commands  # no command reached hub.db's writer
    assert state(settings) == before  # not a row, not a byte, not a modification time


async def test_a_query_sees_the_write_committed_before_it(hub: Hub) -> None:
    """The query does not index, but it waits for the pass that covers what committed before it."""
    for n in range(5):
        await hub.posts.signal_append(ALICE, a_signal(project_id="web", summary=f"wallaby {n}"))
        assert len(hits(await search(hub, ALICE, "wallaby"))) == n + 1


async def test_a_pass_that_read_a_source_before_its_deletion_writes_none_of_it(
    client: HubClient, hub: Hub, settings: HubSettings
) -> None:
    """A pass reads a source, then writes it: a deletion committed in between wins (`still`)."""
    await client.make_project("doomed")
    await hub.posts.signal_append(ALICE, a_signal(project_id="doomed", summary="numbat"))
    session = await hub.sessions.start(ALICE, a_session_start("doomed", "t"))
    sid = session["session_id"]
    await hub.brains.write_entry(ALICE, a_brain_put(path="/kv/a", content="numbat", store="session", session_id=sid))
    await kb_put(hub, ALICE, "/fs/n.md", "---\ntype: Concept\n---\nnumbat\n", project_id="doomed")
    await hub.search_index.settled()
    by_part = {part.name: part for part in hub.parts}
    read = [
        (f"brain:{sid}", await by_part["sessions-and-brains"].search_documents(f"brain:{sid}", None)),
        ("kb:doomed", await by_part["knowledge-base"].search_documents("kb:doomed", None)),
        ("feed", await by_part["feeds-and-inbox"].search_documents("feed", None)),
    ]
    await hub.sessions.end(ALICE, a_session_end(session_id=sid))
    assert (await client.delete("/api/v1/projects/doomed", headers=ADMIN)).status_code == 204
    for source, batch in read:
        assert batch is not None and batch.docs
        await hub.core.store.execute(lambda conn, s=source, b=batch: index.write_batch(conn, s, b))
    conn = sqlite3.connect(f"file:{settings.data_path / 'hub.db'}?mode=ro", uri=True)
    try:
        assert conn.execute("SELECT COUNT(*) FROM search_docs WHERE project_id = 'doomed'").fetchone()[0] == 0
        marks = {r[0] for r in conn.execute("SELECT source FROM search_marks")}
    finally:
        conn.close()
    assert f"brain:{sid}" not in marks and "kb:doomed" not in marks and "feed" in marks


def test_search_holds_no_other_features_sql() -> None:
    """The index's code reads and writes only its own tables; each family's rows are read by the
    part that owns them (`Part.search_documents`, `search_scope`, `search_families`). Its schema's
    v10 triggers, which sit on the feed's and the artifacts' tables, are history kept as written."""
    pattern = re.compile(rf"\b(?:FROM|JOIN|INTO|UPDATE|ON)\s+({'|'.join(OTHERS)})\b", re.IGNORECASE)
    for path in sorted(SEARCH_DIR.glob("*.py")):
        if path.name == "schema.py":
            continue
        found = pattern.findall(path.read_text())
        assert not found, f"{path.name} names {found}"


async def test_a_semantic_query_writes_nothing_once_the_model_is_loaded(hub: Hub, settings: HubSettings) -> None:
    """With the model loaded, each index pass has the background task embed the new documents:
    a semantic query finds them embedded and only reads."""
    await hub.posts.signal_append(ALICE, a_signal(project_id="web", summary="database backups run nightly"))
    first = await search(hub, ALICE, "when is our data saved", mode="semantic")  # loads the model
    if hub.search.semantic.model is None:
        pytest.skip("the semantic extra (wordllama) is not installed")
    assert first["backend"] == "hybrid"
    await hub.posts.signal_append(ALICE, a_signal(project_id="web", summary="the checkout test is flaky in CI"))
    await hub.search_index.settled()
    with anyio.fail_after(30):
        await hub.search.semantic.idle()  # embedded on the write side: no query asked
    commands, before = hub.core.store.statistics().commands, state(settings)
    found = await search(hub, ALICE, "unreliable billing check", mode="semantic")
    assert found["backend"] == "hybrid" and any("flaky" in h["snippet"] for h in hits(found))
    assert hub.core.store.statistics().commands == commands
    assert state(settings) == before


def _index_rows(conn: sqlite3.Connection) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]], list[str]]:
    docs = [
        tuple(r)
        for r in conn.execute(
            """SELECT d.family, d.source, d.key, d.project_id, d.session_id, d.snippet, d.meta, f.body
               FROM search_docs d JOIN search_fts f ON f.rowid = d.id ORDER BY d.family, d.key"""
        )
    ]
    marks = [
        tuple(r)
        for r in conn.execute("SELECT source, mark FROM search_marks WHERE source LIKE 'brain:%' ORDER BY source")
    ]
    terms = [r[0] for r in conn.execute("SELECT term FROM search_terms ORDER BY term")]
    return docs, marks, terms


async def test_pushed_batches_written_together_leave_what_one_by_one_leaves(hub: Hub) -> None:
    """`write_pushed` writes every source of a pass with one statement per table: the rows it
    leaves are those `write_batch` leaves source by source, in order (a key two sources write is
    the later one's, a key a later source removes is gone, a source whose rows went takes its
    documents and mark with it, and a document whose row went is left out)."""

    def doc(key: str, text: str, project: str = "web") -> SearchDoc:
        return SearchDoc("brain", key, project, text, text[:20], "s", {"path": key})

    def went(conn: sqlite3.Connection, docs: Any) -> None:
        return None

    def first_only(conn: sqlite3.Connection, docs: Any) -> Any:
        return docs[:1]

    held = {"brain:a": SearchBatch([doc("a:1", "held before"), doc("c:9", "doomed later")], "a:1", replace=False)}
    pushed = {
        "brain:a": SearchBatch(
            [doc("a:1", "koala one"), doc("a:2", "koala two"), doc("x", "shared first")], "a:2", replace=False
        ),
        "brain:b": SearchBatch(
            [doc("x", "shared second"), doc("b:1", "wombat")], "b:7", replace=False, gone=[("brain", "c:9")]
        ),
        "brain:c": SearchBatch([doc("c:1", "never lands")], "c:3", replace=False, still=went),
        "brain:d": SearchBatch([doc("d:1", "kept"), doc("d:2", "row went")], "d:1", replace=False, still=first_only),
    }

    def both(conn: sqlite3.Connection) -> tuple[Any, Any]:
        for source, batch in held.items():
            index.write_batch(conn, source, batch)
        index.write_batch(conn, "brain:c", SearchBatch([doc("c:0", "source c before")], "c:1", replace=False))
        terms = index.terms_of([d.text for b in pushed.values() for d in b.docs])
        conn.execute("SAVEPOINT one_by_one")
        for source, batch in pushed.items():
            index.write_batch(conn, source, batch, terms)
        one_by_one = _index_rows(conn)
        conn.execute("ROLLBACK TO one_by_one")
        conn.execute("RELEASE one_by_one")
        index.write_pushed(conn, pushed, terms)
        together = _index_rows(conn)
        raise _Undo(one_by_one, together)  # leave the hub's index as it was

    with pytest.raises(_Undo) as undone:
        await hub.core.store.execute(both)
    one_by_one, together = undone.value.args
    assert together == one_by_one
    docs, marks, _ = together
    assert [(d[1], d[2], d[7]) for d in docs] == [
        ("brain:a", "a:1", "koala one"),
        ("brain:a", "a:2", "koala two"),
        ("brain:b", "b:1", "wombat"),
        ("brain:d", "d:1", "kept"),
        ("brain:b", "x", "shared second"),
    ]
    assert marks == [("brain:a", "a:2"), ("brain:b", "b:7"), ("brain:d", "d:1")]


class _Undo(Exception):
    """Rolls back the command that raises it, carrying what it saw."""


async def test_an_entry_holding_a_nul_or_json_looking_text_is_indexed_whole(hub: Hub, settings: HubSettings) -> None:
    # The index writes its rows as one JSON statement (`hubcore.store.jsonrows`), where SQLite
    # would end a text at a NUL: such documents go row by row, and every document keeps its text.
    session = await hub.sessions.start(ALICE, a_session_start("web", "t"))
    values = {"/kv/nul": "quokka \x00 after the nul", "/kv/json": '{"quokka": [1, 2]}', "/kv/num": "1.5e3"}
    for path, content in values.items():
        put = a_brain_put(path=path, content=content, store="session", session_id=session["session_id"])
        await hub.brains.write_entry(ALICE, put)
    found = await search(hub, ALICE, "quokka")
    assert sorted(h["path"] for h in hits(found)) == ["/kv/json", "/kv/nul"]
    with sqlite3.connect(settings.data_path / "hub.db") as conn:
        bodies = conn.execute(
            """SELECT json_extract(d.meta, '$.path'), f.body FROM search_docs d
               JOIN search_fts f ON f.rowid = d.id WHERE d.family = 'brain'"""
        ).fetchall()
    assert dict(bodies) == {path: f"{path}\n{content}" for path, content in values.items()}  # the path, then the text
