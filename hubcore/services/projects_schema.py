"""The projects-and-agents part's hub.db schema: the store's identity (`hub_meta`), agents with
their token hashes, projects and grants (version 1, which also opens the chain's own
`schema_migrations`: see `hubcore.store.migrations.migrate`)."""

from __future__ import annotations

from hubcore.store.migrations import STORE_KIND, Migration, statements

V1_FOUNDATION = statements(
    """CREATE TABLE hub_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)""",
    f"""INSERT INTO hub_meta (key, value) VALUES ('store_kind', '{STORE_KIND}')""",
    """CREATE TABLE agents (
        id TEXT PRIMARY KEY,
        display_name TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('active', 'pending')),
        created_at REAL NOT NULL,
        last_seen_at REAL,
        enrol_note TEXT,
        token_hash TEXT UNIQUE,
        token_created_at REAL
    )""",
    """CREATE TABLE projects (
        id TEXT PRIMARY KEY,
        display_name TEXT NOT NULL,
        owner_agent TEXT,
        created_at REAL NOT NULL,
        confidential INTEGER NOT NULL DEFAULT 0,
        artifact_password_policy TEXT NOT NULL DEFAULT 'optional'
            CHECK (artifact_password_policy IN ('off', 'optional', 'required')),
        personal_of TEXT UNIQUE REFERENCES agents(id),
        last_seen_event TEXT
    )""",
    """CREATE TABLE grants (
        agent_id TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
        project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        created_at REAL NOT NULL,
        PRIMARY KEY (agent_id, project_id)
    )""",
    """CREATE INDEX grants_by_project ON grants (project_id)""",
)

MIGRATIONS: tuple[Migration, ...] = (Migration(1, "foundation", V1_FOUNDATION),)
