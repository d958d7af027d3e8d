"""The push keys survive a backup and a restore (same key, still 0600), and the send queue is bounded:
a burst past it drops the oldest sends and counts them, and the write never waits."""

from __future__ import annotations

import stat
from datetime import UTC, datetime
from pathlib import Path

import anyio
import pytest
from prometheus_client import Counter

from hubcore.caller import Caller
from hubcore.clock import FakeClock
from hubcore.hub import Hub, supported_version
from hubcore.ops.backup import offline_backup
from hubcore.ops.restore import restore
from hubcore.services.changes import Effects
from hubcore.services.push import sender as sender_mod
from hubcore.services.push.devices import DeviceCreate
from hubcore.services.push.keys import KEYS_PATH, load_or_create
from hubcore.services.push.sender import Push, PushSender
from hubcore.services.requests import parse
from tests.harness import test_settings as settings_for
from tests.push.receiver import Device
from tests.requests import a_project, a_question, an_agent, an_answer

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


async def test_a_stuck_push_service_never_holds_a_write_up(hub: Hub) -> None:
    """Every send hangs: questions are still posted and answered, and the pushes wait their turn."""
    stuck = Stuck()
    hub.push.sender._transport = stuck
    await hub.agents.create(Caller.admin(), an_agent(id="bot", display_name="Bot"))
    await hub.projects.create(Caller.admin(), a_project(id="proj"))
    await hub.push.devices.create(Caller.admin(), parse(DeviceCreate, Device("https://push.example/x").subscription()))
    with anyio.fail_after(10):  # a hang guard, not a timing: the writes must not wait at all
        for n in range(20):
            asked = await hub.posts.question_post(Caller.agent("bot"), a_question(project_id="proj", summary=f"Q{n}?"))
            await hub.resolutions.answer(Caller.admin(), an_answer(question_id=asked["event_id"], body="yes"))
    assert 1 <= len(stuck.sent) <= 20 and not hub.push.sender.idle.is_set()
    stuck.release.set()
    await hub.push.sender.idle.wait()
