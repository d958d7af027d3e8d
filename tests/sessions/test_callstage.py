"""The replay record staged in hub.db (issue 27 part 5, fourth session): rows are staged with the
touches in one hub.db command and moved into their brains in bulk. What a reader sees is the same
record as before, whatever is still staged: every reader (replay, fork, end, reassign, prune)
finds the staged rows, the order is the order noted, a move repeated after a crash appends nothing
twice, a restart moves what a kill left staged, a backup carries it, and `hub-cli check` and
doctor know the table. Runs on asyncio and trio."""

from __future__ import annotations

import random
import sqlite3
from collections.abc import AsyncIterator
from dataclasses import astuple
from datetime import UTC, datetime
from pathlib import Path

import anyio
import pytest

from hubcore.caller import Caller
from hubcore.clock import FakeClock
from hubcore.hub import Hub, supported_version
from hubcore.ops.backup import offline_backup
from hubcore.ops.check import check
from hubcore.ops.doctor import doctor
from hubcore.ops.restore import restore
from hubcore.services import brain_files, callstage
from hubcore.services.calllog import Call
from hubcore.store import jsonrows
from tests.harness import test_settings as settings_for
from tests.ops.support import problem_lines, readings
from tests.requests import a_brain_put, a_project, a_prune, a_reassign, a_session_end, a_session_start, an_agent

pytestmark = pytest.mark.anyio

HUMAN, ALICE, BOB = Caller.admin(), Caller.agent("alice"), Caller.agent("bob")


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def setup(hub: Hub) -> None:
    await hub.projects.create(HUMAN, a_project(id="web"))
    await hub.agents.create(HUMAN, an_agent(id="alice"))
    await hub.agents.create(HUMAN, an_agent(id="bob"))
    hub.brains.calls.delay = 3600.0  # nothing is staged or moved behind unless the test says when
    hub.brains.calls.move_every = 3600.0


@pytest.fixture
async def hub(tmp_path: Path) -> AsyncIterator[Hub]:
    async with Hub.open(settings_for(tmp_path / "data"), clock=FakeClock()) as h:
        await setup(h)
        yield h


async def start(hub: Hub, name: str = "task") -> str:
    return str((await hub.sessions.start(ALICE, a_session_start("web", name)))["session_id"])


async def stage(hub: Hub) -> None:
    """What the call log's task does every 0.1 s: stage what is buffered, move nothing."""
    log = hub.brains.calls
    async with log.exclusive():
        await log.stage_held(None)


def in_brain(path: Path) -> list[str]:
    if not path.exists():
        return []
    with sqlite3.connect(path) as conn:
        return [r[0] for r in conn.execute("SELECT tool FROM calls ORDER BY id")]


def staged(db: Path, sid: str | None = None) -> list[str]:
    with sqlite3.connect(db) as conn:
        return [r[1].tool for r in callstage.staged(conn, sid, 10_000)]


def note(hub: Hub, sid: str, *tools: str) -> None:
    for tool in tools:
        hub.brains.note_call(sid, tool, {"tool": tool}, "ok")


async def test_staging_writes_hub_db_only_and_replay_reads_the_staged_rows_in_order(hub: Hub) -> None:
    sid, other = await start(hub), await start(hub, "other")
    note(hub, sid, "a", "b")
    note(hub, other, "x")
    await stage(hub)  # one hub.db command: every session's rows and touches
    assert in_brain(hub.brains.path_of(sid)) == [] and staged(hub.core.store.path) == ["a", "b", "x"]
    note(hub, sid, "c")  # still buffered: newer than the staged rows
    await stage(hub)
    note(hub, sid, "d")
    replay = await hub.brains.replay(HUMAN, sid)
    assert [e["tool"] for e in replay["events"]] == ["a", "b", "c", "d"]
    assert replay["events"][0]["arguments"] == '{"tool":"a"}'
    assert in_brain(hub.brains.path_of(sid)) == ["a", "b", "c", "d"]
    assert staged(hub.core.store.path) == ["x"]  # another session's rows wait for the next move
    await hub.brains.calls.flush()
    assert in_brain(hub.brains.path_of(other)) == ["x"] and staged(hub.core.store.path) == []


