"""A source indexed whole (a project's pages, a session's brain) is written as a difference: a page
write rewrites that page's document only; the others keep their rows (and so their vectors)."""

from __future__ import annotations

import sqlite3

import pytest

from hubcore.config import HubSettings
from hubcore.hub import Hub
from hubcore.services.kb import models
from tests.kb.support import put as kb_put
from tests.kb.support import req
from tests.search.conftest import ALICE, hits, search

pytestmark = pytest.mark.anyio


def doc_ids(settings: HubSettings) -> dict[str, int]:
    conn = sqlite3.connect(f"file:{settings.data_path / 'hub.db'}?mode=ro", uri=True)
    try:
        return {r[0]: r[1] for r in conn.execute("SELECT key, id FROM search_docs WHERE family = 'kb'")}
    finally:
        conn.close()


async def test_a_page_write_rewrites_only_its_document(hub: Hub, settings: HubSettings) -> None:
    for n in range(5):
        await kb_put(hub, ALICE, f"/fs/p{n}.md", f"---\ntype: Concept\n---\ngiraffe {n}\n", project_id="web")
    assert len(hits(await search(hub, ALICE, "giraffe", type="kb"))) == 5
    before = doc_ids(settings)
    await kb_put(hub, ALICE, "/fs/p2.md", "---\ntype: Concept\n---\nantelope\n", project_id="web")
    await hub.kb.delete(ALICE, req(models.KbDelete, path="/fs/p4.md", project_id="web"))
    assert [h["path"] for h in hits(await search(hub, ALICE, "antelope", type="kb"))] == ["/fs/p2.md"]
    assert sorted(h["path"] for h in hits(await search(hub, ALICE, "giraffe", type="kb"))) == [
        "/fs/p0.md",
        "/fs/p1.md",
        "/fs/p3.md",
    ]
    after = doc_ids(settings)
    assert set(after) == set(before) - {"web:/fs/p4.md"}
    assert after["web:/fs/p2.md"] != before["web:/fs/p2.md"]
    assert {k: after[k] for k in ("web:/fs/p0.md", "web:/fs/p1.md", "web:/fs/p3.md")} == {
        k: before[k] for k in ("web:/fs/p0.md", "web:/fs/p1.md", "web:/fs/p3.md")
    }
