"""A brain write hands the search index what it wrote (`brain_search.Pushes`, issue 27 part 5,
fourth session): a pass indexes noted puts and deletes without reading the session's row or the
brain file, and ends exactly where reading the file (the pull, `brain_search.batch`) would. A write
whose note is missing (a crash between its commit and its note, a restart) is healed by the pull.
Runs on asyncio and trio."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from hubcore.caller import Caller
from hubcore.clock import FakeClock
from hubcore.hub import Hub
from hubcore.parts.protocol import SearchBatch
from hubcore.parts.sessions import SessionsPart
from hubcore.services import brain_search
from hubcore.services.requests import parse
from hubcore.services.search.models import SearchRequest
from tests.harness import test_settings as settings_for
from tests.requests import a_brain_delete, a_brain_put, a_project, a_session_start, an_agent

pytestmark = pytest.mark.anyio

HUMAN, ALICE = Caller.admin(), Caller.agent("alice")


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def open_world(hub: Hub) -> None:
    await hub.projects.create(HUMAN, a_project(id="web"))
    await hub.agents.create(HUMAN, an_agent(id="alice"))


@pytest.fixture
async def hub(tmp_path: Path) -> AsyncIterator[Hub]:
    async with Hub.open(settings_for(tmp_path / "data"), clock=FakeClock()) as h:
        await open_world(h)
        yield h


async def start(hub: Hub, name: str = "t") -> str:
    return str((await hub.sessions.start(ALICE, a_session_start("web", name)))["session_id"])


async def put(hub: Hub, sid: str, path: str, content: str) -> None:
    await hub.brains.write_entry(ALICE, a_brain_put(path=path, content=content, store="session", session_id=sid))


async def delete(hub: Hub, sid: str, path: str) -> None:
    await hub.brains.delete_entry(ALICE, a_brain_delete(path=path, store="session", session_id=sid))


async def found(hub: Hub, q: str) -> list[str]:
    result = await hub.search.search(ALICE, parse(SearchRequest, {"q": q, "type": "brain", "limit": 50}))
    return sorted(f"{h['session_id']}:{h['path']}" for g in result["groups"] for h in g["hits"])


def index_rows(hub: Hub) -> tuple[set[tuple[Any, ...]], dict[str, str]]:
    """The brain documents the index holds (everything but their ids) and the brains' marks."""
    conn = sqlite3.connect(f"file:{hub.core.settings.data_path / 'hub.db'}?mode=ro", uri=True)
    try:
        docs = conn.execute(
            """SELECT d.family, d.source, d.key, d.project_id, d.session_id, d.snippet, d.meta, f.body
               FROM search_docs d JOIN search_fts f ON f.rowid = d.id WHERE d.family = 'brain'"""
        ).fetchall()
        marks = conn.execute("SELECT source, mark FROM search_marks WHERE source LIKE 'brain:%'").fetchall()
        return set(docs), {str(s): str(m) for s, m in marks}
    finally:
        conn.close()


def sessions_part(hub: Hub) -> SessionsPart:
    (part,) = [p for p in hub.core.parts if isinstance(p, SessionsPart)]
    return part


class Pulls(list[str]):
    """The brain sources a pass read from their files (`search_documents`)."""


@pytest.fixture
def pulls(monkeypatch: pytest.MonkeyPatch) -> Pulls:
    seen = Pulls()
    real = SessionsPart.search_documents

    async def spy(self: SessionsPart, source: str, mark: str | None) -> SearchBatch | None:
        seen.append(source)
        return await real(self, source, mark)

    monkeypatch.setattr(SessionsPart, "search_documents", spy)
    return seen


