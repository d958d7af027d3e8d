"""The sessions-and-brains part's hub.db schema: the session rows (v4) and the replay rows staged
on their way to the brains (v16, `hubcore.services.callstage`). Each brain is a file of its own with
its own schema (`hubcore.store.brain`)."""

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

# Replay rows staged in hub.db's batched writes, moved into their brains every few seconds. The id
# is AUTOINCREMENT: never reused, so a brain's mark (the highest id it took) stays exact.
V16_CALL_STAGING = statements(
    """CREATE TABLE call_staging (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL,
        at REAL NOT NULL,
        tool TEXT NOT NULL,
        arguments TEXT NOT NULL,
        outcome TEXT NOT NULL
    )""",
    """CREATE INDEX call_staging_by_session ON call_staging (session_id, id)""",
)

MIGRATIONS: tuple[Migration, ...] = (
    Migration(4, "sessions", V4_SESSIONS),
    Migration(16, "replay rows staged in hub.db", V16_CALL_STAGING),
)
