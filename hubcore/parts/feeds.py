"""The feeds-and-inbox part: events, the human's inbox, answers and decisions with their deadline
sweeper, agents' attention and subscription queues, and the outbound webhook."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from hubcore.parts import Part, Task
from hubcore.services import events as ev
from hubcore.services.attention import AttentionService, purge_subscriptions
from hubcore.services.changes import Effects
from hubcore.services.core import Core
from hubcore.services.feed import FeedService
from hubcore.services.inbox import InboxService
from hubcore.services.posts import PostsService
from hubcore.services.resolutions import ResolutionsService
from hubcore.services.webhook import Webhook


class FeedsPart(Part):
    name = "feeds-and-inbox"

    def __init__(self, core: Core) -> None:
        self.resolutions = ResolutionsService(core)
        settle = self.resolutions.settle  # every read of open state settles due deadlines first
        self.posts = PostsService(core)
        self.inbox = InboxService(core, settle=settle)
        self.feed = FeedService(core, settle=settle)
        self.attention = AttentionService(core, settle)
        self.webhook = Webhook(core.settings, core.metrics)

    def purge_rows(self, conn: sqlite3.Connection, project_id: str) -> None:
        """The project's events, audit events, inbox items, cursors, keys and scoped subscriptions."""
        ev.purge_project(conn, project_id)
        purge_subscriptions(conn, project_id)

    def on_commit(self, effects: Effects) -> None:
        self.attention.on_commit(effects)
        self.webhook.on_commit(effects)

    def background(self) -> Sequence[Task]:
        tasks: list[Task] = [self.resolutions.run_sweeper]
        if self.webhook.enabled:
            tasks.append(self.webhook.run)
        return tasks
