"""Semantic search (issue 15 part 4): an embedding of each search document, kept in hub.db
(`search_vectors`, removed with its document by a trigger), and the nearest neighbours of a query
blended with the lexical hits by reciprocal rank fusion.

The model is wordllama's, inside its wheel (the `semantic` extra); it is loaded once per hub, on the
first semantic query (or at start when vectors exist), in a worker thread. Without it, or while no
vector exists, a semantic query answers lexically (`backend: fts-fallback`).

Embedding never runs on a write's path, and never in a query: the background task writes every
vector. It follows the lexical index, which follows the writes (see `index`): once the model is
loaded, each index pass asks the task to embed the new documents (`follow`). A semantic query only
reads: finding a small backlog (`INLINE_MAX` documents, e.g. the first semantic query after some
writes) it asks the task and waits for it (at most `WAIT_MAX_SECS`); a larger one (the first
semantic query over a big hub, a hub restarted with documents not yet embedded) is embedded by the
task in batches of `BATCH` while queries answer with the vectors already there.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import anyio
import orjson

if TYPE_CHECKING:
    from hubcore.services.core import Core
    from hubcore.services.search.vectors import Embedder, VectorSet

log = logging.getLogger("hubcore.search")

BATCH = 256  # documents a background embedding command holds
INLINE_MAX = 256  # a backlog a query waits for the background task to embed before answering
WAIT_MAX_SECS = 10.0  # how long it waits at most (then it answers with the vectors there)
RRF_K = 60  # reciprocal rank fusion's constant (measured on the recall corpus, docs/benchmarks.md)
FUSED_MAX = 100  # ranks of the nearest neighbours that take part in the fusion (a page holds at most 100)
LEXICAL_MAX = FUSED_MAX  # ranks of the lexical hits that take part

Loader = Callable[[], "Embedder | None"]
Fetch = Callable[[list[int]], list[sqlite3.Row]]
"""The rows (hit columns plus `vec`) of the given document ids that the caller may see."""

# Walks the documents by id and reads a text only for those it returns (a join with the FTS table
# would scan all of it).
PENDING_SQL = """SELECT d.id, d.project_id, d.family, d.session_id,
       (SELECT substr(f.body, 1, :chars) FROM search_fts f WHERE f.rowid = d.id) FROM search_docs d
