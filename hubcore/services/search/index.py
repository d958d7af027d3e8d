"""The search index's upkeep: documents in, documents out, and the reconcile that makes it whole.

The index is derived data. Each part writes its own store first; the index follows in its own
commands on hub.db (`write_batch`), so an indexing failure never fails a write. It follows on the
write side, never in a query:
- `run` (the search part's background task) makes a pass whenever a part notes a changed source
  (`Core.nudge`, moved by `Touched.add`; within `GATHER_SECS`, so a burst of writes is indexed
  in a few commands): `catch_up` indexes what the parts noted since
  (`Part.search_touched`). A query only reads: it waits for the pass that covers every change
  noted before it (`settled`), so what a write committed is searchable by the next query, and a
  query writes nothing.
- `reconcile` (the first pass after start, after a failed pass, and `rebuild`) compares every
  source's mark with the mark it was indexed at and indexes again what differs; indexed sources no
  longer listed are removed. A crash between a source's commit and its index update is healed here.
So an index write lands behind the write that caused it, never behind a query; what waits for "the
hub wrote nothing more" (a snapshot after a refusal) waits for `settled` first.
"""

from __future__ import annotations

import dataclasses
import logging
import sqlite3
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio
import orjson

from hubcore.parts.protocol import Part, SearchBatch, SearchDoc, overrides
from hubcore.store import jsonrows

if TYPE_CHECKING:
    from hubcore.services.core import Core

log = logging.getLogger("hubcore.search")

SETTLE_MAX_SECS = 30.0  # a query waits at most this long for the index (then answers from what it holds)
# A pass starts at most this long after the change that woke it, so a burst of writes is indexed in
# a few commands, not one each; a query waiting for the index (`settled`) starts it at once, so no
# query sees the index older for it. Longer folds more of a busy brain's puts to one path into one
# document (200 busy sessions: 0.5 s wrote about one document a put, 2 s a quarter of that;
# docs/benchmarks.md); what waits is one value a path (`brain_search.Pushes`).
GATHER_SECS = 2.0
INDEX_LANES = 8  # sources indexed at once by a pass


def write_batch(conn: sqlite3.Connection, source: str, batch: SearchBatch, terms: Sequence[str] | None = None) -> None:
    """Put `batch` into the index for `source` and record its mark (one command); the terms of its
    new documents join `search_terms` (`terms`, the batch's own, when the caller tokenized it off
    the writer; else those of the documents written, found here). A `replace`
    batch is compared with what the source holds: only documents that changed are written and
    those no longer in it removed (a page write in a project of 1,000 pages rewrites one
    document, not 1,000, and an unchanged document keeps its row and its vector). Rows go in
    with one statement per table for the whole batch (a feed batch is 2,000 events). Documents
    whose rows went while the batch was read are left out (`SearchBatch.still`)."""
    if batch.still is not None:
        standing = batch.still(conn, batch.docs)
        if standing is None:  # the source itself went: its documents and mark with it
            _forget_sources(conn, [source])
            return
        if len(standing) < len(batch.docs):
            batch = dataclasses.replace(batch, docs=standing)
    stored = _stored(conn, source) if batch.replace else {}
    wanted = {(doc.family, doc.key) for doc in batch.docs}
    doomed = [row[0] for key, row in stored.items() if key not in wanted] + _ids_of(conn, batch.gone)
    fresh: dict[tuple[str, str], tuple[SearchDoc, str]] = {}  # by key: a key given twice is its last
    for doc in batch.docs:
        meta = orjson.dumps(dict(doc.meta)).decode()
        held = stored.get((doc.family, doc.key))
        if held is not None and held[1:] == (source, doc.project_id, doc.session_id, doc.snippet, meta, doc.text):
            continue
        if held is not None:
            doomed.append(held[0])
        fresh[(doc.family, doc.key)] = (doc, meta)
    # A document of the same key held elsewhere (another source, or a batch that adds) is replaced.
    doomed += _ids_of(conn, [key for key in fresh if key not in stored])
    _delete_ids(conn, doomed)
    _insert(conn, source, list(fresh.values()))
    if terms is None:  # a source indexed whole: only the few documents that changed
        terms = terms_of([doc.text for doc, _ in fresh.values()])
    _add_terms(conn, terms)
    conn.execute(
        "INSERT INTO search_marks (source, mark) VALUES (?, ?) ON CONFLICT (source) DO UPDATE SET mark = excluded.mark",
        (source, batch.mark),
    )


