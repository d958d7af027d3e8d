"""The offline operations' view of a data directory: the held check changes nothing on disk."""

from __future__ import annotations

from pathlib import Path

import pytest

from hubcore import hub as hub_module
from hubcore.hub import Hub
from hubcore.ops.datadir import LOCK_NAME, held_by_hub, is_inside
from tests.backup.support import tree
from tests.harness import test_settings as settings_for

pytestmark = pytest.mark.anyio


def test_the_lock_is_the_one_the_hub_takes() -> None:
    assert LOCK_NAME == hub_module.LOCK_NAME


async def test_held_only_while_a_hub_runs_and_the_check_writes_nothing(tmp_path: Path) -> None:
    data = tmp_path / "data"
    assert not held_by_hub(data) and tree(tmp_path) == {}  # a missing directory is not created
    async with Hub.open(settings_for(data)):
        before = tree(tmp_path)
        assert held_by_hub(data)
        assert tree(tmp_path) == before
    assert not held_by_hub(data)


def test_inside_resolves_symlinks(tmp_path: Path) -> None:
    (tmp_path / "data" / "x").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "data" / "x")
    assert is_inside(tmp_path / "link", tmp_path / "data")
    assert is_inside(tmp_path / "data", tmp_path / "data")
    assert not is_inside(tmp_path / "elsewhere", tmp_path / "data")
    assert not is_inside(tmp_path / "data-2", tmp_path / "data")  # a prefix is not a parent