WHERE d.id > :after AND NOT EXISTS (SELECT 1 FROM search_vectors v WHERE v.doc_id = d.id)
ORDER BY d.id LIMIT :n"""
# A document's text is checked again when its vector is written: a document removed and another
# indexed under the same id in between must not receive the old one's vector.
STORE_SQL = """INSERT OR REPLACE INTO search_vectors (doc_id, vec)
SELECT :id, :vec FROM search_fts f WHERE f.rowid = :id AND substr(f.body, 1, :chars) = :text"""


def default_loader() -> Embedder | None:
    try:
        from hubcore.services.search.vectors import load_wordllama
    except ImportError:  # numpy absent: the semantic extra is not installed
        log.info("semantic search unavailable: numpy is not installed (agent-hub[semantic])")
        return None
    return load_wordllama()


class SemanticIndex:
    """The model, the embedding passes, and the in-memory set of vectors a query searches."""

    def __init__(self, core: Core, loader: Loader = default_loader) -> None:
        self.core = core
        self.loader = loader
        self.model: Embedder | None = None
        self.unavailable = False
        self.vectors: VectorSet | None = None
        self._stale = False  # the set is to be read again (removed documents, or outgrown)
        self._load_lock = anyio.Lock()
        self._embed_lock = anyio.Lock()
        self._set_lock = anyio.Lock()
        self._wake = anyio.Event()
        self._idle = anyio.Event()  # set while the background task has nothing left to embed
        self._checked_at = -1  # hub.db's command count when a query last found nothing to embed
        self._full = False  # the next background pass walks every document (not only the newest)
        self.embedded = 0  # vectors written since start
        self.failures = 0

    # -- the model -------------------------------------------------------------------------------

    async def load(self) -> Embedder | None:
        """The model, loaded on first use (once per hub, off the event loop); None without one."""
        async with self._load_lock:
            if self.model is None and not self.unavailable:
                try:
                    self.model = await anyio.to_thread.run_sync(self.loader)
                except Exception:
                    log.exception("the semantic model failed to load; semantic search answers lexically")
                self.unavailable = self.model is None
                if self.model is not None:
                    log.info("semantic model loaded")
        return self.model

    # -- a query's side --------------------------------------------------------------------------

    async def prepare(self) -> Searcher | None:
        """Ready for a semantic query: the model, the small backlog embedded, the vector set read.
        None: answer lexically (no model, or no vector yet)."""
        model = await self.load()
        if model is None:
            return None
        # Skipped when hub.db committed nothing since a check found nothing to embed (no new
        # document can exist). The query itself writes nothing: the background task embeds.
        commands = self.core.store.statistics().commands  # read before the check: never misses a commit
        if commands != self._checked_at:
            pending = await self._pending(None, INLINE_MAX + 1)
            if len(pending) > INLINE_MAX:
                self._request(full=True)  # answer with what is there meanwhile
            elif pending:
                self._request()
                with anyio.move_on_after(WAIT_MAX_SECS):  # a small backlog: its vectors are moments away
                    await self.idle()
            else:
                self._checked_at = commands
        vectors = await self._vector_set()
        return Searcher(self, model, vectors) if len(vectors) else None

    async def _vector_set(self) -> VectorSet:
        async with self._set_lock:
            if self.vectors is None or self._stale:
                from hubcore.services.search.vectors import VectorSet

                self._stale = False
                # Read and built on one worker thread (a million rows would hold the event loop).
                self.vectors = await self.core.store.read_then(
                    lambda conn: [
                        tuple(r)
                        for r in conn.execute(
                            """SELECT v.doc_id, v.vec, d.project_id, d.family, d.session_id FROM search_vectors v
                           JOIN search_docs d ON d.id = v.doc_id"""
                        )
                    ],
                    VectorSet.build,
                )
            return self.vectors

    # -- embedding -------------------------------------------------------------------------------

    async def _pending(self, after: int | None, n: int) -> list[tuple[Any, ...]]:
        """Up to `n` documents without a vector after id `after`; None: after the newest vector
        (new documents only, an index lookup: what a query checks)."""
        from hubcore.services.search.vectors import EMBED_CHARS

        def read(conn: sqlite3.Connection) -> list[tuple[Any, ...]]:
            start = (
                after
                if after is not None
                else int(conn.execute("SELECT COALESCE(MAX(doc_id), 0) FROM search_vectors").fetchone()[0])
            )
            return [tuple(r) for r in conn.execute(PENDING_SQL, {"after": start, "n": n, "chars": EMBED_CHARS})]

        return await self.core.store.read(read)

    async def _embed(self, model: Embedder, rows: Sequence[tuple[Any, ...]]) -> None:
        """Embed and store one batch of (id, project, family, session, text) rows."""
        from hubcore.services.search.vectors import EMBED_CHARS, quantize

        texts = [str(r[4])[:EMBED_CHARS] for r in rows]
        stored = quantize(await anyio.to_thread.run_sync(model.embed, texts))
        params = [
            {"id": r[0], "vec": v, "chars": EMBED_CHARS, "text": t} for r, v, t in zip(rows, stored, texts, strict=True)
        ]
        await self.core.store.execute(lambda conn: _store(conn, params))
        self.embedded += len(rows)
        async with self._set_lock:
            held = self.vectors
            if held is not None:
                added = [(r[0], v, r[1], r[2], r[3]) for r, v in zip(rows, stored, strict=True)]
                await anyio.to_thread.run_sync(held.add, added)
                if held.outgrown:  # its centre came from far fewer documents: read it again
                    self._stale = True

    async def catch_up(self, *, full: bool = True) -> int:
        """Embed every document without a vector, in batches (only those after the newest vector
        unless `full`: an index lookup, what follows each index pass); returns how many."""
        model = await self.load()
        if model is None:
            return 0
        done, after = 0, (0 if full else None)
        async with self._embed_lock:
            while rows := await self._pending(after, BATCH):
                await self._embed(model, rows)
                done += len(rows)
                after = int(rows[-1][0])
        return done

    def follow(self) -> None:
        """An index pass ended: once the model is loaded, the new documents are embedded now, on
        the write side (before it is loaded no query has asked for vectors)."""
        if self.model is not None:
            self._request()

    async def run(self) -> None:
        """The background task: at start, when the hub has vectors, read them into the set, load the
        model and embed what is missing (a restart catches up); then embed what each index pass
        added (`follow`) and the backlog a query asks for. The model loads once the hub serves,
        never on the way to ready."""
        await self.core.serving.wait()
        try:
            has = await self.core.store.read(
                lambda conn: conn.execute("SELECT EXISTS (SELECT 1 FROM search_vectors)").fetchone()[0]
            )
        except Exception:  # derived data: the first query that asks will start it
            log.exception("reading whether the hub has search vectors failed")
            has = False
        started = False
        while True:
            full, self._full = self._full or not started, False
            if has:
                try:
                    await self._vector_set()  # read before the first query needs it (a second a million)
                    if done := await self.catch_up(full=full):
                        log.info("embedded %d search documents", done)
                except Exception:  # derived data: the next pass tries again, walking every document
                    self.failures += 1
                    self._full = True
                    log.exception("embedding search documents failed")
            started = True
            if not self._wake.is_set():
                self._idle.set()
            await self._wake.wait()
            self._wake = anyio.Event()
            has = True

    def _request(self, *, full: bool = False) -> None:
        """Ask the background task for a pass over the documents without a vector (`full`: every
        one; else those after the newest vector)."""
        self._full = self._full or full
        self._wake.set()
        if self._idle.is_set():
            self._idle = anyio.Event()

    async def idle(self) -> None:
        """Return once the background task has embedded everything asked of it (for tools and
        tests that need the vectors in place, and a query that found a small backlog)."""
        await self._idle.wait()

    def stale(self) -> None:
        """Many candidates were documents removed since the set was read: the next query reads it
        again (called from a query's worker thread: only a flag is set)."""
        self._stale = True


def _store(conn: sqlite3.Connection, params: list[dict[str, Any]]) -> None:
    conn.executemany(STORE_SQL, params)


class Searcher:
    """One semantic query's nearest neighbours, computed inside the query's read transaction."""

    def __init__(self, index: SemanticIndex, model: Embedder, vectors: VectorSet) -> None:
        self.index = index
        self.model = model
        self.vectors = vectors

    def neighbours(
        self,
        conn: sqlite3.Connection,
        query: str,
        projects: list[str] | None,
        family: str | None,
        session: str | None,
        fetch: Fetch,
    ) -> list[sqlite3.Row]:
        """The visible documents nearest `query`, best first (cosine of the stored vectors)."""
        from hubcore.services.search.vectors import CANDIDATES, cosines

        q = self.model.embed([query])[0]
        ids = list(dict.fromkeys(self.vectors.nearest(q, self.vectors.filter(projects, family, session))))
        if not ids:
            return []
        rows = fetch(ids)
        if len(ids) - len(rows) > CANDIDATES // 2 and _gone(conn, ids) > CANDIDATES // 2:
            self.index.stale()  # (candidates the caller may not see, e.g. in pruned sessions, are not gone)
        scores = cosines(q, [bytes(r["vec"]) for r in rows])
        order = sorted(range(len(rows)), key=lambda i: -float(scores[i]))
        return [rows[i] for i in order]


def _gone(conn: sqlite3.Connection, ids: list[int]) -> int:
    """How many of `ids` have no vector any more (their documents were removed)."""
    held = conn.execute(
        "SELECT COUNT(*) FROM search_vectors WHERE doc_id IN (SELECT value FROM json_each(?))",
        (orjson.dumps(ids).decode(),),
    ).fetchone()[0]
    return len(ids) - int(held)


def fuse(lexical: Sequence[sqlite3.Row], semantic: Sequence[sqlite3.Row]) -> list[sqlite3.Row]:
    """Reciprocal rank fusion: each document scores the sum of 1 / (RRF_K + rank) over the lists it
    is in (the first `LEXICAL_MAX` and `FUSED_MAX`); best first, ties to the lexical order."""
    score: dict[int, float] = {}
    row_of: dict[int, sqlite3.Row] = {}
    for ranked in (lexical[:LEXICAL_MAX], semantic[:FUSED_MAX]):
        for rank, row in enumerate(ranked, start=1):
            score[row["id"]] = score.get(row["id"], 0.0) + 1.0 / (RRF_K + rank)
            row_of.setdefault(row["id"], row)
    return sorted(row_of.values(), key=lambda r: -score[r["id"]])