def _add_terms(conn: sqlite3.Connection, terms: Sequence[str]) -> None:
    if terms:
        conn.execute(
            "INSERT OR IGNORE INTO search_terms (term) SELECT value FROM json_each(?)",
            (orjson.dumps(list(terms)).decode(),),
        )


def write_pushed(conn: sqlite3.Connection, pushed: Mapping[str, SearchBatch], terms: Sequence[str]) -> None:
    """The batches parts handed over (`Part.search_pushed`, each adding) in one command, with the
    terms of all their documents (tokenized together, off the writer): what `write_batch` does
    for each in turn, with one statement per table for all of them (a pass of 200 busy brains
    writes 200 sources)."""
    fresh: dict[tuple[str, str], tuple[str, SearchDoc, str]] = {}  # by key: a key given twice is its last
    gone: list[tuple[str, str]] = []
    marks: list[tuple[str, str]] = []
    went: list[str] = []
    for source, batch in pushed.items():
        docs = batch.still(conn, batch.docs) if batch.still is not None else batch.docs
        if docs is None:  # the source itself went: its documents and mark with it
            went.append(source)
            continue
        for key in batch.gone:
            fresh.pop(key, None)
        gone += batch.gone
        for doc in docs:
            fresh[(doc.family, doc.key)] = (source, doc, orjson.dumps(dict(doc.meta)).decode())
        marks.append((source, batch.mark))
    _forget_sources(conn, went)
    # Every document of the same key held before (its own source's older version, or another's) goes.
    _delete_ids(conn, _ids_of(conn, [*gone, *fresh]))
    _insert_from(conn, list(fresh.values()))
    _add_terms(conn, terms)
    conn.executemany(
        "INSERT INTO search_marks (source, mark) VALUES (?, ?) ON CONFLICT (source) DO UPDATE SET mark = excluded.mark",
        marks,
    )


def _ids_of(conn: sqlite3.Connection, keys: Iterable[tuple[str, str]]) -> list[int]:
    """The ids of the documents of these (family, key) pairs that exist (read as one row of JSON:
    `hubcore.store.jsonrows` says why)."""
    by_family: dict[str, list[str]] = {}
    for family, key in keys:
        by_family.setdefault(family, []).append(key)
    return [
        i
        for family, found in by_family.items()
        for i in orjson.loads(
            conn.execute(
                """SELECT json_group_array(id) FROM search_docs
                   WHERE family = ? AND key IN (SELECT value FROM json_each(?))""",
                (family, jsonrows.payload(found)),
            ).fetchone()[0]
        )
    ]


def _insert(conn: sqlite3.Connection, source: str, docs: list[tuple[SearchDoc, str]]) -> None:
    _insert_from(conn, [(source, doc, meta) for doc, meta in docs])


def _insert_from(conn: sqlite3.Connection, docs: list[tuple[str, SearchDoc, str]]) -> None:
    """New rows (source, document, meta) under ids after the highest (what SQLite would pick one
    by one; a reused id is safe: a document's vector goes with it, `search_docs_vector_gone`)."""
    if not docs:
        return
    first = int(conn.execute("SELECT COALESCE(MAX(id), 0) FROM search_docs").fetchone()[0]) + 1
    jsonrows.insert(
        conn,
        "search_docs (id, family, source, key, project_id, session_id, snippet, meta)",
        [
            (first + n, doc.family, source, doc.key, doc.project_id, doc.session_id, doc.snippet, meta)
            for n, (source, doc, meta) in enumerate(docs)
        ],
    )
    jsonrows.insert(conn, "search_fts (rowid, body)", [(first + n, doc.text) for n, (_, doc, _) in enumerate(docs)])


# The same tokenizer as search_fts (migrations v8, v12), without positions: only its terms are read.
TOKENS_SQL = (
    "CREATE VIRTUAL TABLE tokens USING fts5(body, content = '', detail = none, "
    "tokenize = 'unicode61 remove_diacritics 2')"
)


def terms_of(texts: list[str]) -> list[str]:
    """The terms the index's tokenizer makes of `texts`, on a private in-memory database (never
    hub.db): the feed's new events are tokenized before their command, off the writer; a source
    indexed whole tokenizes its few changed documents inside its command. (Terms of removed
    documents stay in `search_terms`: a prefix rewritten with a term nothing holds any more matches
    the same rows.)"""
    if not texts:
        return []
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute(TOKENS_SQL)
        conn.execute("CREATE VIRTUAL TABLE tokens_vocab USING fts5vocab(tokens, row)")
        conn.executemany("INSERT INTO tokens (body) VALUES (?)", [(t,) for t in texts])
        return [r[0] for r in conn.execute("SELECT term FROM tokens_vocab")]
    finally:
        conn.close()


