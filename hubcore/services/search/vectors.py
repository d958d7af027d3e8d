"""The numeric side of semantic search: the embedding model, vectors as stored, and the in-memory
set the nearest neighbours are found in. Imported only once a model loaded (numpy comes with the
`semantic` extra), so the hub runs without numpy.

A vector is stored as int8 (the unit vector scaled so its largest component is 127: 256 bytes for
256 dimensions). In memory only its signs about the documents' mean are kept (32 bytes a document),
so a query reads every document's bits by Hamming distance (milliseconds for a million), and the
best `CANDIDATES` are re-ranked by cosine against their stored int8 vectors.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

log = logging.getLogger("hubcore.search")

EMBED_CHARS = 2000  # the opening of a document that is embedded (a mean of word vectors: more dilutes)
CANDIDATES = 256  # nearest by Hamming distance, then re-ranked by cosine
NO_SESSION = -1

Floats = NDArray[np.float32]


class Embedder(Protocol):
    """Unit vectors (one row a text) for a list of texts."""

    def embed(self, texts: list[str]) -> Floats: ...


class WordLlamaEmbedder:
    def __init__(self, model: Any) -> None:
        self.model = model

    def embed(self, texts: list[str]) -> Floats:
        # An empty text has no tokens, and its normalised mean would be 0/0 (NaN): a space has some.
        cut = [t[:EMBED_CHARS] or " " for t in texts]
        out: Floats = np.asarray(self.model.embed(cut, norm=True), dtype=np.float32)
        return out


def load_wordllama() -> Embedder | None:
    """The model inside the wordllama wheel, loaded from the package's own directory with downloads
    disabled (its plain `load()` tries the network); None without the package."""
    try:
        import wordllama
        from wordllama import WordLlama
    except ImportError:
        log.info("semantic search unavailable: the wordllama package is not installed (agent-hub[semantic])")
        return None
    model = WordLlama.load(cache_dir=Path(wordllama.__file__).parent, disable_download=True)
    return WordLlamaEmbedder(model)


def quantize(vectors: Floats) -> list[bytes]:
    """Each row as its stored int8 bytes."""
    top = np.abs(vectors).max(axis=1, keepdims=True)
    top[top == 0] = 1
    q = np.rint(vectors / top * 127).astype(np.int8)
    return [row.tobytes() for row in q]


def unpack(stored: Sequence[bytes]) -> Floats:
    """Stored vectors as unit float rows."""
    m = np.frombuffer(b"".join(stored), dtype=np.int8).reshape(len(stored), -1).astype(np.float32)
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    norms[norms == 0] = 1
    out: Floats = m / norms
    return out


def signs(vectors: Floats, centre: Floats) -> NDArray[np.uint64]:
    """The signs of vectors about `centre`, four 64-bit words a row. The model's vectors share a
    large common part (their mean's norm is about 0.8), so signs about zero say little; about the
    mean of the documents they agree with exact cosine far more often (measured: docs/benchmarks.md)."""
    return _pack((vectors - centre) > 0)


def _pack(positive: NDArray[np.bool_]) -> NDArray[np.uint64]:
    packed = np.packbits(positive, axis=1)
    return np.ascontiguousarray(packed).view(np.uint64)


def cosines(query: Floats, stored: Sequence[bytes]) -> Floats:
    """Cosine of the (unit) query with each stored vector."""
    if not stored:
        return np.zeros(0, dtype=np.float32)
    out: Floats = unpack(stored) @ query
    return out


@dataclass(frozen=True)
class Chunk:
    """Documents added together: ids, sign bits, and the codes the query filters on."""

    ids: NDArray[np.int64]
    bits: NDArray[np.uint64]  # (4, n): one row a 64-bit word, so each word's pass reads memory in order
    project: NDArray[np.int32]
    family: NDArray[np.int32]
    session: NDArray[np.int32]


@dataclass(frozen=True)
class Filter:
    """Which documents a caller's query may consider: a table of the project codes it may see
    (None: every project), and the family and session asked for (None: any)."""

    projects: NDArray[np.bool_] | None
    family: int | None
    session: int | None


class VectorSet:
    """Every stored vector's sign bits with its document's project, family and session, in chunks.

    Written by one thread at a time (`add`), read by others (`nearest`): a reader takes the list of
    chunks as it is, and `add` replaces the list rather than changing it. It may hold documents
    removed since (their ids then find no row, and the caller drops them); it is read again when
    too many candidates turn out gone.
    """

    RECENTRE_GROWTH = 4  # the centre is taken again (the set read again) once the set is 4 times its basis

    def __init__(self) -> None:
        self.chunks: list[Chunk] = []
        self.codes: dict[str, int] = {}
        self.centre: Floats | None = None  # the mean of the vectors the set was first built from
        self.basis = 0

    def __len__(self) -> int:
        return sum(len(c.ids) for c in self.chunks)

    def code(self, name: str) -> int:
        found = self.codes.get(name)
        if found is None:
            found = self.codes[name] = len(self.codes)
        return found

    def add(self, rows: Iterable[tuple[int, bytes, str, str, str | None]]) -> None:
        """Add (doc id, stored vector, project id, family, session id) rows."""
        rows = list(rows)
        if not rows:
            return
        if self.centre is None:
            self.centre, self.basis = unpack([r[1] for r in rows]).mean(axis=0), len(rows)
        chunks = [*self.chunks, self._chunk(rows)]
        # Merge the newest chunks while the last is at least half the one before it: chunk sizes
        # fall geometrically, so there are few of them and each vector is copied O(log n) times.
        while len(chunks) > 1 and 2 * len(chunks[-1].ids) >= len(chunks[-2].ids):
            chunks[-2:] = [_concat(chunks[-2:])]
        self.chunks = chunks

    def _chunk(self, rows: Sequence[tuple[int, bytes, str, str, str | None]]) -> Chunk:
        assert self.centre is not None
        floats = unpack([r[1] for r in rows])
        return Chunk(
            np.array([r[0] for r in rows], dtype=np.int64),
            np.ascontiguousarray(signs(floats, self.centre).T),
            np.array([self.code(r[2]) for r in rows], dtype=np.int32),
            np.array([self.code(r[3]) for r in rows], dtype=np.int32),
            np.array([NO_SESSION if r[4] is None else self.code(r[4]) for r in rows], dtype=np.int32),
        )

    @classmethod
    def build(cls, rows: Sequence[tuple[int, bytes, str, str, str | None]], step: int = 65536) -> VectorSet:
        """A set of `rows` whose centre is the mean of them all (read a slice at a time: a million
        vectors as floats would take a gigabyte at once)."""
        made = cls()
        if rows:
            total = np.zeros(len(rows[0][1]), dtype=np.float64)
            for start in range(0, len(rows), step):
                total += unpack([r[1] for r in rows[start : start + step]]).sum(axis=0)
            made.centre, made.basis = (total / len(rows)).astype(np.float32), len(rows)
            made.chunks = [_concat([made._chunk(rows[start : start + step]) for start in range(0, len(rows), step)])]
        return made

    @property
    def outgrown(self) -> bool:
        """The set grew well past what its centre was taken from: read it again to take a new one."""
        return len(self) > self.RECENTRE_GROWTH * self.basis + 1024

    def filter(self, projects: Iterable[str] | None, family: str | None, session: str | None) -> Filter:
        """`projects` None: every project (the admin)."""
        codes = self.codes.copy()  # one copy: `add` may give out codes meanwhile, on another thread
        table = None
        if projects is not None:
            # The last entry stays False: a code given out after this (a project new to the set)
            # is read through it (`_allowed` clips), so it is never allowed by accident.
            table = np.zeros(len(codes) + 1, dtype=np.bool_)
            table[[codes[p] for p in projects if p in codes]] = True
        return Filter(
            table,
            None if family is None else codes.get(family, -2),
            None if session is None else codes.get(session, -2),
        )

    def nearest(self, query: Floats, where: Filter, k: int = CANDIDATES) -> list[int]:
        """Ids of up to `k` documents allowed by `where`, nearest to `query` by Hamming distance
        of their signs (ties in no particular order)."""
        if self.centre is None:
            return []
        qbits = signs(query[None, :], self.centre)[0]
        best_ids: list[NDArray[np.int64]] = []
        best_dist: list[NDArray[np.uint16]] = []
        for chunk in self.chunks:
            dist = _hamming(chunk.bits, qbits)
            allowed = _allowed(chunk, where)
            if allowed is not None:
                dist[~allowed] = FAR
            idx = _closest(dist, k)
            best_ids.append(chunk.ids[idx])
            best_dist.append(dist[idx])
        if not best_ids:
            return []
        ids, dist = np.concatenate(best_ids), np.concatenate(best_dist)
        keep = dist < FAR
        ids, dist = ids[keep], dist[keep]
        order = np.argsort(dist, kind="stable")[:k]
        return [int(i) for i in ids[order]]


FAR = np.uint16(1 << 15)  # a disallowed document's distance (a real one is at most 256)


def _hamming(bits: NDArray[np.uint64], qbits: NDArray[np.uint64]) -> NDArray[np.uint16]:
    dist = np.zeros(bits.shape[1], dtype=np.uint16)
    for word in range(bits.shape[0]):  # word by word: a sum along the short axis is many times slower
        dist += np.bitwise_count(bits[word] ^ qbits[word])
    return dist


def _allowed(chunk: Chunk, where: Filter) -> NDArray[np.bool_] | None:
    allowed = None if where.projects is None else np.take(where.projects, chunk.project, mode="clip")
    if where.family is not None:
        same = chunk.family == where.family
        allowed = same if allowed is None else allowed & same
    if where.session is not None:
        same = chunk.session == where.session
        allowed = same if allowed is None else allowed & same
    return allowed


def _closest(dist: NDArray[np.uint16], k: int) -> NDArray[np.intp]:
    """Indexes of the `k` smallest distances (more on a tie at the edge): distances are small
    integers, so a histogram finds the edge in one pass (an argpartition takes several)."""
    if len(dist) <= k:
        return np.arange(len(dist))
    counts = np.cumsum(np.bincount(np.minimum(dist, 257), minlength=258))
    edge = min(int(np.searchsorted(counts, k)), 256)
    return np.flatnonzero(dist <= edge)


def _concat(chunks: list[Chunk]) -> Chunk:
    return Chunk(
        np.concatenate([c.ids for c in chunks]),
        np.concatenate([c.bits for c in chunks], axis=1),
        np.concatenate([c.project for c in chunks]),
        np.concatenate([c.family for c in chunks]),
        np.concatenate([c.session for c in chunks]),
    )
