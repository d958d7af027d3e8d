"""The kept unseen counts (`feed_stats.unseen`) against the counted range above the human's cursor.

The project listing and Home read a per-project count that every append, removal and move of the
cursor keeps. The oracle is the query the listing ran before (count the events above the cursor,
every event when there is none): after any sequence of the operations that append, remove or move
(refused ones included), the kept count equals it for every project, on the listing and on Home.
The migration that introduced the count back-fills it to the same figure.
"""

from __future__ import annotations

import functools
import sqlite3
import tempfile
from collections.abc import Awaitable, Callable
from contextlib import closing, suppress
from pathlib import Path
from typing import Any
from unittest.mock import patch

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hubcore.caller import Caller
from hubcore.clock import FakeClock
from hubcore.errors import HubError
from hubcore.hub import Hub, hub_migrations, supported_version
from hubcore.services import events as ev
from hubcore.services import feed, ids
from hubcore.store import migrations as store_migrations
from tests import harness
from tests.requests import (
    a_decision,
    a_project,
    a_project_update,
    a_question,
    a_read_all,
    a_seen,
    a_signal,
    an_agent,
    an_answer,
    an_inbox_mark,
)

ADMIN, BOT = Caller.admin(), Caller.agent("bot")
PROJECTS = ("a", "b", "space-bot")
CAP = 12  # a small event ceiling, so that refused appends are part of the sequences
NOW = 1_800_000_000.0

# The listing's query before the count was kept: a range scan above each project's cursor.
ORACLE = """SELECT p.id, CASE WHEN p.last_seen_event IS NULL THEN COALESCE(fs.events, 0)
                ELSE (SELECT COUNT(*) FROM events e WHERE e.project_id = p.id AND e.id > p.last_seen_event) END
            FROM projects p LEFT JOIN feed_stats fs ON fs.project_id = p.id"""

project = st.sampled_from(PROJECTS)
pick = st.integers(min_value=0, max_value=60)  # the n-th (modulo) event, open question or item
APPEND = st.tuples(
    st.just("append"), project, st.sampled_from(["signal", "idea", "approval", "question"]), st.booleans()
)
# Mostly an event of the project above its cursor (the cursor moves), else any event (another
# project's or one below the cursor leaves it), the newest (absent) or an id that names nothing.
SEEN = st.tuples(st.just("seen"), project, st.one_of(pick, pick, pick, st.none(), st.just("bogus")), st.booleans())
ARGUMENTS: dict[str, st.SearchStrategy[tuple[Any, ...]]] = {
    "append": APPEND,
    "seen": SEEN,
    "answer": st.tuples(st.just("answer"), pick),
    "decide": st.tuples(st.just("decide"), pick, st.booleans()),
    "expire": st.tuples(st.just("expire")),
    "read_all": st.tuples(st.just("read_all"), st.one_of(st.none(), project)),
    "mark": st.tuples(st.just("mark"), pick, st.booleans()),
    "remove": st.tuples(st.just("remove"), pick),
    "delete": st.tuples(st.just("delete"), project),
    "hide": st.tuples(st.just("hide"), project),
}
# Appends and cursor moves are most of a day; the rest often enough to meet them in every state.
WEIGHTS = {
    "append": 8,
    "seen": 5,
    "remove": 2,
    "answer": 1,
    "decide": 1,
    "expire": 1,
    "read_all": 1,
    "mark": 1,
    "delete": 1,
    "hide": 1,
}
OPERATIONS = st.sampled_from([name for name, n in WEIGHTS.items() for _ in range(n)]).flatmap(ARGUMENTS.__getitem__)

MIGRATIONS = hub_migrations()  # hub.db's chain, gathered from the parts
migrate = functools.partial(store_migrations.migrate, migrations=MIGRATIONS)


def counted(conn: sqlite3.Connection) -> dict[str, int]:
    return {pid: int(n) for pid, n in conn.execute(ORACLE)}


def kept(conn: sqlite3.Connection) -> dict[str, int]:
    return {
        pid: int(n)
        for pid, n in conn.execute(
            "SELECT p.id, COALESCE(fs.unseen, 0) FROM projects p LEFT JOIN feed_stats fs ON fs.project_id = p.id"
        )
    }


def nth(conn: sqlite3.Connection, sql: str, n: int, *params: str) -> str | None:
    found = [r[0] for r in conn.execute(sql, params)]
    return found[n % len(found)] if found else None