async def test_a_pushed_batch_is_what_the_pull_reads_from_the_same_mark(
    hub: Hub, pulls: Pulls, monkeypatch: pytest.MonkeyPatch
) -> None:
    sid = await start(hub)
    await put(hub, sid, "/kv/seed", "first write: read from the file")  # never indexed: pulled whole
    await hub.search_index.settled()
    assert set(pulls) == {brain_search.source(sid)}
    pulls.clear()
    pairs: list[tuple[SearchBatch, SearchBatch]] = []
    real_take = hub.brains.pushes.take

    def take(session_id: str, since: str | None) -> SearchBatch | None:
        pushed = real_take(session_id, since)
        if pushed is not None:
            with sqlite3.connect(hub.brains.path_of(session_id)) as conn:
                pairs.append((pushed, brain_search.batch(conn, session_id, "web", since)))
            conn.close()
        return pushed

    monkeypatch.setattr(hub.brains.pushes, "take", take)
    steps: list[list[tuple[str, str | None]]] = [
        [("/kv/a", "aardvark one")],
        [("/kv/b", "badger"), ("/fs/c.md", "caracal"), ("/kv/a", "aardvark two")],  # one pass, a path twice
        [("/kv/b", None)],
        [("/kv/b", "badger again"), ("/fs/c.md", None), ("/kv/d", "dingo")],
        [("/kv/d", None), ("/kv/d", "dingo back"), ("/kv/seed", None)],
    ]
    for step in steps:
        async with hub.search_index.held():  # the step's writes land in one pass
            for path, content in step:
                await (delete(hub, sid, path) if content is None else put(hub, sid, path, content))
        await hub.search_index.settled()
    assert len(pairs) == len(steps)
    assert pulls == []  # every step went by push
    for pushed, pulled in pairs:
        assert not pushed.replace and not pulled.replace
        assert (pushed.docs, list(pushed.gone), pushed.mark) == (pulled.docs, list(pulled.gone), pulled.mark)
    assert await found(hub, "aardvark") == [f"{sid}:/kv/a"]
    assert await found(hub, "badger") == [f"{sid}:/kv/b"]
    assert await found(hub, "caracal") == [] and await found(hub, "first") == []
    assert await found(hub, "dingo") == [f"{sid}:/kv/d"]


async def test_push_and_a_whole_pull_leave_the_same_index_rows(hub: Hub, pulls: Pulls) -> None:
    ids = [await start(hub, f"s{n}") for n in range(5)]
    for sid in ids:
        await put(hub, sid, "/kv/k0", "seed")
    await hub.search_index.settled()
    pulls.clear()

    async def writer(sid: str, turn: int) -> None:
        for n in range(6):
            path = f"/kv/k{n % 3}"
            if (n + turn) % 4 == 3:
                await delete(hub, sid, path)
            else:
                await put(hub, sid, path, f"wombat {sid} {turn} {n}")

    for turn in range(3):  # writes to every brain at once, some to the same path, racing the passes
        async with anyio.create_task_group() as tg:
            for sid in ids:
                tg.start_soon(writer, sid, turn)
                tg.start_soon(put, hub, sid, f"/fs/t{turn}.md", f"quokka {turn}")
        await hub.search_index.settled()
    pushed = index_rows(hub)
    assert len(pushed[0]) >= len(ids) * 4 and len(pushed[1]) == len(ids)
    assert len(pulls) < 3 * len(ids)  # most of it went by push (a race may leave a seq missing: pulled)
    await hub.search_index.rebuild()  # every brain read whole from its file
    assert index_rows(hub) == pushed


async def test_a_write_whose_note_was_lost_is_healed_by_the_pull(
    hub: Hub, pulls: Pulls, monkeypatch: pytest.MonkeyPatch
) -> None:
    sid = await start(hub)
    await put(hub, sid, "/kv/a", "ant")
    await hub.search_index.settled()
    pulls.clear()
    real_note = hub.brains.pushes.note

    def lose_b(session_id: str, project_id: str, counter: Any, path: str, value: bytes | None) -> None:
        if path != "/kv/b":  # as if the hub died between /kv/b's commit and its note
            real_note(session_id, project_id, counter, path, value)

    monkeypatch.setattr(hub.brains.pushes, "note", lose_b)
    async with hub.search_index.held():
        await put(hub, sid, "/kv/b", "bison")
        await put(hub, sid, "/kv/c", "camel")  # noted, but its seq does not follow the mark
    await hub.search_index.settled()
    assert pulls == [brain_search.source(sid)]
    assert await found(hub, "bison") == [f"{sid}:/kv/b"] and await found(hub, "camel") == [f"{sid}:/kv/c"]
    pulls.clear()
    await put(hub, sid, "/kv/c", "camel and bison")  # from the pulled mark on, pushes again
    await hub.search_index.settled()
    assert pulls == []
    assert await found(hub, "bison") == [f"{sid}:/kv/b", f"{sid}:/kv/c"]


