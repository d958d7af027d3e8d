"""The push keys survive a backup and a restore (same key, still 0600), and the send queue is bounded:
a burst past it drops the oldest sends and counts them, and the write never waits."""

from __future__ import annotations

import stat
from datetime import UTC, datetime
from pathlib import Path

import anyio
import pytest
from prometheus_client import Counter

from hubcore.clock import FakeClock
from hubcore.hub import Hub
from hubcore.ops.backup import offline_backup
from hubcore.ops.restore import restore
from hubcore.services.changes import Effects
from hubcore.services.push import sender as sender_mod
from hubcore.services.push.keys import KEYS_PATH, load_or_create
from hubcore.services.push.sender import Push, PushSender
from hubcore.store.migrations import supported_version
from tests.harness import test_settings as settings_for

pytestmark = pytest.mark.anyio


async def test_the_keys_are_backed_up_and_restored_private(tmp_path: Path, clock: FakeClock) -> None:
    data = tmp_path / "data"
    async with Hub.open(settings_for(data), clock=clock) as hub:
        key = hub.push.keys.public_key
    backup = offline_backup(data, tmp_path / "backups", moment=datetime(2027, 1, 1, tzinfo=UTC))
    assert KEYS_PATH in {f.path for f in backup.manifest.files}
    assert stat.S_IMODE((backup.path / KEYS_PATH).stat().st_mode) == 0o600
    restore(backup.path, tmp_path / "restored", force=False, supported_version=supported_version())
    assert stat.S_IMODE((tmp_path / "restored" / KEYS_PATH).stat().st_mode) == 0o600
    async with Hub.open(settings_for(tmp_path / "restored"), clock=clock) as hub:
        assert hub.push.keys.public_key == key  # devices subscribed to this key keep working


def test_keys_made_once_and_a_widened_file_is_narrowed(tmp_path: Path) -> None:
    first = load_or_create(tmp_path)
    path = tmp_path / KEYS_PATH
    path.chmod(0o644)
    again = load_or_create(tmp_path)
    assert again == first and stat.S_IMODE(path.stat().st_mode) == 0o600


class Stuck:
    """A push service that never answers until released: the sender must not hold writes up."""

    def __init__(self) -> None:
        self.release = anyio.Event()
        self.sent: list[Push] = []

    async def send(self, pushes: list[Push]) -> list[int]:
        self.sent.extend(pushes)
        await self.release.wait()
        return [201] * len(pushes)


async def test_a_full_queue_drops_the_oldest_and_counts_it(hub: Hub, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sender_mod, "QUEUE_MAX", 3)
    counter = Counter("t_push", "test", ["result"], registry=None)
    sender = PushSender(hub.core, hub.push.keys, counter, transport=Stuck())
    for n in range(5):  # no run task: nothing is taken off the queue
        effects = Effects()
        effects.event({"kind": "question", "project_id": "p", "id": f"E{n}", "actor": "bot"})
        sender.on_commit(effects)
    assert [job.event_id for job in sender._queue] == ["E2", "E3", "E4"]
    assert counter.labels(result="dropped")._value.get() == 2