def _stored(conn: sqlite3.Connection, source: str) -> dict[tuple[str, str], tuple[Any, ...]]:
    """A source's documents as held: (family, key) -> (id, source, project, session, snippet, meta, text)."""
    rows = conn.execute(
        """SELECT d.family, d.key, d.id, d.source, d.project_id, d.session_id, d.snippet, d.meta,
                           f.body FROM search_docs d JOIN search_fts f ON f.rowid = d.id WHERE d.source = ?""",
        (source,),
    )
    return {(r[0], r[1]): tuple(r[2:]) for r in rows}


def _delete_ids(conn: sqlite3.Connection, ids: Iterable[int]) -> None:
    doomed = list(ids)
    if doomed:
        listed = jsonrows.payload(doomed)
        conn.execute("DELETE FROM search_fts WHERE rowid IN (SELECT value FROM json_each(?))", (listed,))
        conn.execute("DELETE FROM search_docs WHERE id IN (SELECT value FROM json_each(?))", (listed,))


def drop_source(conn: sqlite3.Connection, source: str) -> None:
    """Remove a source's documents (its mark stays for the caller to set or drop)."""
    _delete_ids(conn, [r[0] for r in conn.execute("SELECT id FROM search_docs WHERE source = ?", (source,))])


def purge_project(conn: sqlite3.Connection, project_id: str, sources: Iterable[str]) -> None:
    """A deleted project's documents and the marks of the sources it ends (the parts say which:
    `Part.search_project_sources`), inside the project delete's command. Its events and artifacts
    took their own documents with their rows (triggers)."""
    conn.execute(
        "DELETE FROM search_marks WHERE source IN (SELECT value FROM json_each(?))",
        (orjson.dumps(sorted(sources)).decode(),),
    )
    _delete_ids(conn, [r[0] for r in conn.execute("SELECT id FROM search_docs WHERE project_id = ?", (project_id,))])


def clear(conn: sqlite3.Connection) -> None:
    """Empty the index (a rebuild starts from nothing)."""
    conn.execute("DELETE FROM search_fts")
    conn.execute("DELETE FROM search_docs")
    conn.execute("DELETE FROM search_marks")
    conn.execute("DELETE FROM search_terms")