async def test_every_reader_of_the_record_sees_the_staged_rows(hub: Hub) -> None:
    forked_from, ended, moved, pruned = [await start(hub, n) for n in ("src", "ended", "moved", "pruned")]
    for sid in (forked_from, ended, moved, pruned):
        note(hub, sid, "brain_get")
    await stage(hub)  # all four staged, none moved
    fork = await hub.sessions.start(BOB, a_session_start("web", "copy", {"session_id": forked_from}))
    assert fork["started"] == "forked"
    assert in_brain(hub.brains.path_of(fork["session_id"])) == ["brain_get"]
    await hub.sessions.end(ALICE, a_session_end(session_id=ended))
    assert in_brain(hub.brains.path_of(ended)) == ["brain_get"]  # before the seal
    await hub.sessions.reassign(HUMAN, a_reassign(session_id=moved, agent="bob"))
    assert in_brain(hub.brains.path_of(moved)) == ["brain_get"]
    await hub.sessions.end(ALICE, a_session_end(session_id=pruned))
    note(hub, pruned, "session_end")
    await stage(hub)
    await hub.storage.prune(HUMAN, a_prune(session_id=pruned))
    assert in_brain(hub.brains.path_of(pruned)) == ["brain_get", "session_end"]
    assert staged(hub.core.store.path) == []


async def test_a_move_repeated_after_a_crash_appends_nothing_twice(hub: Hub) -> None:
    sid = await start(hub)
    note(hub, sid, "a", "b")
    await stage(hub)
    with sqlite3.connect(hub.core.store.path) as conn:
        rows = [r for _, r in callstage.staged(conn, sid, 100)]
    await hub.brains._move_rows(sid, rows)  # the brain written; hub.db not told (the crash)
    note(hub, sid, "c")
    await hub.brains.calls.flush(sid)  # the next move reads a, b again, then c
    assert in_brain(hub.brains.path_of(sid)) == ["a", "b", "c"]


async def test_a_brain_put_and_reads_interleaved_keep_the_order_noted(hub: Hub) -> None:
    sid = await start(hub)
    tools = []
    for n in range(30):
        if n % 7 == 3:
            await hub.brains.write_entry(
                ALICE, a_brain_put(path=f"/kv/{n}", content="v", store="session"), active=(sid, "web")
            )
        tools.append(f"t{n}")
        note(hub, sid, tools[-1])
        if n % 5 == 4:
            await stage(hub)
        if n % 11 == 10:
            await hub.brains.calls.flush(sid)
    replay = await hub.brains.replay(HUMAN, sid)
    assert [e["tool"] for e in replay["events"]] == tools


async def test_a_project_deletion_drops_its_sessions_staged_rows(hub: Hub) -> None:
    await hub.projects.create(HUMAN, a_project(id="gone"))
    kept, doomed = await start(hub), str((await hub.sessions.start(ALICE, a_session_start("gone", "t")))["session_id"])
    note(hub, kept, "a")
    note(hub, doomed, "b")
    await stage(hub)
    await hub.projects.delete(HUMAN, "gone")
    assert staged(hub.core.store.path) == ["a"]
    await hub.brains.calls.flush()
    assert not hub.brains.path_of(doomed).exists()


def kill_leaving_staged(data: Path, sid: str, tools: list[str]) -> None:
    """What a kill -9 after a staging command leaves: rows in hub.db, none in the brain."""
    with sqlite3.connect(data / "hub.db") as conn:
        callstage.stage(conn, {sid: [Call(1.0, tool, "{}", "ok") for tool in tools]})


async def test_a_restart_moves_what_a_kill_left_staged(tmp_path: Path) -> None:
    data = tmp_path / "data"
    async with Hub.open(settings_for(data), clock=FakeClock()) as hub:
        await setup(hub)
        sid = await start(hub)
        note(hub, sid, "a")
    kill_leaving_staged(data, sid, ["b", "c"])
    async with Hub.open(settings_for(data), clock=FakeClock()) as hub:
        assert staged(data / "hub.db") == ["b", "c"]
        hub.brains.calls.move_every = 0.0
        note(hub, sid, "d")  # wakes the call log's task, which finds the move due
        with anyio.fail_after(10):
            while (in_brain(hub.brains.path_of(sid)), staged(data / "hub.db")) != (["a", "b", "c", "d"], []):  # noqa: ASYNC110 (files, no event)
                await anyio.sleep(0.01)


