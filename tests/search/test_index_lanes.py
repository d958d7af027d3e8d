"""An index pass over many touched sources (issue 27 part 5, third session): their marks are read
at once and the sources are indexed in lanes. Every source is still indexed, at the mark of what it
holds, and a second write to a source in the same burst is what the index ends with."""

from __future__ import annotations

import sqlite3

import anyio
import pytest

from hubcore.config import HubSettings
from hubcore.hub import Hub
from hubcore.services.search import index
from tests.requests import a_brain_put, a_session_start
from tests.search.conftest import ALICE, hits, search

pytestmark = pytest.mark.anyio

SESSIONS = 3 * index.INDEX_LANES + 1  # more sources than lanes, not a multiple of them


def tag(n: int) -> str:
    """A word of its own per session, none a prefix of another (search matches prefixes)."""
    return "q" + chr(97 + n // 26) + chr(97 + n % 26)


def marks(settings: HubSettings) -> dict[str, str]:
    conn = sqlite3.connect(settings.data_path / "hub.db")
    try:
        return dict(conn.execute("SELECT source, mark FROM search_marks WHERE source LIKE 'brain:%'").fetchall())
    finally:
        conn.close()


async def put(hub: Hub, sid: str, content: str) -> None:
    await hub.brains.write_entry(ALICE, a_brain_put(path="/kv/note", content=content, store="session", session_id=sid))


async def test_every_source_of_a_burst_is_indexed_at_its_own_mark(hub: Hub, settings: HubSettings) -> None:
    sids = [(await hub.sessions.start(ALICE, a_session_start("web", f"s{i}")))["session_id"] for i in range(SESSIONS)]
    async with anyio.create_task_group() as tg:
        for n, sid in enumerate(sids):
            tg.start_soon(put, hub, sid, f"wombat{tag(n)} first")
    await hub.search_index.catch_up()
    first = marks(settings)
    assert set(first) == {f"brain:{sid}" for sid in sids}

    # Every session written again, and one of them twice: the index holds the last of each.
    async with anyio.create_task_group() as tg:
        for n, sid in enumerate(sids):
            tg.start_soon(put, hub, sid, f"numbat{tag(n)} second")
    await put(hub, sids[0], "bilby last")
    await hub.search_index.catch_up()
    second = marks(settings)
    assert set(second) == set(first) and all(second[s] != first[s] for s in first)

    for n, sid in enumerate(sids[1:], start=1):
        found = hits(await search(hub, ALICE, f"numbat{tag(n)}"))
        assert [h["session_id"] for h in found] == [sid], n
        assert hits(await search(hub, ALICE, f"wombat{tag(n)}")) == []
    assert [h["session_id"] for h in hits(await search(hub, ALICE, "bilby"))] == [sids[0]]
    assert hits(await search(hub, ALICE, f"numbat{tag(0)}")) == []
    # A pass with nothing touched writes nothing.
    await hub.search_index.catch_up()
    assert marks(settings) == second