async def test_a_write_lost_with_the_process_is_healed_at_the_next_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"
    async with Hub.open(settings_for(data), clock=FakeClock()) as hub:
        await open_world(hub)
        sid = await start(hub)
        await put(hub, sid, "/kv/a", "ant")
        await hub.search_index.settled()
        # The process dies between the commit and the note: neither the note nor the touch lands.
        monkeypatch.setattr(hub.brains.pushes, "note", lambda *args: None)
        monkeypatch.setattr(hub.brains.touched, "add", lambda sid: None)
        await put(hub, sid, "/kv/b", "bison")
        await hub.search_index.settled()
        assert await found(hub, "bison") == []
    async with Hub.open(settings_for(data), clock=FakeClock()) as hub:
        await hub.search_index.settled()
        assert await found(hub, "bison") == [f"{sid}:/kv/b"]
        await put(hub, sid, "/kv/a", "ant and bison")
        await hub.search_index.settled()
        assert await found(hub, "bison") == [f"{sid}:/kv/a", f"{sid}:/kv/b"]


def test_notes_stand_for_the_file_only_from_the_mark_the_index_holds() -> None:
    pushes = brain_search.Pushes()

    def noted(*changes: tuple[str, int, str, bytes | None]) -> None:
        for epoch, seq, path, value in changes:
            pushes.note("s", "p", (epoch, seq), path, value)

    noted(("e", 5, "/kv/a", b"x"), ("e", 6, "/kv/b", None))
    assert pushes.take("s", None) is None  # never indexed: read whole
    assert pushes.take("s", "e:4") is None  # taken once: the last call had it
    noted(("e", 5, "/kv/a", b"x"), ("e", 6, "/kv/b", None))
    assert pushes.take("s", "f:4") is None  # another counter
    noted(("e", 5, "/kv/a", b"x"), ("e", 7, "/kv/b", None))
    assert pushes.take("s", "e:4") is None  # seq 6 missing
    noted(("e", 5, "/kv/a", b"x"), ("e", 6, "/kv/b", None))
    assert pushes.take("s", "0123456789abcdef0123456789abcdef") is None  # a digest mark
    noted(("e", 5, "/kv/a", b"x"), ("e", 6, "/kv/b", None))
    assert pushes.take("s", "e:6") is None  # nothing after the mark
    noted(("e", 4, "/kv/z", b"old"), ("e", 5, "/kv/a", b"x"), ("e", 6, "/kv/b", None), ("e", 7, "/kv/a", b"y"))
    batch = pushes.take("s", "e:4")
    assert batch is not None and not batch.replace and batch.mark == "e:7"
    assert [(d.key, d.text, d.project_id) for d in batch.docs] == [("s:/kv/a", "/kv/a\ny", "p")]
    assert list(batch.gone) == [("brain", "s:/kv/b")]
    noted(("e", 8, "/kv/a", b"x"))
    pushes.forget("s")  # the file was replaced (a fork's copy) or removed
    assert pushes.take("s", "e:7") is None
    noted(*[("e", n, f"/kv/{n}", b"v") for n in range(1, brain_search.STEP_MAX + 2)])
    assert pushes.take("s", "e:0") is None  # past a step the notes start again: the file is read


def test_a_burst_to_one_path_waits_as_one_value_and_late_notes_keep_the_newest() -> None:
    pushes = brain_search.Pushes()
    for seq in range(1, 101):
        pushes.note("s", "p", ("e", seq), "/kv/a", f"v{seq}".encode())
    pushes.note("s", "p", ("e", 102), "/kv/b", b"newer")  # its note arrives before 101's
    pushes.note("s", "p", ("e", 101), "/kv/b", b"older")
    held = pushes._pending["s"]
    assert sorted(v for _, v in held.latest.values()) == [b"newer", b"v100"]  # one value a path
    batch = pushes.take("s", "e:0")
    assert batch is not None and batch.mark == "e:102"
    assert [(d.key, d.text) for d in batch.docs] == [("s:/kv/a", "/kv/a\nv100"), ("s:/kv/b", "/kv/b\nnewer")]
    pushes.note("s", "p", ("e", 103), "/kv/a", b"x")
    pushes.note("s", "p", ("e", 104), "/kv/b", None)
    batch = pushes.take("s", "e:103")  # from a later mark: only what follows it
    assert batch is not None and batch.docs == [] and list(batch.gone) == [("brain", "s:/kv/b")]
