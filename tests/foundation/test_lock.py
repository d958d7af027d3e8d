"""The data directory lock: one hub process per directory."""

from __future__ import annotations

import pytest

from hubcore.config import HubSettings
from hubcore.hub import DataDirLocked, Hub, data_dir_in_use

pytestmark = pytest.mark.anyio


async def test_a_second_open_of_the_same_directory_is_refused(settings: HubSettings) -> None:
    assert not data_dir_in_use(settings.data_path)
    async with Hub.open(settings):
        assert data_dir_in_use(settings.data_path)
        with pytest.raises(DataDirLocked) as caught:
            async with Hub.open(settings):
                pass
        assert str(settings.data_path) in caught.value.message and "pid" in caught.value.message
    assert not data_dir_in_use(settings.data_path)
    async with Hub.open(settings):
        pass