class SearchIndex:
    """Brings the index up to date with the parts' sources; one pass at a time."""

    def __init__(self, core: Core) -> None:
        self.core = core
        self._lock = anyio.Lock()
        self._reconciled = False
        self.failures = 0
        self.passes = 0
        self._covered = -1  # the nudge count the last finished pass covered (-1: none yet)
        self._passed = anyio.Event()  # set when a pass ends (then replaced)
        self._wanted = anyio.Event()  # set when a query waits for the index: the next pass starts now
        self.after_pass: Callable[[], None] = lambda: None  # what follows the index (semantic vectors)

    async def run(self) -> None:
        """The background task: once the hub serves, a pass (the first reconciles), then one each
        time the parts note a change. A failed pass is logged and the next one reconciles."""
        await self.core.serving.wait()
        while True:
            covers = self.core.nudge.count  # read before the pass: a later note gets a pass of its own
            try:
                await self.catch_up()
            except Exception:  # derived data: what was noted is found again by the marks
                self.failures += 1
                self._reconciled = False
                log.exception("search index pass failed; the next pass reconciles")
            self.passes += 1
            self.after_pass()
            self._covered = covers
            self._passed.set()
            self._passed = anyio.Event()
            await self.core.nudge.wait(covers)
            with anyio.move_on_after(GATHER_SECS):  # gather the burst, unless a query is waiting
                await self._wanted.wait()
            self._wanted = anyio.Event()

    @asynccontextmanager
    async def held(self) -> AsyncIterator[None]:
        """No pass runs inside the block (changes are noted, and indexed once it ends): a bench's
        baseline of writes with no indexing behind them."""
        async with self._lock:
            yield

    async def settled(self) -> None:
        """Return once a pass covers every change noted before the call (a query's wait for what
        committed before it; the query itself never writes). Bounded: past `SETTLE_MAX_SECS`, or
        with no background pass running, it returns and the query reads what the index holds."""
        wanted = self.core.nudge.count
        if self._covered >= wanted:
            return
        self._wanted.set()
        with anyio.move_on_after(SETTLE_MAX_SECS):
            while self._covered < wanted:
                await self._passed.wait()

    def _feeders(self) -> list[Part]:
        return [p for p in self.core.parts if overrides(p, "search_documents")]

    async def catch_up(self) -> None:
        """Index what changed; the first pass after start reconciles everything."""
        async with self._lock:
            if not self._reconciled:
                await self._reconcile()
                self._reconciled = True
                return
            for part in self._feeders():
                sources = sorted(part.search_touched())
                if not sources:
                    continue
                marks = await self._marks_of(sources)
                # What the part's writes handed over goes in first, all in one command (one
                # tokenizing, one commit); the rest is read from the part's stores.
                pushed = part.search_pushed({source: marks.get(source) for source in sources})
                if pushed:
                    await self._write_pushed(pushed)
                    sources = [source for source in sources if source not in pushed]
                # A few lanes, each indexing its share of the sources in turn: their reads overlap
                # and their index writes share hub.db's batches (a brain write touches one source
                # per session, so 200 busy sessions make 200 sources a pass).
                async with anyio.create_task_group() as tg:
                    for lane in range(min(INDEX_LANES, len(sources))):
                        tg.start_soon(self._index_each, part, sources[lane::INDEX_LANES], marks)

    async def rebuild(self) -> None:
        """Drop the whole index and build it again from the sources."""
        async with self._lock:
            await self.core.store.execute(clear)
            await self._reconcile()
            self._reconciled = True

    async def _reconcile(self) -> None:
        indexed: dict[str, str] = dict(
            await self.core.store.read(lambda conn: conn.execute("SELECT source, mark FROM search_marks").fetchall())
        )
        listed: set[str] = set()
        for part in self._feeders():
            part.search_touched()  # whatever was noted is covered by the marks compared below
            for source, mark in (await part.search_sources()).items():
                listed.add(source)
                if indexed.get(source) != mark:
                    await self._index(part, source, indexed.get(source))
        gone = sorted(set(indexed) - listed)
        if gone:
            await self.core.store.execute(lambda conn: _forget_sources(conn, gone))
        log.info("search index reconciled: %d sources, %d removed", len(listed), len(gone))

    async def _marks_of(self, sources: Sequence[str]) -> dict[str, str]:
        """The marks the sources were indexed at (a source never indexed has none), in one read."""

        def read(conn: sqlite3.Connection) -> dict[str, str]:
            rows = conn.execute(
                "SELECT source, mark FROM search_marks WHERE source IN (SELECT value FROM json_each(?))",
                (orjson.dumps(list(sources)).decode(),),
            )
            return {str(source): str(mark) for source, mark in rows}

        return await self.core.store.read(read)

    async def _write_pushed(self, pushed: dict[str, SearchBatch]) -> None:
        if any(batch.replace or batch.more for batch in pushed.values()):
            raise ValueError("a pushed batch adds to its source and is whole")
        texts = [doc.text for batch in pushed.values() for doc in batch.docs]
        terms = await anyio.to_thread.run_sync(terms_of, texts)
        await self.core.store.execute(lambda conn: write_pushed(conn, pushed, terms))

    async def _index_each(self, part: Part, sources: Sequence[str], marks: dict[str, str]) -> None:
        for source in sources:
            await self._index(part, source, marks.get(source))

    async def _index(self, part: Part, source: str, mark: str | None) -> None:
        while True:
            batch = await part.search_documents(source, mark)
            if batch is None:
                await self.core.store.execute(lambda conn: _forget_sources(conn, [source]))
                return
            if not batch.docs and not batch.gone and not batch.replace and batch.mark == (mark or ""):
                return  # nothing new: write nothing (hub.db is left as it was)
            # New documents only (the feed's events): tokenized here, off the writer.
            terms = (
                None if batch.replace else await anyio.to_thread.run_sync(terms_of, [doc.text for doc in batch.docs])
            )
            await self.core.store.execute(lambda conn, b=batch, t=terms: write_batch(conn, source, b, t))  # type: ignore[misc]
            if not batch.more or batch.mark == mark:
                return
            mark = batch.mark


def _forget_sources(conn: sqlite3.Connection, sources: Iterable[str]) -> None:
    for source in sources:
        drop_source(conn, source)
        conn.execute("DELETE FROM search_marks WHERE source = ?", (source,))
