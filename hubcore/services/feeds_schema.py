"""The feeds-and-inbox part's hub.db schema: events and their tallies, the inbox, cursors and
idempotency keys (v2), agents' subscriptions (v3), the unseen counts (v5)."""

from __future__ import annotations

from hubcore.store.migrations import Migration, statements

# Feeds and the human in the loop: events, their per-project tallies, the inbox, agents' durable
# cursors and idempotency keys. `feed_stats` keeps counts and bytes so that the event ceiling and
# the stats never scan a million-row feed.
V2_FEEDS = statements(
    """CREATE TABLE events (
        id TEXT PRIMARY KEY,
        project_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        actor TEXT NOT NULL,
        summary TEXT NOT NULL,
        payload TEXT NOT NULL,
        session_id TEXT,
        thread_id TEXT,
        created_at REAL NOT NULL
    )""",
    """CREATE INDEX events_by_project ON events (project_id, id)""",
    """CREATE INDEX events_by_kind ON events (project_id, kind, id)""",
    """CREATE INDEX events_by_session ON events (project_id, session_id, id) WHERE session_id IS NOT NULL""",
    """CREATE INDEX events_by_thread ON events (thread_id, id) WHERE thread_id IS NOT NULL""",
    """CREATE TABLE feed_stats (
        project_id TEXT PRIMARY KEY,
        events INTEGER NOT NULL DEFAULT 0,
        bytes INTEGER NOT NULL DEFAULT 0,
        newest_id TEXT,
        newest_at REAL
    )""",
    """CREATE TABLE feed_actors (
        project_id TEXT NOT NULL,
        actor TEXT NOT NULL,
        events INTEGER NOT NULL DEFAULT 0,
        last_at REAL NOT NULL,
        PRIMARY KEY (project_id, actor)
    )""",
    """CREATE TABLE inbox (
        event_id TEXT PRIMARY KEY,
        project_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        actor TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('unread', 'read', 'waiting', 'resolved')),
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        expires_at REAL,
        on_expiry TEXT CHECK (on_expiry IN ('approve', 'decline')),
        resolution_id TEXT
    )""",
    """CREATE INDEX inbox_by_status ON inbox (status, event_id)""",
    """CREATE INDEX inbox_by_project ON inbox (project_id, event_id)""",
    """CREATE INDEX inbox_open ON inbox (project_id, actor) WHERE status = 'waiting'""",
    """CREATE INDEX inbox_due ON inbox (expires_at) WHERE status = 'waiting' AND expires_at IS NOT NULL""",
    """CREATE INDEX inbox_resolved ON inbox (actor, resolution_id) WHERE resolution_id IS NOT NULL""",
    """CREATE TABLE actor_cursors (
        actor TEXT NOT NULL,
        name TEXT NOT NULL,
        project_id TEXT NOT NULL DEFAULT '',
        value TEXT NOT NULL,
        updated_at REAL NOT NULL,
        PRIMARY KEY (actor, name, project_id)
    )""",
    """CREATE INDEX actor_cursors_by_project ON actor_cursors (project_id)""",
    """CREATE TABLE idempotency_keys (
        actor TEXT NOT NULL,
        scope TEXT NOT NULL,
        key TEXT NOT NULL,
        target TEXT NOT NULL,
        project_id TEXT,
        result TEXT NOT NULL,
        created_at REAL NOT NULL,
        PRIMARY KEY (actor, scope, key)
    )""",
    """CREATE INDEX idempotency_by_project ON idempotency_keys (project_id)""",
    # Upgrading seeds every project's cursor at its newest event (a v1 store has none yet).
    """UPDATE projects SET last_seen_event = (SELECT MAX(e.id) FROM events e WHERE e.project_id = projects.id)
       WHERE last_seen_event IS NULL""",
)

# Agents' standing interests (notify_subscribe); their per-project delivery cursors live in
# actor_cursors beside the attention queue's, named notify:sub:<id> and notify:attention.
V3_NOTIFICATIONS = statements(
    """CREATE TABLE notify_subscriptions (
        id TEXT PRIMARY KEY,
        actor TEXT NOT NULL,
        kinds TEXT NOT NULL,
        project_id TEXT,
        from_actor TEXT,
        drop_own INTEGER NOT NULL DEFAULT 0,
        seed TEXT NOT NULL DEFAULT '',
        created_at REAL NOT NULL
    )""",
    """CREATE INDEX notify_subscriptions_by_actor ON notify_subscriptions (actor, id)""",
    """CREATE INDEX notify_subscriptions_by_project ON notify_subscriptions (project_id)
       WHERE project_id IS NOT NULL""",
)

# Each project's count of feed events above the human's cursor, kept beside its other tallies as
# events are appended and removed and as the cursor moves, so that the project listing and Home read
# it instead of counting a range that grows with every event the human has not looked at. The
# back-fill counts it once: events above the cursor (every event while there is no cursor).
V5_UNSEEN = statements(
    """ALTER TABLE feed_stats ADD COLUMN unseen INTEGER NOT NULL DEFAULT 0""",
    """UPDATE feed_stats SET unseen = (
        SELECT COUNT(*) FROM events e WHERE e.project_id = feed_stats.project_id
        AND e.id > COALESCE((SELECT p.last_seen_event FROM projects p WHERE p.id = feed_stats.project_id), ''))""",
)

MIGRATIONS: tuple[Migration, ...] = (
    Migration(2, "feeds", V2_FEEDS),
    Migration(3, "notifications", V3_NOTIFICATIONS),
    Migration(5, "unseen counts", V5_UNSEEN),
)
