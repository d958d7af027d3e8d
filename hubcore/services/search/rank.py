"""Ranking without bm25's count over the whole index where it costs more than it tells
(issue 15, search speed).

FTS5's `bm25()` starts every statement by counting, for each phrase of the query, the rows of the
whole index it matches (its IDF): a full evaluation of the phrase. At a million events that count
is most of a query's time (10 ms for a common word, 46 ms for a phrase of the two commonest words,
against 1 to 2 ms to find the 1,000 newest rows; docs/benchmarks.md, "Search"). Two paths avoid it,
each giving bm25's order over the same rows:

- One quoted phrase (`one_phrase`): the IDF is one positive factor on every row's score, so it
  cannot change the order. Rows are ranked by the rest of bm25's formula, from each row's count of
  the phrase (the markers `highlight()` inserts, measured as its growth, so a document cannot fake
  them) and its length in tokens (the `docsize` entry bm25 reads too), against the index's average.
  Only a phrase of distinct words in ASCII letters and digits (each one token of the unicode61
  tokenizer; instances of such a phrase never overlap, and `highlight()` merges overlapping
  instances, which bm25 counts apart).
- Plain words, whole or as prefixes (`plain_words`): bm25's IDF weighs the words against each
  other, so it is needed, but it changes slowly: each word's count of matching rows is kept
  (`Frequencies`) and reused while the index has not grown or shrunk by more than 1/64 and for at
  most a minute. Each row's count of each word comes from the tokens `highlight()` marks (one
  token per instance; a token two words match counts for both, as bm25 counts it); a row whose
  text holds a marker character is not read this way (the pass goes to bm25), so a document
  cannot fake its counts either. Taken only when the words' counts add up to `Ranking.worth_from`
  rows: below that bm25's count is a short walk, cheaper than `highlight()` re-reading the rows
  (at a million events, a mid word: 2.6 ms with bm25, 5.9 here; the commonest word: 11.9 and 5.0).

A row of 1,024 tokens or more sends its pass back to bm25: `highlight()` re-reads the text (an
artifact indexes up to a million characters; 1,000 of them would be a gigabyte to re-read).
"""

from __future__ import annotations

import math
import re
import sqlite3
import threading
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hubcore.services.search.models import HITS_MAX
from hubcore.services.search.query import Parsed

K1, B = 1.2, 0.75  # bm25()'s constants (FTS5's fts5_aux.c)
# A row of 1,024 tokens or more (its size entry longer than 2 bytes, or 2 bytes from x'88') gets no
# count (NULL), so the caller ranks that pass with bm25 instead (the module's note).
SHORT = "(length(z.sz) = 1 OR (length(z.sz) = 2 AND z.sz < x'88'))"
# The row's id, what its counts are read from, and its size entry; {visible}, {scope}, {live} and
# {joins} are the lexical query's own (service.HIT_SQL), so the same rows are ranked.
_PASS_SQL = """SELECT d.id, CASE WHEN {short} THEN {counted} END AS tf, z.sz
FROM search_fts f JOIN search_fts_docsize z ON z.id = f.rowid JOIN search_docs d ON d.id = f.rowid {{joins}}
WHERE search_fts MATCH :match AND {{visible}} AND {{scope}} AND {{live}}
ORDER BY f.rowid DESC LIMIT :rows"""
# One phrase: its count in the row, as the growth of the text `highlight()` marks.
ONE_PHRASE_SQL = _PASS_SQL.format(short=SHORT, counted="length(highlight(search_fts, 0, char(1), '')) - length(f.body)")
# Plain words: the marked text itself, unless the row's own text holds a marker character.
WORDS_SQL = _PASS_SQL.format(short=f"{SHORT} AND instr(f.body, char(1)) = 0 AND instr(f.body, char(2)) = 0",
                             counted="highlight(search_fts, 0, char(1), char(2))")
# The same rows' ids and size entries alone (no text read): how deep the text paths may go.
SIZES_SQL = _PASS_SQL.format(short="1", counted="NULL")
COUNT_SQL = "SELECT count(*) FROM search_fts WHERE search_fts MATCH ?"
TEXT_BUDGET = 60_000  # tokens of text `highlight()` may re-read for one pass (about 4 ms)
DEPTH_MIN = HITS_MAX + 1  # the text paths rank at least this many rows (when so many match), or none
WORDS_MAX = 8  # a longer query of plain words is ranked by bm25 (each word would need its count)
_MARKED = re.compile("\x01([^\x02]*)\x02")


