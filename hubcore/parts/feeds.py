"""The feeds-and-inbox part: events, the human's inbox, answers and decisions with their deadline
sweeper, agents' attention and subscription queues, and the outbound webhook."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence

from hubcore.parts.protocol import Part, SearchBatch, SearchFamily, Task
from hubcore.services import events as ev
from hubcore.services import feed_search
from hubcore.services.attention import AttentionService, purge_subscriptions
from hubcore.services.changes import Effects
from hubcore.services.core import Core
from hubcore.services.feed import FeedService
from hubcore.services.feeds_schema import MIGRATIONS
from hubcore.services.inbox import InboxService
from hubcore.services.posts import PostsService
from hubcore.services.resolutions import ResolutionsService
from hubcore.services.webhook import Webhook
from hubcore.store.migrations import Migration


class FeedsPart(Part):
    name = "feeds-and-inbox"
    search_family_names = (feed_search.FAMILY,)

    def __init__(self, core: Core) -> None:
        self.core = core
        self._search_touched = False  # an event was appended since the index last asked
        self.resolutions = ResolutionsService(core)
        settle = self.resolutions.settle  # every read of open state settles due deadlines first
        self.posts = PostsService(core)
        self.inbox = InboxService(core, settle=settle)
        self.feed = FeedService(core, settle=settle)
        self.attention = AttentionService(core, settle)
        self.webhook = Webhook(core.settings, core.metrics)

    @classmethod
    def migrations(cls) -> Sequence[Migration]:
        return MIGRATIONS

    def purge_rows(self, conn: sqlite3.Connection, project_id: str) -> None:
        """The project's events, audit events, inbox items, cursors, keys and scoped subscriptions."""
        ev.purge_project(conn, project_id)
        purge_subscriptions(conn, project_id)

    def on_commit(self, effects: Effects) -> None:
        self.attention.on_commit(effects)
        self.webhook.on_commit(effects)
        if effects.kinds:
            self._search_touched = True
            self.core.nudge.note()

    # The search index takes events in id order from the newest it holds (one source, "feed").
    def search_touched(self) -> set[str]:
        touched, self._search_touched = self._search_touched, False
        return {feed_search.SOURCE} if touched else set()

    async def search_sources(self) -> Mapping[str, str]:
        return {feed_search.SOURCE: await self.core.store.read(feed_search.mark)}

    async def search_documents(self, source: str, mark: str | None) -> SearchBatch | None:
        return await self.core.store.read(lambda conn: feed_search.batch(conn, mark))

    def search_families(self) -> Sequence[SearchFamily]:
        return (SearchFamily(feed_search.FAMILY, feed_search.hit),)

    def background(self) -> Sequence[Task]:
        tasks: list[Task] = [self.resolutions.run_sweeper]
        if self.webhook.enabled:
            tasks.append(self.webhook.run)
        return tasks