async def test_a_backup_carries_the_staged_rows_and_a_restore_moves_them(tmp_path: Path) -> None:
    data = tmp_path / "data"
    async with Hub.open(settings_for(data), clock=FakeClock()) as hub:
        await setup(hub)
        sid = await start(hub)
        note(hub, sid, "a")
    kill_leaving_staged(data, sid, ["b"])
    (tmp_path / "backups").mkdir()
    backup = offline_backup(data, tmp_path / "backups", moment=datetime(2026, 11, 28, tzinfo=UTC)).path
    restore(backup, tmp_path / "restored", force=False, supported_version=supported_version())
    async with Hub.open(settings_for(tmp_path / "restored"), clock=FakeClock()) as hub:
        replay = await hub.brains.replay(HUMAN, sid)
        assert [e["tool"] for e in replay["events"]] == ["a", "b"]


async def test_a_restored_hub_db_older_than_its_brains_skips_no_new_row(tmp_path: Path) -> None:
    data = tmp_path / "data"
    async with Hub.open(settings_for(data), clock=FakeClock()) as hub:
        await setup(hub)
        sid = await start(hub)
        note(hub, sid, *(f"t{n}" for n in range(5)))
    with sqlite3.connect(data / "hub.db") as conn:
        assert callstage.counter(conn) == 5
        conn.execute("DELETE FROM sqlite_sequence WHERE name = 'call_staging'")  # hub.db copied before
        conn.commit()
        brain_files.sweep_restored(conn, data)
        assert callstage.counter(conn) == 5  # past the brain's mark
    async with Hub.open(settings_for(data), clock=FakeClock()) as hub:
        note(hub, sid, "new")
        replay = await hub.brains.replay(HUMAN, sid)
        assert [e["tool"] for e in replay["events"]] == [*(f"t{n}" for n in range(5)), "new"]


async def test_check_and_doctor_know_the_staging_table(tmp_path: Path) -> None:
    data = tmp_path / "data"
    settings = settings_for(data)
    async with Hub.open(settings, clock=FakeClock()) as hub:
        await setup(hub)
        sid = await start(hub)
    assert problem_lines(await check(data, settings)) == []
    assert "replay rows staged" not in readings(doctor(data, min_free_bytes=0, now=0.0))
    kill_leaving_staged(data, sid, ["a", "b"])
    kill_leaving_staged(data, "no-such-session", ["c"])
    assert readings(doctor(data, min_free_bytes=0, now=0.0))["replay rows staged"] == (
        "3 in hub.db, not yet moved into their brains"
    )
    assert problem_lines(await check(data, settings)) == [
        "hub.db call_staging: 1 replay rows staged for session no-such-session, which hub.db does not hold"
    ]


async def test_a_call_recorded_at_once_lands_after_the_staged_and_buffered_rows(hub: Hub) -> None:
    sid = await start(hub)
    note(hub, sid, "a")
    await stage(hub)
    note(hub, sid, "b")  # buffered, not staged
    await hub.brains.record_call(sid, "c", {}, "ok")
    assert in_brain(hub.brains.path_of(sid)) == ["a", "b", "c"] and staged(hub.core.store.path) == []
    note(hub, sid, "d")
    await hub.brains.calls.flush(sid)
    assert in_brain(hub.brains.path_of(sid)) == ["a", "b", "c", "d"]


ODD_TEXTS = [
    '{"looks": "like JSON", "nul": "\\u0000"}',
    'quote " and \\ backslash',
    "tab\tand\nnewline",
    "日本語 ✓ 🚀",
    "",
    "1.5",
]
NUL = "nul \x00 inside"  # SQLite's JSON would end the text there: rows holding one go one by one


