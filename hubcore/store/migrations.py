"""The hub store's schema, as forward-only migrations.

Each migration runs in one transaction that also records its version in `schema_migrations`, so a
store is always at exactly one version. Before any migration of an existing store the file is
copied (through SQLite's backup API, so the copy is consistent) to
`backups/pre-migration-v<from>-<timestamp>.db`; the three newest copies are kept. A store newer than
this binary is refused, naming both versions.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from hubcore.errors import HubError
from hubcore.store.connection import connect

log = logging.getLogger("hubcore.migrations")

KEEP_PRE_MIGRATION_COPIES = 3
STORE_KIND = "agent-hub"


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    apply: Callable[[sqlite3.Connection], None]


def statements(*sql: str) -> Callable[[sqlite3.Connection], None]:
    """A migration body made of plain statements (executescript would commit mid-migration)."""

    def apply(conn: sqlite3.Connection) -> None:
        for stmt in sql:
            conn.execute(stmt)

    return apply


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

# The one lexical search index (issue 15): derived data, rebuilt from its sources. `search_docs`
# holds what a hit shows and what removes it (by source, by project); `search_fts` the indexed text
# under the same rowid; `search_marks` how far each source was indexed (the start's reconcile
# compares them with the sources' own marks).
V8_SEARCH = statements(
    """CREATE TABLE search_docs (
        id INTEGER PRIMARY KEY,
        family TEXT NOT NULL,
        source TEXT NOT NULL,
        key TEXT NOT NULL,
        project_id TEXT NOT NULL,
        session_id TEXT,
        snippet TEXT NOT NULL,
        meta TEXT NOT NULL,
        UNIQUE (family, key)
    )""",
    """CREATE INDEX search_docs_by_source ON search_docs (source)""",
    """CREATE INDEX search_docs_by_project ON search_docs (project_id)""",
    """CREATE VIRTUAL TABLE search_fts USING fts5(body, tokenize = 'unicode61 remove_diacritics 2', """
    """prefix = '1 2 3')""",
    """CREATE TABLE search_marks (source TEXT PRIMARY KEY, mark TEXT NOT NULL)""",
)

# Semantic search (issue 15 part 4): one embedding per search document, as int8 (the unit vector
# scaled by 127), kept with its document: the trigger removes it in whatever command removes the
# document (replace, source drop, project delete, rebuild), so no vector outlives what it embeds.
V9_SEARCH_VECTORS = statements(
    """CREATE TABLE search_vectors (doc_id INTEGER PRIMARY KEY, vec BLOB NOT NULL)""",
    """CREATE TRIGGER search_docs_vector_gone AFTER DELETE ON search_docs BEGIN """
    """DELETE FROM search_vectors WHERE doc_id = old.id; END""",
)

# Search rows go with the rows they index, in the removing command itself: an event removed one by
# one (an abandoned enrolment request, `events.remove_events`) or with its project, an artifact
# deleted alone or with its project (and the artifact's index mark with it), whoever removes them.
V10_TRIGGERS = (
    """CREATE TRIGGER search_event_gone AFTER DELETE ON events BEGIN """
    """DELETE FROM search_fts WHERE rowid IN (SELECT id FROM search_docs WHERE family = 'feed' AND key = old.id); """
    """DELETE FROM search_docs WHERE family = 'feed' AND key = old.id; END""",
    """CREATE TRIGGER search_artifact_gone AFTER DELETE ON artifacts BEGIN """
    """DELETE FROM search_fts WHERE rowid IN (SELECT id FROM search_docs WHERE family = 'artifact' """
    """AND key = old.id); """
    """DELETE FROM search_docs WHERE family = 'artifact' AND key = old.id; """
    """DELETE FROM search_marks WHERE source = 'artifact:' || old.id; END""",
)
V10_SEARCH_REMOVALS = statements(*V10_TRIGGERS)

# FTS5 merges a level's segments once it holds `automerge` of them (default 4), inside the
# writing transaction: at a million documents that merging was most of indexing's cost on the one
# writer (0.078 ms a document in batches of 300, single commits stalling 127 ms). At 16 it is 0.026
# ms and 58 ms, and a query reads a few more small segments (no measurable change at 1M; docs/
# benchmarks.md, "Search"). The setting lives in the index's own config table.
V11_SEARCH_MERGING = statements(
    """INSERT INTO search_fts (search_fts, rank) VALUES ('automerge', 16)""",
)

# The index again, with a prefix index of 4 characters besides 1 to 3, and the list of every term
# it holds (`search_terms`). FTS5 answers a prefix longer than its prefix indexes by merging the
# whole lists of every term it starts: 40 to 130 ms for a common word's prefix at a million
# documents. A prefix of 4 now reads its own list; a longer one is rewritten as the terms it
# starts joined with OR (`search/rank.py`, `expanded`), which FTS5 reads lazily (3 to 5 ms). The
# rows are copied under their ids (documents and vectors stay), the terms read from the copy; the
# removal triggers (v10) name the table, so they are made again around the swap.
_TOKENIZE = "tokenize = 'unicode61 remove_diacritics 2'"
V12_SEARCH_PREFIXES = statements(
    """DROP TRIGGER search_event_gone""",
    """DROP TRIGGER search_artifact_gone""",
    f"""CREATE VIRTUAL TABLE search_fts_v12 USING fts5(body, {_TOKENIZE}, prefix = '1 2 3 4')""",
    """INSERT INTO search_fts_v12 (search_fts_v12, rank) VALUES ('automerge', 16)""",
    """INSERT INTO search_fts_v12 (rowid, body) SELECT rowid, body FROM search_fts""",
    """DROP TABLE search_fts""",
    """ALTER TABLE search_fts_v12 RENAME TO search_fts""",
    """CREATE TABLE search_terms (term TEXT PRIMARY KEY) WITHOUT ROWID""",
    """CREATE VIRTUAL TABLE temp.search_terms_held USING fts5vocab(main, search_fts, row)""",
    """INSERT INTO search_terms (term) SELECT term FROM temp.search_terms_held""",
    """DROP TABLE temp.search_terms_held""",
    *V10_TRIGGERS,
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
        conn.execute("UPDATE sqlite_master SET sql = replace(sql, ?, ?) WHERE type = 'table' AND name = 'artifacts'",
                     (old, new))
        conn.execute(f"PRAGMA schema_version = {version + 1}")
    finally:
        conn.execute("PRAGMA writable_schema = OFF")
    conn.execute("ALTER TABLE artifact_versions ADD COLUMN diff TEXT")
    conn.execute("ALTER TABLE artifact_comments ADD COLUMN outdated INTEGER NOT NULL DEFAULT 0")


# Web Push (issue 24): one row per subscribed device with its filters (JSON), and the time an
# answer or decision reached the asking agent on its inbox item (a delivery receipt).
V15_PUSH = statements(
    """CREATE TABLE push_devices (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        endpoint TEXT NOT NULL UNIQUE,
        p256dh TEXT NOT NULL,
        auth TEXT NOT NULL,
        filters TEXT NOT NULL,
        created_at REAL NOT NULL,
        last_delivered_at REAL,
        last_result TEXT
    )""",
    """ALTER TABLE inbox ADD COLUMN delivered_at REAL""",
)

MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "foundation", V1_FOUNDATION),
    Migration(2, "feeds", V2_FEEDS),
    Migration(3, "notifications", V3_NOTIFICATIONS),
    Migration(4, "sessions", V4_SESSIONS),
    Migration(5, "unseen counts", V5_UNSEEN),
    Migration(6, "artifacts", V6_ARTIFACTS),
    Migration(7, "artifact comments and share links", V7_ARTIFACT_THREADS),
    Migration(8, "search index", V8_SEARCH),
    Migration(9, "search vectors", V9_SEARCH_VECTORS),
    Migration(10, "search rows removed with their events and artifacts", V10_SEARCH_REMOVALS),
    Migration(11, "search index merges less eagerly", V11_SEARCH_MERGING),
    Migration(12, "search index with 4-character prefixes and its terms", V12_SEARCH_PREFIXES),
    Migration(13, "scripts the human allowed in HTML artifacts", V13_ARTIFACT_SCRIPTS),
    Migration(14, "diff artifacts and line comments", _v14_diff_artifacts),
    Migration(15, "push devices and delivery receipts", V15_PUSH),
)


class StoreTooNew(HubError):
    def __init__(self, found: int, supported: int) -> None:
        super().__init__(
            "unavailable",
            f"hub.db is at schema version {found}, newer than this binary supports ({supported}); "
            "run a newer agent-hub",
            details={"found": found, "supported": supported},
        )
        self.found, self.supported = found, supported


def supported_version(migrations: Sequence[Migration] = MIGRATIONS) -> int:
    return migrations[-1].version if migrations else 0


def read_version(conn: sqlite3.Connection) -> int:
    """The store's schema version; 0 for an empty file."""
    has_table = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
    ).fetchone()
    if not has_table:
        return 0
    row = conn.execute("SELECT MAX(version) FROM schema_migrations").fetchone()
    return int(row[0] or 0)


