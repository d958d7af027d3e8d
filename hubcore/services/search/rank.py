"""Ranking a one-phrase query without bm25's count over the whole index (issue 15, search speed).

FTS5's `bm25()` starts every statement by counting, for each phrase of the query, the rows of the
whole index it matches (its IDF): a full evaluation of the phrase. At a million events that count
is most of a query's time (10 ms for a common word, 46 ms for a phrase of the two commonest words,
against 1 to 2 ms to find the 1,000 newest rows; docs/benchmarks.md, "Search"). With one phrase the
IDF is one positive factor on every row's score, so it cannot change the order: the rows are ranked
here by the rest of bm25's formula, from each row's count of the phrase (the markers `highlight()`
inserts, measured as its growth, so a document cannot fake them) and its length in tokens (the
`docsize` entry bm25 reads too), against the index's average length. The order is bm25's.

Only a query of one quoted phrase takes this path, of distinct words in ASCII letters and digits
(each such word is one token of the unicode61 tokenizer, and instances of such a phrase never
overlap: `highlight()` merges overlapping instances, which bm25 counts apart). A single word keeps
bm25: its count is a plain walk of one list, cheaper than `highlight()` re-reading 1,000 rows
unless the word is among the commonest (measured at a million events: a mid word 2.6 ms with bm25,
5.9 ms here; the commonest word 11.9 and 5.0; a phrase of the two commonest words 50.1 and 8.2).
"""

from __future__ import annotations

import sqlite3

from hubcore.services.search.query import Parsed

K1, B = 1.2, 0.75  # bm25()'s constants (FTS5's fts5_aux.c)
# The row's id, its count of the phrase and its size entry; {visible}, {scope}, {live} and {joins}
# are the lexical query's own (service.HIT_SQL), so the same rows are ranked.
# A row of 1,024 tokens or more (its size entry longer than 2 bytes, or 2 bytes from x'88') gets no
# count (NULL): `highlight()` re-reads the text, so the caller ranks that query with bm25 instead
# (an artifact indexes up to a million characters; 1,000 of them would be a gigabyte to re-read).
ONE_PHRASE_SQL = """SELECT d.id,
  CASE WHEN length(z.sz) = 1 OR (length(z.sz) = 2 AND z.sz < x'88')
       THEN length(highlight(search_fts, 0, char(1), '')) - length(f.body) END AS tf, z.sz
FROM search_fts f JOIN search_fts_docsize z ON z.id = f.rowid JOIN search_docs d ON d.id = f.rowid {joins}
WHERE search_fts MATCH :match AND {visible} AND {scope} AND {live}
ORDER BY f.rowid DESC LIMIT :rows"""


def one_phrase(parsed: Parsed) -> bool:
    """Whether `parsed` is one phrase alone whose instances cannot overlap (see the module's note)."""
    if parsed.words or len(parsed.phrases) != 1:
        return False
    words = parsed.phrases[0]
    return all(w.isascii() and w.isalnum() for w in words) and len({w.lower() for w in words}) == len(words)


def varint(blob: bytes, at: int = 0) -> tuple[int, int]:
    """SQLite's variable-length integer (FTS5 keeps its sizes in it): its value and the next offset."""
    value = 0
    for n in range(8):
        byte = blob[at + n]
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            return value, at + n + 1
    return (value << 8) | blob[at + 8], at + 9


def average_length(conn: sqlite3.Connection) -> float | None:
    """The index's average document length in tokens, as bm25 takes it (its averages record: the
    row count, then the tokens of the one column); None when the record holds no rows (the caller
    then ranks with bm25 itself)."""
    row = conn.execute("SELECT block FROM search_fts_data WHERE id = 1").fetchone()
    try:
        rows, at = varint(row[0])
        tokens, _ = varint(row[0], at)
    except (TypeError, IndexError):  # no record, or a short one
        return None
    return tokens / rows if rows and tokens else None


def scored(rows: list[tuple[int, int | None, bytes]], avgdl: float) -> list[tuple[int, float]] | None:
    """(id, score) in bm25's sense without its IDF factor: lower is better, as bm25(). None when a
    row got no count (a long document: see ONE_PHRASE_SQL)."""
    out = []
    for doc_id, tf, size in rows:
        if tf is None:
            return None
        length = float(varint(size)[0])
        out.append((doc_id, -1.0 * ((tf * (K1 + 1.0)) / (tf + K1 * (1 - B + B * length / avgdl)))))
    return out
