"""The push part: Web Push to the human's devices (`hubcore.services.push`).

What it brings: the VAPID keys in the data directory (made at the first start), the commit observer
that queues a push for every item that starts waiting (and a close for every resolved one), the
background sender, and the `hub_push_sends_total{result}` counter. Its devices live in hub.db.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prometheus_client import Counter

from hubcore.parts.protocol import Part, Task
from hubcore.services.changes import Effects
from hubcore.services.core import Core
from hubcore.services.push import schema
from hubcore.services.push.keys import KEYS_PATH, load_or_create
from hubcore.services.push.sender import PushSender, Transport
from hubcore.services.push.service import PushService
from hubcore.services.resolutions import ResolutionsService
from hubcore.store.migrations import Migration

if TYPE_CHECKING:
    from prometheus_client.registry import Collector


class PushPart(Part):
    name = "push"

    def __init__(
        self,
        core: Core,
        resolutions: ResolutionsService,
        notify_state: Callable[[], dict[str, Any]],
        *,
        transport: Transport | None = None,
    ) -> None:
        keys = load_or_create(core.settings.data_path)
        self.counter = Counter(
            "hub_push_sends",
            "Web Push sends, by result (delivered, failed, gone, retried, dropped)",
            ["result"],
            registry=None,
        )
        self.sender = PushSender(core, keys, self.counter, transport=transport)
        self.push = PushService(core, keys, self.sender, resolutions, notify_state)

    @classmethod
    def migrations(cls) -> Sequence[Migration]:
        return schema.MIGRATIONS

    @classmethod
    def key_files(cls, data_dir: Path) -> Iterable[Path]:
        return (data_dir / KEYS_PATH,)

    def on_commit(self, effects: Effects) -> None:
        self.sender.on_commit(effects)

    def background(self) -> Sequence[Task]:
        return (self.sender.run,)

    def collectors(self) -> Sequence[Collector]:
        return (self.counter,)