def one_phrase(parsed: Parsed) -> bool:
    """Whether `parsed` is one phrase alone whose instances cannot overlap (see the module's note)."""
    if parsed.words or len(parsed.phrases) != 1:
        return False
    words = parsed.phrases[0]
    return all(w.isascii() and w.isalnum() for w in words) and len({w.lower() for w in words}) == len(words)


def plain_words(parsed: Parsed) -> bool:
    """Whether `parsed` is words alone (no phrase), at most `WORDS_MAX`, each of ASCII letters and
    digits (one token of the unicode61 tokenizer, compared with a marked token case-blind)."""
    return (not parsed.phrases and 0 < len(parsed.words) <= WORDS_MAX
            and all(w.isascii() and w.isalnum() for w in parsed.words))


def varint(blob: bytes, at: int = 0) -> tuple[int, int]:
    """SQLite's variable-length integer (FTS5 keeps its sizes in it): its value and the next offset."""
    value = 0
    for n in range(8):
        byte = blob[at + n]
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            return value, at + n + 1
    return (value << 8) | blob[at + 8], at + 9


@dataclass(frozen=True)
class Totals:
    """The index's rows and its average document length in tokens, as bm25 reads them."""

    rows: int
    avgdl: float


def totals(conn: sqlite3.Connection) -> Totals | None:
    """The index's averages record (its row count, then the tokens of the one column); None when it
    holds no rows (the caller then ranks with bm25 itself)."""
    row = conn.execute("SELECT block FROM search_fts_data WHERE id = 1").fetchone()
    try:
        rows, at = varint(row[0])
        tokens, _ = varint(row[0], at)
    except (TypeError, IndexError):  # no record, or a short one
        return None
    return Totals(rows, tokens / rows) if rows and tokens else None


def average_length(conn: sqlite3.Connection) -> float | None:
    """The index's average document length in tokens, as bm25 takes it."""
    found = totals(conn)
    return None if found is None else found.avgdl


def size_of(entry: bytes) -> int:
    """A row's length in tokens from its size entry (one varint: a row's single column)."""
    if len(entry) == 1:
        return entry[0]
    if len(entry) == 2 and entry[0] & 0x80 and not entry[1] & 0x80:
        return ((entry[0] & 0x7F) << 7) | entry[1]
    return varint(entry)[0]


def _saturated(tf: float, length: float, avgdl: float) -> float:
    return (tf * (K1 + 1.0)) / (tf + K1 * (1 - B + B * length / avgdl))


def idf(rows: int, hits: int) -> float:
    """bm25's IDF of a phrase matching `hits` of the index's `rows` (FTS5's floor included)."""
    found = math.log((rows - hits + 0.5) / (hits + 0.5))
    return found if found > 0.0 else 1e-6


def scored(rows: list[tuple[int, int | None, bytes]], avgdl: float) -> list[tuple[int, float]] | None:
    """(id, score) in bm25's sense without its IDF factor: lower is better, as bm25(). None when a
    row got no count (a long document: see ONE_PHRASE_SQL)."""
    out = []
    for doc_id, tf, size in rows:
        if tf is None:
            return None
        out.append((doc_id, -_saturated(tf, float(size_of(size)), avgdl)))
    return out


def fold(token: str) -> str:
    """A token as the unicode61 tokenizer with `remove_diacritics 2` compares it: lower case,
    combining marks dropped."""
    if token.isascii():
        return token.lower()
    return "".join(c for c in unicodedata.normalize("NFD", token) if not unicodedata.combining(c)).lower()


def scored_words(rows: list[tuple[int, str | None, bytes]], words: tuple[str, ...], weights: list[float],
                 *, prefix: bool, avgdl: float) -> list[tuple[int, float]] | None:
    """(id, bm25 score) from each row's marked text (no marker character of its own: WORDS_SQL):
    each marked token counts for every word it matches (whole, or as a prefix on the prefix pass);
    with one word every marked token is its instance. None when a row cannot be read that way (a
    long document, a marker in its text, or a marked token no word matches: the tokenizer folded
    it in a way `fold` does not), and the caller asks bm25."""
    wanted = [w.lower() for w in words]
    matches: dict[str, list[int]] = {}  # a marked token's text -> the words it matches

    def matched(token: str) -> list[int]:
        found = matches.get(token)
        if found is None:
            seen = fold(token)
            found = matches[token] = [n for n, w in enumerate(wanted)
                                      if seen == w or (prefix and seen.startswith(w))]
        return found

    out = []
    for doc_id, marked, size in rows:
        if marked is None:
            return None
        length = float(size_of(size))
        if len(wanted) == 1:
            out.append((doc_id, -weights[0] * _saturated(marked.count("\x01"), length, avgdl)))
            continue
        counts = [0] * len(wanted)
        for token in _MARKED.findall(marked):
            hit = matched(token)
            if not hit:
                return None
            for n in hit:
                counts[n] += 1
        out.append((doc_id, -sum(w * _saturated(tf, length, avgdl) for w, tf in zip(weights, counts, strict=True))))
    return out