class World:
    """One hub with an agent `bot` and the projects `a` and `b`; `run` applies one operation."""

    def __init__(self, hub: Hub, clock: FakeClock) -> None:
        self.hub, self.clock = hub, clock

    async def pick(self, sql: str, n: int) -> str | None:
        return await self.hub.core.store.read(lambda conn: nth(conn, sql, n))

    async def run(self, op: tuple[Any, ...]) -> None:
        handler: Callable[..., Awaitable[None]] = getattr(self, f"op_{op[0]}")
        with suppress(HubError):  # a refusal must leave the counts as true as a success does
            await handler(*op[1:])
        self.clock.advance(1)

    async def op_append(self, pid: str, kind: str, by_human: bool) -> None:
        who = ADMIN if by_human else BOT
        if kind == "question":
            await self.hub.posts.question_post(who, a_question(project_id=pid, summary="q?", expires_in_seconds=60))
        else:
            await self.hub.posts.signal_append(who, a_signal(project_id=pid, kind=kind, summary=kind))

    async def op_seen(self, pid: str, target: int | str | None, own: bool) -> None:
        event_id = target
        if isinstance(target, int):
            # Own: one of the project's events above its cursor (the cursor moves); else any event.
            where = (
                """WHERE project_id = ?1 AND id > COALESCE((SELECT last_seen_event FROM projects
                        WHERE id = ?1), '')"""
                if own
                else "WHERE ?1 IS NOT NULL"
            )
            event_id = await self.hub.core.store.read(
                lambda conn: nth(conn, f"SELECT id FROM events {where} ORDER BY id", target, pid)
            )
        await self.hub.feed.seen(ADMIN, a_seen(project_id=pid, event_id=event_id))

    async def op_answer(self, n: int) -> None:
        qid = await self.pick("SELECT event_id FROM inbox WHERE kind = 'question' ORDER BY event_id", n)
        if qid:
            await self.hub.resolutions.answer(ADMIN, an_answer(question_id=qid, body="yes"))

    async def op_decide(self, n: int, approve: bool) -> None:
        aid = await self.pick("SELECT event_id FROM inbox WHERE kind = 'approval' ORDER BY event_id", n)
        if aid:
            await self.hub.resolutions.decide(
                ADMIN, a_decision(approval_id=aid, decision="approve" if approve else "decline")
            )

    async def op_expire(self) -> None:
        self.clock.advance(60)  # past the deadline of every question asked until now: the sweeper answers as the hub
        await self.hub.resolutions.sweep()

    async def op_read_all(self, pid: str | None) -> None:
        await self.hub.inbox.read_all(ADMIN, a_read_all(project_id=pid))

    async def op_mark(self, n: int, read: bool) -> None:
        eid = await self.pick("SELECT event_id FROM inbox ORDER BY event_id", n)
        if eid:
            await self.hub.inbox.mark(ADMIN, an_inbox_mark(event_id=eid), "read" if read else "unread")

    async def op_remove(self, n: int) -> None:
        eid = await self.pick("SELECT id FROM events ORDER BY id", n)
        if eid:
            await self.hub.core.store.execute(lambda conn: ev.remove_events(conn, [eid]))

    async def op_delete(self, pid: str) -> None:
        await self.hub.projects.delete(ADMIN, pid)  # refused for the personal space
        await self.hub.projects.create(ADMIN, a_project(id=pid))

    async def op_hide(self, pid: str) -> None:
        # An agent hiding a project appends an audit signal past the ceiling.
        await self.hub.projects.update(BOT, a_project_update(project_id=pid, confidential=True))

    async def check(self, *, home: bool = False) -> None:
        """The kept counts equal the counted ones, on the listing (and on Home, which reads the same
        counts, when asked)."""
        await self.hub.resolutions.settle()  # as Home does first: a question past its deadline expires
        both = await self.hub.core.store.read(lambda conn: (kept(conn), counted(conn)))
        assert both[0] == both[1]
        listing = {p["id"]: p["unseen_events"] for p in await self.hub.projects.list(ADMIN)}
        assert listing == both[1]
        if home:
            rows = (await self.hub.home.home(ADMIN))["unseen"]
            assert {u["project_id"]: u["unseen_events"] for u in rows} == {pid: n for pid, n in both[1].items() if n}


async def play(data_dir: Path, ops: list[tuple[Any, ...]]) -> None:
    clock = FakeClock(NOW)
    async with Hub.open(harness.test_settings(data_dir, events_per_project=CAP), clock=clock) as hub:
        await hub.agents.create(ADMIN, an_agent(id="bot", display_name="Bot"))
        for pid in PROJECTS[:2]:
            await hub.projects.create(ADMIN, a_project(id=pid))
        world = World(hub, clock)
        for op in ops:
            await world.run(op)
            await world.check()
        await world.check(home=True)


