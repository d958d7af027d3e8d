"""A session's brain is indexed by what changed (its change counter, `brain_search.batch`): a put
hands the index its one entry, a delete removes exactly its document, and a brain the index
cannot follow (an old-schema file, another counter, a restore) is read whole once."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from hubcore.hub import Hub
from hubcore.parts.protocol import SearchBatch
from hubcore.services import brain_files, brain_search
from hubcore.services.search import index
from hubcore.store import brain
from tests.requests import a_brain_delete, a_brain_put, a_session_start
from tests.search.conftest import ALICE, hits, search

pytestmark = pytest.mark.anyio


class Written(list[tuple[str, SearchBatch]]):
    """Every batch the index wrote to hub.db, by source (read from the file, or handed over by a
    write: `write_pushed`)."""

    def of(self, source: str) -> list[SearchBatch]:
        return [b for s, b in self if s == source]


@pytest.fixture
def written(monkeypatch: pytest.MonkeyPatch) -> Written:
    seen = Written()
    real = index.write_batch

    def spy(conn: sqlite3.Connection, source: str, batch: SearchBatch, terms: Any = None) -> None:
        seen.append((source, batch))
        real(conn, source, batch, terms)

    def spy_pushed(conn: sqlite3.Connection, pushed: Mapping[str, SearchBatch], terms: Any) -> None:
        seen.extend(pushed.items())
        real_pushed(conn, pushed, terms)

    real_pushed = index.write_pushed
    monkeypatch.setattr(index, "write_batch", spy)
    monkeypatch.setattr(index, "write_pushed", spy_pushed)
    return seen


async def start(hub: Hub) -> str:
    return str((await hub.sessions.start(ALICE, a_session_start("web", "t")))["session_id"])


async def put(hub: Hub, sid: str, path: str, content: str) -> None:
    await hub.brains.write_entry(ALICE, a_brain_put(path=path, content=content, store="session", session_id=sid))


def brain_docs(hub: Hub, sid: str) -> dict[str, int]:
    conn = sqlite3.connect(f"file:{hub.core.settings.data_path / 'hub.db'}?mode=ro", uri=True)
    try:
        rows = conn.execute("SELECT key, id FROM search_docs WHERE family = 'brain' AND session_id = ?", (sid,))
        return {str(k): int(i) for k, i in rows}
    finally:
        conn.close()


async def test_a_put_to_one_path_of_a_500_entry_brain_indexes_one_document(hub: Hub, written: Written) -> None:
    sid = await start(hub)
    source = brain_search.source(sid)
    for n in range(500):
        await put(hub, sid, f"/kv/e{n:03}", f"zebra number {n}")
    assert len(hits(await search(hub, ALICE, "zebra", type="brain", limit=50))) == 50
    before = brain_docs(hub, sid)
    assert len(before) == 500
    written.clear()
    await put(hub, sid, "/kv/e250", "okapi instead")
    assert [h["path"] for h in hits(await search(hub, ALICE, "okapi", type="brain"))] == ["/kv/e250"]
    batches = written.of(source)
    assert len(batches) == 1
    only = batches[0]
    assert not only.replace and only.gone == []
    assert [d.key for d in only.docs] == [f"{sid}:/kv/e250"]
    after = brain_docs(hub, sid)
    assert set(after) == set(before)
    changed = {k for k in after if after[k] != before[k]}
    assert changed == {f"{sid}:/kv/e250"}  # the other 499 keep their rows
    assert hits(await search(hub, ALICE, "zebra 250", type="brain")) == []


async def test_a_delete_removes_exactly_its_hit(hub: Hub, written: Written) -> None:
    sid = await start(hub)
    for n in range(5):
        await put(hub, sid, f"/fs/n{n}.md", f"lemur {n}")
    assert len(hits(await search(hub, ALICE, "lemur", type="brain"))) == 5
    written.clear()
    await hub.brains.delete_entry(ALICE, a_brain_delete(path="/fs/n3.md", store="session", session_id=sid))
    paths = sorted(h["path"] for h in hits(await search(hub, ALICE, "lemur", type="brain")))
    assert paths == ["/fs/n0.md", "/fs/n1.md", "/fs/n2.md", "/fs/n4.md"]
    (only,) = written.of(brain_search.source(sid))
    assert not only.replace and only.docs == [] and list(only.gone) == [("brain", f"{sid}:/fs/n3.md")]
    # Written again after the delete: the tombstone goes and the entry is a document again.
    written.clear()
    await put(hub, sid, "/fs/n3.md", "lemur back")
    assert [h["path"] for h in hits(await search(hub, ALICE, "back", type="brain"))] == ["/fs/n3.md"]
    (again,) = written.of(brain_search.source(sid))
    assert [d.key for d in again.docs] == [f"{sid}:/fs/n3.md"] and list(again.gone) == []


def to_version_1(conn: sqlite3.Connection) -> None:
    """Back to the brain schema before the change counter (the seal kept)."""
    conn.execute("DROP INDEX entries_seq")
    conn.execute("ALTER TABLE entries DROP COLUMN seq")
    conn.execute("DROP TABLE gone")
    conn.execute("DROP TABLE changes")
    conn.execute("PRAGMA user_version = 1")


async def test_an_old_schema_brain_migrates_and_is_indexed_whole_once(hub: Hub, written: Written) -> None:
    sid = await start(hub)
    for n in range(3):
        await put(hub, sid, f"/kv/o{n}", f"ibex {n}")
    await hub.brains.delete_entry(ALICE, a_brain_delete(path="/kv/o2", store="session", session_id=sid))
    assert len(hits(await search(hub, ALICE, "ibex", type="brain"))) == 2
    async with hub.brains.pool.use(sid) as actor:
        await actor.execute(to_version_1)
    await hub.brains.pool.close(sid)  # the next write opens the old file afresh, as after an upgrade
    # What the index reads of a file not migrated yet: a digest mark and every entry.
    with sqlite3.connect(hub.brains.path_of(sid)) as conn:
        old = brain_search.batch(conn, sid, "web", None)
    assert (
        old.replace
        and ":" not in old.mark
        and sorted(d.key for d in old.docs)
        == [
            f"{sid}:/kv/o0",
            f"{sid}:/kv/o1",
        ]
    )
    written.clear()
    await put(hub, sid, "/kv/o1", "chamois")  # migrates the file: a new counter, so one whole read
    with sqlite3.connect(hub.brains.path_of(sid)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == brain.SCHEMA_VERSION == 2
        assert conn.execute("SELECT path, seq FROM entries ORDER BY path").fetchall() == [("/kv/o0", 0), ("/kv/o1", 1)]
    assert [h["path"] for h in hits(await search(hub, ALICE, "ibex", type="brain"))] == ["/kv/o0"]
    assert [h["path"] for h in hits(await search(hub, ALICE, "chamois", type="brain"))] == ["/kv/o1"]
    (whole,) = written.of(brain_search.source(sid))
    assert whole.replace and sorted(d.key for d in whole.docs) == [f"{sid}:/kv/o0", f"{sid}:/kv/o1"]
    written.clear()
    await put(hub, sid, "/kv/o0", "markhor")  # and from then on, by what changed
    assert [h["path"] for h in hits(await search(hub, ALICE, "markhor", type="brain"))] == ["/kv/o0"]
    (step,) = written.of(brain_search.source(sid))
    assert not step.replace and [d.key for d in step.docs] == [f"{sid}:/kv/o0"]


def brain_file(tmp_path: Path, writes: list[tuple[str, str | None]]) -> sqlite3.Connection:
    conn = sqlite3.connect(tmp_path / "b.db", isolation_level=None)
    brain.setup(conn)
    for path, value in writes:
        if value is None:
            brain.delete(conn, path)
        else:
            brain.put(conn, path, value.encode(), version="v", now=0.0, actor="a")
    return conn


def test_a_mark_the_counter_cannot_follow_reads_the_brain_whole(tmp_path: Path) -> None:
    conn = brain_file(tmp_path, [("/kv/a", "1"), ("/kv/b", "2"), ("/kv/a", None)])
    try:
        now = brain_search.mark(conn)
        epoch, seq = now.split(":")
        assert seq == "3"
        step = brain_search.batch(conn, "s", "p", f"{epoch}:1")
        assert not step.replace and [d.key for d in step.docs] == ["s:/kv/b"]
        assert list(step.gone) == [("brain", "s:/kv/a")] and step.mark == now
        assert brain_search.batch(conn, "s", "p", now).docs == []
        for lost in (None, "0123456789abcdef0123456789abcdef", f"{epoch}:9", f"other:{seq}", f"{epoch}:x"):
            whole = brain_search.batch(conn, "s", "p", lost)
            assert whole.replace and [d.key for d in whole.docs] == ["s:/kv/b"] and whole.mark == now, lost
    finally:
        conn.close()


def test_more_changes_than_a_step_reads_the_brain_whole(tmp_path: Path) -> None:
    conn = brain_file(tmp_path, [(f"/kv/{n}", "x") for n in range(brain_search.STEP_MAX + 1)])
    try:
        epoch = brain_search.mark(conn).split(":")[0]
        assert brain_search.batch(conn, "s", "p", f"{epoch}:0").replace
        assert not brain_search.batch(conn, "s", "p", f"{epoch}:1").replace
    finally:
        conn.close()


def test_a_restore_drops_the_brain_marks_so_each_brain_is_read_whole(tmp_path: Path) -> None:
    (tmp_path / brain_files.BRAINS).mkdir()
    conn = sqlite3.connect(tmp_path / "hub.db")
    try:
        conn.execute("CREATE TABLE sessions (id TEXT PRIMARY KEY)")
        conn.execute("CREATE TABLE search_marks (source TEXT PRIMARY KEY, mark TEXT)")
        conn.executemany("INSERT INTO search_marks VALUES (?, ?)", [("brain:s1", "e:4"), ("kb:web", "3:1")])
        conn.commit()
        assert brain_files.sweep_restored(conn, tmp_path) == 0
    finally:
        conn.close()
    with sqlite3.connect(tmp_path / "hub.db") as check:
        assert check.execute("SELECT source FROM search_marks").fetchall() == [("kb:web",)]
    check.close()
