"""`check`'s async step (the search index compared and rebuilt through a hub with no background
work) on asyncio and on trio."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from hubcore.ops.check import check
from tests.ops.support import make_hub_dir, problem_lines, readings

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def test_the_index_is_compared_and_rebuilt(tmp_path: Path) -> None:
    made = await make_hub_dir(tmp_path / "data")
    conn = sqlite3.connect(made.root / "hub.db")
    conn.execute("DELETE FROM search_marks")
    conn.commit()
    conn.close()
    first = await check(made.root, made.settings)
    assert problem_lines(first) == []
    assert readings(first)["search index"].startswith("differed from its sources (")
    second = await check(made.root, made.settings)
    assert readings(second)["search index"].startswith("matches its ")


async def test_the_quiet_hub_runs_no_background_work(tmp_path: Path) -> None:
    """The artifacts part's start sweep would remove a blob no version references: through the
    quiet hub it stays, as everything but the search index does."""
    import hashlib

    made = await make_hub_dir(tmp_path / "data", searched=False)  # the index differs: the hub is opened
    stray = hashlib.sha256(b"stray").hexdigest()
    path = made.root / "blobs" / stray[:2] / stray
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"stray")
    findings = await check(made.root, made.settings)
    assert readings(findings)["search index"].startswith("differed from its sources (")
    assert path.read_bytes() == b"stray"