@dataclass
class _Kept:
    hits: int
    rows: int  # the index's rows when counted
    at: float


class Frequencies:
    """How many rows of the whole index each match expression hits (bm25's IDF counts), kept for
    reuse: a count stands while the index holds within 1/64 of the rows it held when counted, and
    for at most `ttl` seconds. Read threads share it (a lock guards the table, never a count)."""

    def __init__(self, *, size: int = 4096, ttl: float = 60.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._kept: dict[str, _Kept] = {}
        self._lock = threading.Lock()
        self._size, self._ttl, self._clock = size, ttl, clock

    def hits(self, conn: sqlite3.Connection, expr: str, rows: int) -> int:
        now = self._clock()
        with self._lock:
            kept = self._kept.get(expr)
        if kept is not None and now - kept.at < self._ttl and abs(rows - kept.rows) <= kept.rows >> 6:
            return kept.hits
        hits = int(conn.execute(COUNT_SQL, (expr,)).fetchone()[0])
        with self._lock:
            self._kept.pop(expr, None)
            self._kept[expr] = _Kept(hits, rows, now)
            while len(self._kept) > self._size:
                del self._kept[next(iter(self._kept))]  # the oldest count
        return hits


class Ranking:
    """How each pass of a lexical query is ranked (the module's note): `rank` answers (id, score)
    rows, lower first, in bm25's order."""

    def __init__(self, *, worth_from: int = 50_000, text_budget: int = TEXT_BUDGET,
                 frequencies: Frequencies | None = None) -> None:
        self.worth_from = worth_from  # the words' counts, added, from which the words path is taken
        self.text_budget = text_budget
        self.frequencies = frequencies or Frequencies()

    def rank(self, conn: sqlite3.Connection, parsed: Parsed, *, prefix: bool, bm25_sql: str,
             fill: dict[str, str], args: dict[str, Any]) -> list[Any]:
        found = self._fast(conn, parsed, prefix=prefix, fill=fill, args=args)
        return found if found is not None else conn.execute(bm25_sql, args).fetchall()

    def _fast(self, conn: sqlite3.Connection, parsed: Parsed, *, prefix: bool, fill: dict[str, str],
              args: dict[str, Any]) -> list[tuple[int, float]] | None:
        phrase = one_phrase(parsed)
        if not phrase and not plain_words(parsed):
            return None
        index = totals(conn)
        if index is None:
            return None
        weights: list[float] = []
        if not phrase:
            counts = [self.frequencies.hits(conn, expr, index.rows) for expr in parsed.terms(prefix)]
            if sum(counts) < self.worth_from:
                return None
            weights = [idf(index.rows, n) for n in counts]
        depth = self.depth(conn, fill, args)
        if depth is None:
            return None
        limited = {**args, "rows": depth}
        if phrase:
            return scored(conn.execute(ONE_PHRASE_SQL.format(**fill), limited).fetchall(), index.avgdl)
        rows = conn.execute(WORDS_SQL.format(**fill), limited).fetchall()
        return scored_words(rows, parsed.words, weights, prefix=prefix, avgdl=index.avgdl)

    def depth(self, conn: sqlite3.Connection, fill: dict[str, str], args: dict[str, Any]) -> int | None:
        """How many of the newest matching rows the text paths rank: as many as hold `text_budget`
        tokens (all of them when they are short, as feed events are); None when that is fewer than
        `DEPTH_MIN` of them (long documents: bm25 ranks the pass, its cost not growing with them)."""
        sizes = conn.execute(SIZES_SQL.format(**fill), args).fetchall()
        spent = 0
        for n, (_, _, size) in enumerate(sizes):
            spent += size_of(size)
            if spent > self.text_budget:
                return n if n >= DEPTH_MIN else None
        return len(sizes)
