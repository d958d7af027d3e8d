"""Ranking without bm25's count over the whole index where it costs more than it tells
(issue 15, search speed).

FTS5's `bm25()` starts every statement by counting, for each phrase of the query, the rows of the
whole index it matches (its IDF): a full evaluation of the phrase. At a million events that count
is most of a query's time (18 ms for a common word, 75 ms for a phrase of the two commonest
words, 75 to 200 ms for a prefix of a common word longer than the prefix indexes, against 2 to 4
ms to find the 1,000 newest rows; docs/benchmarks.md, "Search"). The text paths avoid it:

- One quoted phrase (`one_phrase`), or one common word: the IDF is one positive factor on every
  row's score, so it cannot change the order. Rows are ranked by the rest of bm25's formula, from
  each row's count of the term and its length in tokens (the `docsize` entry bm25 reads too), against
  the index's average. A phrase's count is the growth of the text `highlight()` marks (so a
  document cannot fake it); only a phrase of distinct words in ASCII letters and digits (each one
  token of the unicode61 tokenizer; instances of such a phrase never overlap, and `highlight()`
  merges overlapping instances, which bm25 counts apart).
- Whole words (`plain_words`): with several, bm25's IDF weighs them against each other, and it
  changes slowly: each word's count of matching rows is kept (`Frequencies`) and reused while the
  index has not grown or shrunk by more than 1/64 and for at most a minute. Taken only when the
  counts add up to `Ranking.worth_from` rows (for one word too): below that bm25's count is a
  short walk, cheaper than re-reading the rows.
- The prefix pass (the tier below every whole-word hit) weighs its words alike: their counts
  would cost what this path saves (a prefix's count merges every term it starts). A word of five
  characters or more is rewritten as the terms it starts (`expanded`, from `search_terms`): FTS5
  answers a longer prefix than its prefix indexes hold by merging those terms' whole lists, where
  the same terms joined with OR are read lazily, only as far as the 1,000 newest rows.

Each row's count of each word comes from the tokens `highlight()` marks (one token per instance;
a token two words match counts for both, as bm25 counts it); a row whose text holds a marker
character is not read this way (the pass goes to bm25). The text paths re-read the rows' text, so
they rank the newest matching rows that hold `TEXT_BUDGET` tokens (all 1,000 when they are short,
as feed events are; never a row of `LONG_TOKENS` or more: an artifact indexes up to a million
characters); when fewer than the page needs fit, bm25 ranks the pass.
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

from hubcore.services.search.query import Parsed

K1, B = 1.2, 0.75  # bm25()'s constants (FTS5's fts5_aux.c)
# A row of LONG_TOKENS or more gets no count (NULL): the text paths stop before it.
LONG_TOKENS = 16_384  # a row this long or longer (a size entry of 3 bytes or more) is never re-read
SHORT = "length(z.sz) <= 2"
# The row's id, what its counts are read from, and its size entry; {visible}, {scope}, {live} and
# {joins} are the lexical query's own (`service.QuerySql`), so the same rows are ranked.
_PASS_SQL = """SELECT d.id, CASE WHEN {short} THEN {counted} END AS tf, z.sz
FROM search_fts f JOIN search_fts_docsize z ON z.id = f.rowid JOIN search_docs d ON d.id = f.rowid {{joins}}
WHERE search_fts MATCH :match AND f.rowid < :before AND {{visible}} AND {{scope}} AND {{live}}
ORDER BY f.rowid DESC LIMIT :rows"""
# One phrase: its count in the row, as the growth of the text `highlight()` marks.
ONE_PHRASE_SQL = _PASS_SQL.format(short=SHORT, counted="length(highlight(search_fts, 0, char(1), '')) - length(f.body)")
# Plain words: the marked text itself, unless the row's own text holds a marker character.
WORDS_SQL = _PASS_SQL.format(
    short=f"{SHORT} AND instr(f.body, char(1)) = 0 AND instr(f.body, char(2)) = 0",
    counted="highlight(search_fts, 0, char(1), char(2))",
)
COUNT_SQL = "SELECT count(*) FROM search_fts WHERE search_fts MATCH ?"
TEXT_BUDGET = 40_000  # tokens of text `highlight()` may re-read for one pass (about 3 ms)
EXPAND_FROM = 5  # search_fts indexes prefixes of 1 to 4 characters (migration v12): those read them
EXPAND_MAX = 128  # a prefix standing for more terms than this is left to FTS5
CHUNK_FIRST = 200  # rows read in the first chunk of a text path (then as many as the budget holds)
ROWID_MAX = 2**63 - 1
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
    return (
        not parsed.phrases
        and 0 < len(parsed.words) <= WORDS_MAX
        and all(w.isascii() and w.isalnum() for w in parsed.words)
    )


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


def scored(rows: list[tuple[int, int, bytes]], avgdl: float) -> list[tuple[int, float]]:
    """(id, score) in bm25's sense without its IDF factor: lower is better, as bm25(). Every row
    has its count (`Ranking.newest` stops before one without)."""
    return [(doc_id, -_saturated(tf, float(size_of(size)), avgdl)) for doc_id, tf, size in rows]


def fold(token: str) -> str:
    """A token as the unicode61 tokenizer with `remove_diacritics 2` compares it: lower case,
    combining marks dropped."""
    if token.isascii():
        return token.lower()
    return "".join(c for c in unicodedata.normalize("NFD", token) if not unicodedata.combining(c)).lower()


def scored_words(
    rows: list[tuple[int, str, bytes]], words: tuple[str, ...], weights: list[float], *, prefix: bool, avgdl: float
) -> list[tuple[int, float]] | None:
    """(id, bm25 score) from each row's marked text (no marker character of its own: WORDS_SQL):
    each marked token counts for every word it matches (whole, or as a prefix on the prefix pass);
    with one word every marked token is its instance. None when a marked token matches no word (the
    tokenizer folded it in a way `fold` does not), and the caller asks bm25."""
    wanted = [w.lower() for w in words]
    matches: dict[str, list[int]] = {}  # a marked token's text -> the words it matches

    def matched(token: str) -> list[int]:
        found = matches.get(token)
        if found is None:
            seen = fold(token)
            found = matches[token] = [n for n, w in enumerate(wanted) if seen == w or (prefix and seen.startswith(w))]
        return found

    out = []
    for doc_id, marked, size in rows:
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

    def __init__(self, *, size: int = 4096, ttl: float = 60.0, clock: Callable[[], float] = time.monotonic) -> None:
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


def expanded(conn: sqlite3.Connection, words: tuple[str, ...]) -> str | None:
    """The prefix pass's match expression for `words` (ASCII letters and digits): each word of
    `EXPAND_FROM` characters or more as the terms of the index it starts (`search_terms`) joined
    with OR, when at most `EXPAND_MAX`; else, and for shorter words (FTS5's prefix indexes answer
    them), `"word"*` as FTS5 reads it. None when a word starts no term: nothing matches."""
    parts = []
    for word in words:
        stem = word.lower()
        if len(stem) < EXPAND_FROM:
            parts.append(f'"{stem}"*')
            continue
        terms = [
            r[0]
            for r in conn.execute(
                "SELECT term FROM search_terms WHERE term >= ? AND term < ? LIMIT ?",
                (stem, stem[:-1] + chr(ord(stem[-1]) + 1), EXPAND_MAX + 1),
            )
        ]
        if not terms:
            return None
        if len(terms) > EXPAND_MAX:
            parts.append(f'"{stem}"*')
            continue
        quoted = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
        parts.append(f"({quoted})" if len(terms) > 1 else quoted)
    return " AND ".join(parts)


class Ranking:
    """How each pass of a lexical query is ranked (the module's note): `rank` answers (id, score)
    rows, lower first, in bm25's order."""

    def __init__(
        self, *, worth_from: int = 50_000, text_budget: int = TEXT_BUDGET, frequencies: Frequencies | None = None
    ) -> None:
        self.worth_from = worth_from  # the words' counts, added, from which the words path is taken
        self.text_budget = text_budget
        self.frequencies = frequencies or Frequencies()

    def rank(
        self,
        conn: sqlite3.Connection,
        parsed: Parsed,
        *,
        prefix: bool,
        bm25_sql: str,
        fill: dict[str, str],
        args: dict[str, Any],
        need: int,
    ) -> list[Any]:
        """`need`: the rows the page still wants (a text path ranks at least so many, or none)."""
        found = self._fast(conn, parsed, prefix=prefix, fill=fill, args=args, need=need)
        return found if found is not None else conn.execute(bm25_sql, args).fetchall()

    def _fast(
        self,
        conn: sqlite3.Connection,
        parsed: Parsed,
        *,
        prefix: bool,
        fill: dict[str, str],
        args: dict[str, Any],
        need: int,
    ) -> list[tuple[int, float]] | None:
        phrase = one_phrase(parsed)
        if not phrase and not plain_words(parsed):
            return None
        index = totals(conn)
        if index is None:
            return None
        weights: list[float] = []
        if prefix and not phrase:
            match = expanded(conn, parsed.words)
            if match is None:
                return []  # a word no term of the index starts with: no row matches
            args = {**args, "match": match}
            weights = [1.0] * len(parsed.words)  # the prefix tier: no word's count (see the note)
        elif not phrase:
            counts = [self.frequencies.hits(conn, expr, index.rows) for expr in parsed.terms(prefix)]
            if sum(counts) < self.worth_from:
                return None  # bm25's count is a short walk: cheaper than re-reading the rows
            # One word's IDF is one factor on every score: left out.
            weights = [1.0] if len(counts) == 1 else [idf(index.rows, n) for n in counts]
        sql = (ONE_PHRASE_SQL if phrase else WORDS_SQL).format(**fill)
        rows = self.newest(conn, sql, args, need)
        if rows is None:
            return None
        if phrase:
            return scored(rows, index.avgdl)
        return scored_words(rows, parsed.words, weights, prefix=prefix, avgdl=index.avgdl)

    def newest(self, conn: sqlite3.Connection, sql: str, args: dict[str, Any], need: int) -> list[Any] | None:
        """The newest matching rows (up to `args["rows"]`) that hold `text_budget` tokens, read in
        chunks down the index (`rowid < before`), each sized to what the budget has left, so the
        match is evaluated once and little text is read past the budget: all of them when they are
        short, as feed events are; a row of `LONG_TOKENS` or more ends them there. None when fewer
        than `need` fit (long documents: bm25 ranks the pass, its cost not growing with them) or a
        row's own text holds a marker character (its counts cannot be read)."""
        rows: list[Any] = []
        wanted, spent, before, chunk = int(args["rows"]), 0, ROWID_MAX, CHUNK_FIRST
        while len(rows) < wanted:
            got = conn.execute(sql, {**args, "rows": min(chunk, wanted - len(rows)), "before": before}).fetchall()
            for row in got:
                size = size_of(row[2])
                if row[1] is None and size < LONG_TOKENS:
                    return None  # a marker in the row's text (WORDS_SQL)
                if row[1] is None or spent + size > self.text_budget:
                    return rows if len(rows) >= need else None
                spent += size
                rows.append(row)
            if len(got) < chunk:
                break
            before = got[-1][0]
            # What the budget has left at the rows' length so far, at most twice the last chunk (the
            # rows further down may be longer: a chunk's text past the budget is read for nothing).
            room = int((self.text_budget - spent) * len(rows) / max(spent, 1)) + 1
            chunk = max(CHUNK_FIRST // 4, min(2 * chunk, room))
        return rows
