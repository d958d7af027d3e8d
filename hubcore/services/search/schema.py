"""The search part's hub.db schema: the index's documents, text and marks (v8), vectors (v9), the
triggers that take an event's or artifact's documents with it (v10, made again by v12; the
triggers sit on the feed's and the artifacts' tables, whose rows they follow), the merge setting
(v11), 4-character prefixes and the term list (v12)."""

from __future__ import annotations

from hubcore.store.migrations import Migration, statements

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


MIGRATIONS: tuple[Migration, ...] = (
    Migration(8, "search index", V8_SEARCH),
    Migration(9, "search vectors", V9_SEARCH_VECTORS),
    Migration(10, "search rows removed with their events and artifacts", V10_SEARCH_REMOVALS),
    Migration(11, "search index merges less eagerly", V11_SEARCH_MERGING),
    Migration(12, "search index with 4-character prefixes and its terms", V12_SEARCH_PREFIXES),
)
