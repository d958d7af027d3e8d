"""The sessions-and-brains part's hub.db schema: the session rows (v4). Each brain is a file of
its own with its own schema (`hubcore.store.brain`)."""

from __future__ import annotations

from hubcore.store.migrations import Migration, statements

# Sessions: rows in hub.db, brains in their own files. A pruned session keeps its row (and its
# name) until its undo window passes.
V4_SESSIONS = statements(
    """CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        project_id TEXT NOT NULL,
        name TEXT NOT NULL,
        owner TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('active', 'ended')),
        handoff TEXT,
        lineage TEXT CHECK (lineage IN ('adopted', 'forked')),
        from_session TEXT,
        from_owner TEXT,
        created_at REAL NOT NULL,
        ended_at REAL,
        last_activity_at REAL NOT NULL,
        pruned_at REAL,
        undo_token_hash TEXT UNIQUE,
        UNIQUE (project_id, owner, name)
    )""",
    """CREATE INDEX sessions_by_project ON sessions (project_id, last_activity_at)""",
    """CREATE INDEX sessions_pruned ON sessions (pruned_at) WHERE pruned_at IS NOT NULL""",
)

MIGRATIONS: tuple[Migration, ...] = (Migration(4, "sessions", V4_SESSIONS),)
