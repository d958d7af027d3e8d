"""The artifacts part's hub.db schema: artifacts and their versions (v6), comments and share links
(v7), the scripts the human allowed (v13), diff artifacts and line comments (v14)."""

from __future__ import annotations

import sqlite3

from hubcore.store.migrations import Migration, statements

# Artifacts: one row per artifact (its current sealed version, the version held live with its
# revision, the publishing actor and session, and the comment tallies the comment service keeps
# so reads never count), one row per version pointing at its body in the blob store by SHA-256.
V6_ARTIFACTS = statements(
    """CREATE TABLE artifacts (
        id TEXT PRIMARY KEY,
        project_id TEXT NOT NULL,
        title TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('html', 'markdown')),
        description TEXT NOT NULL DEFAULT '',
        actor TEXT,
        session_id TEXT,
        version INTEGER NOT NULL,
        live_version INTEGER,
        live_rev INTEGER NOT NULL DEFAULT 0,
        live_session TEXT,
        live_at REAL,
        comments_count INTEGER NOT NULL DEFAULT 0,
        comments_open INTEGER NOT NULL DEFAULT 0,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL
    )""",
    """CREATE INDEX artifacts_by_project ON artifacts (project_id, updated_at)""",
    """CREATE INDEX artifacts_by_updated ON artifacts (updated_at)""",
    """CREATE INDEX artifacts_by_session ON artifacts (session_id) WHERE session_id IS NOT NULL""",
    """CREATE TABLE artifact_versions (
        artifact_id TEXT NOT NULL REFERENCES artifacts(id) ON DELETE CASCADE,
        version INTEGER NOT NULL,
        sha256 TEXT NOT NULL,
        size_bytes INTEGER NOT NULL,
        label TEXT,
        envelope TEXT,
        actor TEXT,
        session_id TEXT,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        PRIMARY KEY (artifact_id, version)
    )""",
    """CREATE INDEX artifact_versions_by_blob ON artifact_versions (sha256)""",
)

# Artifact comments and share links. A comment keeps only the SHA-256 of its delete token (shown
# once to the poster); a share link keeps its token (the admin's report shows it again) and the
# token's SHA-256, which `/s/:token` looks up. Both go with their artifact (ON DELETE CASCADE).
V7_ARTIFACT_THREADS = statements(
    """CREATE TABLE artifact_comments (
        id TEXT PRIMARY KEY,
        artifact_id TEXT NOT NULL REFERENCES artifacts(id) ON DELETE CASCADE,
        author TEXT NOT NULL,
        body TEXT NOT NULL,
        anchor TEXT,
        anchor_version INTEGER NOT NULL,
        done INTEGER NOT NULL DEFAULT 0,
        token_hash TEXT,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL
    )""",
    """CREATE INDEX artifact_comments_by_artifact ON artifact_comments (artifact_id, id)""",
    """CREATE TABLE artifact_shares (
        artifact_id TEXT PRIMARY KEY REFERENCES artifacts(id) ON DELETE CASCADE,
        token TEXT NOT NULL,
        token_hash TEXT NOT NULL UNIQUE,
        version INTEGER NOT NULL,
        actor TEXT NOT NULL,
        created_at REAL NOT NULL
    )""",
)

# HTML artifacts run no script unless the human turns scripts on for the artifact (issue 28): the
# frame cannot keep WebRTC from reaching the network while its scripts run (docs/decisions.md,
# "Artifacts"). A row is the human's yes; it goes with its artifact.
V13_ARTIFACT_SCRIPTS = statements(
    """CREATE TABLE artifact_scripts (
        artifact_id TEXT PRIMARY KEY REFERENCES artifacts(id) ON DELETE CASCADE,
        actor TEXT NOT NULL,
        created_at REAL NOT NULL
    )""",
)


def _v14_diff_artifacts(conn: sqlite3.Connection) -> None:
    """Diff artifacts (issue 29): the kind check also takes 'diff' (edited in the schema text, as
    SQLite documents for loosening a CHECK: rebuilding `artifacts` would cascade into its versions
    and comments), each version's parsed summary (`diff`, JSON), and a line comment's `outdated`
    mark (its line changed in a later version)."""
    old = "CHECK (kind IN ('html', 'markdown'))"
    new = "CHECK (kind IN ('html', 'markdown', 'diff'))"
    version = int(conn.execute("PRAGMA schema_version").fetchone()[0])
    conn.execute("PRAGMA writable_schema = ON")
    try:
        conn.execute(
            "UPDATE sqlite_master SET sql = replace(sql, ?, ?) WHERE type = 'table' AND name = 'artifacts'", (old, new)
        )
        conn.execute(f"PRAGMA schema_version = {version + 1}")
    finally:
        conn.execute("PRAGMA writable_schema = OFF")
    conn.execute("ALTER TABLE artifact_versions ADD COLUMN diff TEXT")
    conn.execute("ALTER TABLE artifact_comments ADD COLUMN outdated INTEGER NOT NULL DEFAULT 0")


MIGRATIONS: tuple[Migration, ...] = (
    Migration(6, "artifacts", V6_ARTIFACTS),
    Migration(7, "artifact comments and share links", V7_ARTIFACT_THREADS),
    Migration(13, "scripts the human allowed in HTML artifacts", V13_ARTIFACT_SCRIPTS),
    Migration(14, "diff artifacts and line comments", _v14_diff_artifacts),
)