def _copy_before(conn: sqlite3.Connection, path: Path, version: int, now: float) -> Path:
    backups = path.parent / "backups"
    backups.mkdir(exist_ok=True)
    stamp = datetime.fromtimestamp(now, tz=UTC).strftime("%Y%m%dT%H%M%S%fZ")
    target = backups / f"pre-migration-v{version}-{stamp}.db"
    dest = sqlite3.connect(target)
    try:
        conn.backup(dest)
    finally:
        dest.close()
    copies = sorted(backups.glob("pre-migration-v*-*.db"), key=lambda p: p.stat().st_mtime_ns)
    for old in copies[:-KEEP_PRE_MIGRATION_COPIES]:
        old.unlink(missing_ok=True)
    log.info("copied hub.db at schema v%d to %s before migrating", version, target)
    return target


def migrate(
    path: Path,
    *,
    now: float,
    migrations: Sequence[Migration] = MIGRATIONS,
    synchronous: str = "normal",
) -> int:
    """Bring the store at `path` to the newest version; returns the version it is at after."""
    supported = supported_version(migrations)
    conn = connect(path, synchronous=synchronous)
    try:
        current = read_version(conn)
        if current > supported:
            raise StoreTooNew(current, supported)
        pending = [m for m in migrations if m.version > current]
        if pending and current > 0:
            _copy_before(conn, path, current, now)
        for migration in pending:
            conn.execute("BEGIN IMMEDIATE")
            try:
                if migration.version == 1:
                    conn.execute(
                        "CREATE TABLE IF NOT EXISTS schema_migrations "
                        "(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at REAL NOT NULL)"
                    )
                migration.apply(conn)
                conn.execute(
                    "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                    (migration.version, migration.name, now),
                )
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            log.info("migrated hub.db to schema v%d (%s)", migration.version, migration.name)
        return read_version(conn)
    finally:
        conn.close()