@pytest.mark.parametrize("texts", [ODD_TEXTS, [*ODD_TEXTS, NUL]], ids=["json", "nul"])
async def test_every_field_survives_staging_and_the_move_exactly(hub: Hub, texts: list[str]) -> None:
    # Staging, the move's read and the brain's append each take their rows as one JSON statement
    # (`hubcore.store.jsonrows`): text stays text (even text that looks like JSON or a number),
    # and a timestamp comes back as the same float, not SQLite's 15-digit rendering of it.
    sid, other = await start(hub), await start(hub, "other")
    rng = random.Random(27)
    sent = [Call(rng.uniform(1.7e9, 1.8e9), f"tool{n}", text, texts[-1 - n]) for n, text in enumerate(texts)]
    expected: dict[str, list[Call]] = {sid: [], other: []}
    for n, call in enumerate(sent):  # the two sessions' rows interleaved
        first, second = (sid, other) if n % 2 == 0 else (other, sid)
        for s, c in ((first, call), (second, Call(float(n), "between", "{}", "ok"))):
            hub.brains.calls.note(s, c)
            expected[s].append(c)
    await stage(hub)
    with sqlite3.connect(hub.core.store.path) as conn:
        held = callstage.staged(conn, None, 100)
    assert {s: [Call(*r[1:]) for t, r in held if t == s] for s in (sid, other)} == expected  # each in order
    assert [type(v) for v in held[0][1]] == [int, float, str, str, str]
    await hub.brains.calls.flush()
    with sqlite3.connect(hub.brains.path_of(sid)) as conn:
        stored = [Call(*r) for r in conn.execute("SELECT at, tool, arguments, outcome FROM calls ORDER BY id")]
    assert stored == expected[sid]
    assert [type(v) for v in astuple(stored[-1])] == [float, str, str, str]
    with pytest.raises(ValueError, match="NUL"):  # refused whole, never cut short at the NUL
        jsonrows.payload([(NUL,)])
    with pytest.raises(ValueError, match="NUL"):
        jsonrows.payload({"a": NUL})
    with pytest.raises(ValueError, match="NUL"):
        jsonrows.payload([NUL])


async def test_a_nul_in_a_calls_arguments_is_recorded_escaped(hub: Hub) -> None:
    sid = await start(hub)
    hub.brains.note_call(sid, "brain_put", {"path": "/kv/a\x00b"}, "invalid")
    await stage(hub)
    replay = await hub.brains.replay(HUMAN, sid)
    assert [(e["tool"], e["arguments"], e["outcome"]) for e in replay["events"]] == [
        ("brain_put", '{"path":"/kv/a\\u0000b"}', "invalid")
    ]


async def test_unstaging_forgets_each_session_up_to_its_own_id_only(hub: Hub) -> None:
    a, b, c = await start(hub, "a"), await start(hub, "b"), await start(hub, "c")
    for sid in (a, b, c, a, b, c):
        note(hub, sid, f"t-{sid}")
    await stage(hub)
    with sqlite3.connect(hub.core.store.path) as conn:
        ids = {s: [r.id for t, r in callstage.staged(conn, s, 100)] for s in (a, b, c)}
        callstage.unstage(conn, {a: ids[a][0], b: ids[b][1]})  # c named nowhere: all kept
        assert {s: [r.id for t, r in callstage.staged(conn, s, 100)] for s in (a, b, c)} == {
            a: ids[a][1:],
            b: [],
            c: ids[c],
        }
        callstage.drop(conn, [a, c])
        assert callstage.count(conn) == 0
        callstage.unstage(conn, {})  # nothing to forget: no statement fails
        callstage.drop(conn, [])


async def test_touches_move_only_running_sessions_and_only_forward(hub: Hub) -> None:
    ahead, behind, ended = await start(hub, "ahead"), await start(hub, "behind"), await start(hub, "ended")
    await hub.sessions.end(ALICE, a_session_end(session_id=ended))

    def activity() -> dict[str, float]:
        with sqlite3.connect(hub.core.store.path) as conn:
            return dict(conn.execute("SELECT id, last_activity_at FROM sessions"))

    before = activity()
    touches = {ahead: before[ahead] + 60.25, behind: before[behind] - 60, ended: before[ended] + 60, "s_nope": 1.0}
    await hub.sessions.touch_many(touches)  # one statement for all of them
    assert activity() == {**before, ahead: before[ahead] + 60.25}