@settings(max_examples=25, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=st.lists(OPERATIONS, min_size=30, max_size=100))
def test_kept_counts_equal_the_counted_range(ops: list[tuple[Any, ...]]) -> None:
    # Synchronous, with its own event loop per example: hypothesis stops a test by raising from a
    # draw, which must not happen inside the anyio plugin's shared runner. A cursor move counts
    # two ranges under a growing bound; starting it at 1 makes these short feeds meet every round.
    with tempfile.TemporaryDirectory() as tmp, patch.object(feed, "COUNT_FIRST", 1):
        anyio.run(play, Path(tmp) / "data", ops)


def test_a_walk_through_every_way_the_cursor_moves() -> None:
    """A fixed sequence that touches each branch: no cursor yet, a step, a jump to the newest, a
    removal above and below the cursor, a project deleted and created again."""
    ops: list[tuple[Any, ...]] = [
        ("append", "a", "signal", False),
        ("append", "a", "idea", True),
        ("append", "a", "question", False),
        ("seen", "a", 0, True),
        ("append", "a", "signal", False),
        ("seen", "a", 2, True),
        ("remove", 0),
        ("remove", 2),
        ("seen", "a", 1, True),
        ("seen", "a", None, True),
        ("append", "b", "approval", False),
        ("decide", 0, True),
        ("append", "b", "question", True),
        ("expire",),
        ("seen", "b", "bogus", True),
        ("seen", "b", 0, False),
        ("seen", "b", 0, True),
        ("delete", "b"),
        ("hide", "a"),
        ("read_all", None),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        anyio.run(play, Path(tmp) / "data", ops)


def old_id(n: int) -> str:
    """The n-th event id of the old store's feeds, minted an hour before the tests' clock."""
    return ids.encode(int((NOW - 3600) * 1000) + n, 0)


def _old_store(db: Path) -> None:
    """A store at the version before the kept count, with feeds in every state a cursor can be in."""
    migrate(db, now=NOW, migrations=MIGRATIONS[:4])
    with closing(sqlite3.connect(db)) as conn, conn:
        for pid, cursor in (("fresh", None), ("behind", old_id(4)), ("caught-up", old_id(109)), ("empty", None)):
            conn.execute(
                "INSERT INTO projects (id, display_name, created_at, last_seen_event) VALUES (?, ?, ?, ?)",
                (pid, pid, NOW, cursor),
            )
        events = [
            (old_id(base + n), pid)
            for base, pid in ((0, "behind"), (100, "caught-up"), (200, "fresh"), (300, "gone"))
            for n in range(10)
        ]  # "gone": events of no project row (the count is kept for them too)
        conn.executemany(
            "INSERT INTO events (id, project_id, kind, actor, summary, payload, created_at) "
            "VALUES (?, ?, 'signal', 'bot', 's', '{}', 0)",
            events,
        )
        conn.execute("""INSERT INTO feed_stats (project_id, events, newest_id)
                        SELECT project_id, COUNT(*), MAX(id) FROM events GROUP BY project_id""")


def test_the_migration_back_fills_the_counted_range(tmp_path: Path) -> None:
    db = tmp_path / "hub.db"
    _old_store(db)
    assert migrate(db, now=NOW + 1) == supported_version()
    with closing(sqlite3.connect(db)) as conn:
        assert kept(conn) == counted(conn) == {"fresh": 10, "behind": 5, "caught-up": 0, "empty": 0}
        gone = conn.execute("SELECT unseen FROM feed_stats WHERE project_id = 'gone'").fetchone()[0]
    assert gone == 10


@pytest.mark.anyio
async def test_a_migrated_store_keeps_counting(tmp_path: Path) -> None:
    """After the back-fill the listing reads the kept count, and later appends and moves keep it."""
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    _old_store(data_dir / "hub.db")
    async with Hub.open(harness.test_settings(data_dir), clock=FakeClock(NOW)) as hub:
        listing = {p["id"]: p["unseen_events"] for p in await hub.projects.list(ADMIN)}
        assert listing == {"fresh": 10, "behind": 5, "caught-up": 0, "empty": 0}
        await hub.agents.create(ADMIN, an_agent(id="bot", display_name="Bot"))
        await hub.posts.signal_append(BOT, a_signal(project_id="behind", summary="new"))
        assert (await hub.feed.seen(ADMIN, a_seen(project_id="behind", event_id=old_id(7))))["advanced"]
        assert (await hub.projects.get(ADMIN, "behind"))["unseen_events"] == 3  # E0008, E0009, the new one
        await hub.feed.seen(ADMIN, a_seen(project_id="fresh", event_id=old_id(203)))
        assert (await hub.projects.get(ADMIN, "fresh"))["unseen_events"] == 6
        both = await hub.core.store.read(lambda conn: (kept(conn), counted(conn)))
        assert both[0] == both[1]
