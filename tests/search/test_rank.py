"""Ranking without bm25's whole-index count (`search/rank.py`): one phrase and one word in bm25's
order, several whole words with bm25's own scores (kept counts), the prefix tier by every word's
count alike; a prefix rewritten as the terms it starts matches FTS5's own rows; a document cannot
fake its counts; long documents and thin budgets go to bm25."""

from __future__ import annotations

import math
import random
import re
import sqlite3
import unicodedata
from typing import Any

import pytest

from hubcore.hub import Hub
from hubcore.parts.protocol import Part, SearchScope
from hubcore.services import brain_search
from hubcore.services.search import rank
from hubcore.services.search.query import parse as parse_query
from hubcore.services.search.rank import (
    Frequencies,
    Ranking,
    Totals,
    expanded,
    idf,
    one_phrase,
    plain_words,
    totals,
    varint,
)
from hubcore.services.search.service import QuerySql
from tests.requests import a_signal
from tests.search.conftest import ADMIN_CALLER, ALICE, hits, search

pytestmark = pytest.mark.anyio
WORDS = ["otter", "heron", "marten", "vole", "stoat", "lynx"]


class _Sessions(Part):
    """The one part whose scope the query carries here (the sessions' liveness)."""

    def search_scope(self) -> SearchScope:
        return brain_search.SCOPE


SQL = QuerySql.of([_Sessions()])
HIT_SQL, HIT_JOINS, HIT_LIVE = SQL.hit, SQL.joins, SQL.live


@pytest.mark.parametrize(
    ("text", "fast"),
    [
        ('"otter heron"', True),
        ('"otter"', True),
        ('"otter heron" vole', False),
        ("otter heron", False),
        ('"otter heron" "vole"', False),
        ('"otter otter"', False),
        ('"Otter otter"', False),
        ('"café heron"', False),
        ('"otter2 heron"', True),
    ],
)
def test_only_one_phrase_of_distinct_ascii_words_takes_the_fast_path(text: str, fast: bool) -> None:
    assert one_phrase(parse_query(text)) is fast


@pytest.mark.parametrize("value", [0, 1, 127, 128, 300, 16_383, 16_384, 2**31, 2**56 - 1, 2**63 - 1])
def test_varint_reads_sqlites_encoding(value: int) -> None:
    encoded = _encode(value)
    assert varint(encoded + b"\xff") == (value, len(encoded))


def test_sizes_are_read_as_fts5_wrote_them() -> None:
    """A document's size entry and the index's averages record, as FTS5 itself wrote them."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute("CREATE VIRTUAL TABLE search_fts USING fts5(body)")
        conn.executemany(
            "INSERT INTO search_fts (rowid, body) VALUES (?, ?)",
            [(1, "otter " * 3), (2, "heron " * 200), (3, "vole " * 20_000)],
        )
        conn.commit()  # FTS5 writes its averages record when the transaction ends
        sizes = [varint(r[0])[0] for r in conn.execute("SELECT sz FROM search_fts_docsize ORDER BY id")]
        assert sizes == [3, 200, 20_000]
        assert totals(conn) == Totals(3, (3 + 200 + 20_000) / 3)
        conn.execute("DELETE FROM search_fts")
        conn.commit()
        assert totals(conn) is None  # an empty index: the caller ranks with bm25
    finally:
        conn.close()


def _encode(value: int) -> bytes:
    """SQLite's varint (sqlite3PutVarint), written out independently of `rank.varint`."""
    if value >= 1 << 56:
        out = [value & 0xFF]
        value >>= 8
        for _ in range(8):
            out.append((value & 0x7F) | 0x80)
            value >>= 7
        return bytes(reversed(out))
    out = [value & 0x7F]
    value >>= 7
    while value:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    return bytes(reversed(out))


def _bm25_order(conn: sqlite3.Connection, match: str) -> list[str]:
    rows = conn.execute(HIT_SQL.format(visible="1", scope="1"), {"match": match, "rows": 1000}).fetchall()
    ids = [r[0] for r in sorted(rows, key=lambda r: r[1])]
    keys = dict(conn.execute("SELECT id, key FROM search_docs WHERE family = 'feed'").fetchall())
    return [keys[i] for i in ids if i in keys]


@pytest.mark.parametrize("long_document", [False, True])
async def test_phrase_hits_come_in_bm25s_order(hub: Hub, long_document: bool) -> None:
    rng = random.Random(5)
    for n in range(120):  # lengths from 2 to 60 words, the phrase 0 to 4 times, ties among them
        text = [rng.choice(WORDS) for _ in range(rng.randint(0, 56))]
        for _ in range(rng.randint(0, 4)):
            at = rng.randint(0, len(text))
            text[at:at] = ["otter", "heron"]
        await hub.posts.signal_append(ALICE, a_signal(project_id="web", summary=f"s{n}", body=" ".join(text)))
    if long_document:  # 1,500 tokens: re-read like the rest (under 16,384), in the same order
        await hub.posts.signal_append(
            ALICE,
            a_signal(
                project_id="web",
                summary="long",
                body=" ".join(rng.choice(WORDS) for _ in range(1_500)) + " otter heron",
            ),
        )
    for query in ('"otter heron"', '"heron otter"', '"vole"', '"lynx stoat marten"'):
        found = [h["event_id"] for h in hits(await search(hub, ADMIN_CALLER, query, limit=100))]
        match = parse_query(query).whole

        def bm25_order(conn: sqlite3.Connection, m: str = match) -> list[str]:
            return _bm25_order(conn, m)

        expected = await hub.core.store.read(bm25_order)
        assert found == expected[:100], query
        assert len(found) > 5, query


@pytest.mark.parametrize(
    ("query", "faking"),
    [
        ('"otter heron"', "\x01\x01\x01 otter heron \x01\x01 vole vole vole"),
        ("otter heron", "\x01otter\x02\x01otter\x02 otter heron vole"),
    ],
)
async def test_a_document_cannot_fake_its_counts(hub: Hub, query: str, faking: str) -> None:
    """A phrase's count is how much `highlight()` grew the text; a row holding a marker character
    is ranked by bm25: marker characters in a document add nothing, and the document holding the
    words three times ranks first."""
    hub.search.ranking.worth_from = 0  # the words path, however few rows
    plain = (
        await hub.posts.signal_append(
            ALICE, a_signal(project_id="web", summary="plain", body="otter heron otter heron otter heron vole")
        )
    )["event_id"]
    fake = (await hub.posts.signal_append(ALICE, a_signal(project_id="web", summary="faking", body=faking)))["event_id"]
    found = [h["event_id"] for h in hits(await search(hub, ADMIN_CALLER, query))]
    assert found == [plain, fake]


# -- plain words: bm25's IDF from kept counts, each row's counts from the tokens it marks ----------


@pytest.mark.parametrize(
    ("text", "fast"),
    [
        ("otter", True),
        ("otter heron", True),
        ("Otter otter", True),
        ("ot2 heron", True),
        ('"otter" heron', False),
        ('"otter heron"', False),
        ("café", False),
        ("a b c d e f g h", True),
        ("a b c d e f g h i", False),
    ],
)
def test_only_plain_ascii_words_take_the_words_path(text: str, fast: bool) -> None:
    assert plain_words(parse_query(text)) is fast


def _pass(
    conn: sqlite3.Connection, ranking: Ranking, text: str, *, prefix: bool, bm25_sql: str, need: int = 101
) -> list[tuple[int, float]]:
    parsed = parse_query(text)
    fill = {"joins": HIT_JOINS, "visible": "1", "scope": "1", "live": HIT_LIVE}
    args = {"match": parsed.prefix if prefix else parsed.whole, "rows": 1000}
    return [
        tuple(r) for r in ranking.rank(conn, parsed, prefix=prefix, bm25_sql=bm25_sql, fill=fill, args=args, need=need)
    ]


async def _load_words(hub: Hub, rng: random.Random, n: int = 150) -> None:
    spelled = {"otter": ["otter", "Otter", "OTTER", "Ötter", "otters"], "heron": ["heron", "herons", "Héron"]}
    for i in range(n):  # 0 to 60 words, some spelled with capitals, diacritics or as longer words
        text = [rng.choice(spelled.get(w, [w])) for w in (rng.choice(WORDS) for _ in range(rng.randint(0, 60)))]
        await hub.posts.signal_append(ALICE, a_signal(project_id="web", summary=f"w{i}", body=" ".join(text)))
    await hub.search.index.catch_up()  # indexing is lazy: these tests read the index directly


def _bm25(conn: sqlite3.Connection, text: str, *, prefix: bool) -> list[tuple[int, float]]:
    parsed = parse_query(text)
    args = {"match": parsed.prefix if prefix else parsed.whole, "rows": 1000}
    return [tuple(r) for r in conn.execute(HIT_SQL.format(visible="1", scope="1"), args).fetchall()]


NO_BM25 = "SELECT no_such_column FROM search_docs"  # the text path must answer: bm25 cannot run


@pytest.mark.parametrize("text", ["otter heron", "heron vole stoat", "Otter OTTER", "otter lynx"])
async def test_several_whole_words_are_scored_as_bm25_scores_them(hub: Hub, text: str) -> None:
    """Every word's count from the index, every row's from its marked tokens: bm25's own scores."""
    await _load_words(hub, random.Random(11))

    def both(conn: sqlite3.Connection) -> tuple[list[tuple[int, float]], list[tuple[int, float]]]:
        return _pass(conn, Ranking(worth_from=0), text, prefix=False, bm25_sql=NO_BM25), _bm25(conn, text, prefix=False)

    mine, theirs = await hub.core.store.read(both)
    assert len(mine) > 5
    assert [r[0] for r in mine] == [r[0] for r in theirs]
    for (_, got), (_, want) in zip(mine, theirs, strict=True):
        assert got == pytest.approx(want, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("text", ["otter", "Otter", "lynx", "heron", "ott"])
async def test_one_whole_word_is_ranked_in_bm25s_order_without_its_count(hub: Hub, text: str) -> None:
    """One word's IDF is one factor on every score: left out, every score is bm25's over it."""
    await _load_words(hub, random.Random(11))

    def both(conn: sqlite3.Connection) -> tuple[list[tuple[int, float]], list[tuple[int, float]]]:
        return (
            _pass(conn, Ranking(worth_from=0), text, prefix=False, bm25_sql=NO_BM25),
            _bm25(conn, text, prefix=False),
        )

    mine, theirs = await hub.core.store.read(both)
    assert [r[0] for r in mine] == [r[0] for r in theirs]
    if text == "ott":
        assert mine == []
        return
    factor = theirs[0][1] / mine[0][1]
    assert factor > 0
    for (_, got), (_, want) in zip(mine, theirs, strict=True):
        assert got * factor == pytest.approx(want, rel=1e-9, abs=1e-12)


def _fold(token: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", token) if not unicodedata.combining(c)).lower()


@pytest.mark.parametrize(
    "text",
    [
        "otter",
        "ott",
        "ot otter",
        "her he",
        "otter heron",
        "heron vole stoat",
        "Otter OTTER",
        "otte",
        "herons",
        "marte vole",
        "heron lynx",
    ],
)
async def test_the_prefix_tier_counts_every_word_alike(hub: Hub, text: str) -> None:
    """On the prefix pass the rows are FTS5's own for the words as prefixes (a prefix of four
    characters or more rewritten as its terms), each scored by every word's count in it (a token
    two words start counting for both), the words weighed alike."""
    await _load_words(hub, random.Random(11))

    def both(conn: sqlite3.Connection) -> tuple[list[tuple[int, float]], list[tuple[int, float]], dict[int, Any]]:
        mine = _pass(conn, Ranking(), text, prefix=True, bm25_sql=NO_BM25)
        rows = {
            r[0]: (r[1], varint(r[2])[0])
            for r in conn.execute(
                "SELECT f.rowid, f.body, z.sz FROM search_fts f JOIN search_fts_docsize z ON z.id = f.rowid"
            )
        }
        return mine, _bm25(conn, text, prefix=True), rows | {0: totals(conn).avgdl}

    mine, theirs, rows = await hub.core.store.read(both)
    assert len(mine) > 5
    assert [r[0] for r in mine] == [r[0] for r in theirs]
    avgdl, words = rows.pop(0), [w.lower() for w in parse_query(text).words]
    for doc_id, got in mine:
        body, length = rows[doc_id]
        tokens = [_fold(t) for t in re.findall(r"[^\W_]+", body)]
        want = -sum(
            (tf * 2.2) / (tf + 1.2 * (0.25 + 0.75 * length / avgdl))
            for tf in (sum(t.startswith(w) for t in tokens) for w in words)
        )
        assert got == pytest.approx(want, rel=1e-9), (doc_id, body)


async def test_a_prefix_is_rewritten_as_the_terms_it_starts(hub: Hub, monkeypatch: pytest.MonkeyPatch) -> None:
    await _load_words(hub, random.Random(11))
    await hub.posts.signal_append(ALICE, a_signal(project_id="web", summary="x", body='heronry "quoted" Hérons'))
    await hub.search.index.catch_up()

    def read(conn: sqlite3.Connection) -> list[str | None]:
        return [
            expanded(conn, w)
            for w in (("otter",), ("heron",), ("ot", "heron"), ("otte",), ("zzzzz",), ("otter", "zzzzz"))
        ]

    assert await hub.core.store.read(read) == [
        '("otter" OR "otters")',
        '("heron" OR "heronry" OR "herons")',
        '"ot"* AND ("heron" OR "heronry" OR "herons")',
        '"otte"*',
        None,
        None,
    ]  # four characters: FTS5's own prefix index
    monkeypatch.setattr(rank, "EXPAND_MAX", 2)
    assert (await hub.core.store.read(read))[1] == '"heron"*'  # three terms, over the cap: FTS5's own prefix


async def test_a_prefix_no_term_starts_matches_nothing(hub: Hub) -> None:
    await _load_words(hub, random.Random(11), n=20)
    await hub.posts.signal_append(ALICE, a_signal(project_id="web", summary="edges", body="Quartz 202999 zzzzzz"))
    # Prefixes rewritten as their terms: the range ends after the last character ('z' + 1, '9' + 1),
    # the word folded to lower case.
    assert [h["snippet"] for h in hits(await search(hub, ADMIN_CALLER, "QUART"))] == ["Quartz 202999 zzzzzz"]
    assert [h["snippet"] for h in hits(await search(hub, ADMIN_CALLER, "20299"))] == ["Quartz 202999 zzzzzz"]
    assert [h["snippet"] for h in hits(await search(hub, ADMIN_CALLER, "zzzz zzzzz"))] == ["Quartz 202999 zzzzzz"]
    assert hits(await search(hub, ADMIN_CALLER, "zzzzq")) == []
    assert hits(await search(hub, ADMIN_CALLER, "otter zzzzq")) == []
    assert hits(await search(hub, ADMIN_CALLER, "herons"))  # its terms: herons (and Hérons)


@pytest.mark.parametrize("body", ["\x01otter\x02 heron otter", "otter heron \x02", "otter " * 16_400])
async def test_a_row_the_words_path_cannot_read_goes_to_bm25(hub: Hub, body: str) -> None:
    """Marker characters in a text; the newest row of 16,384 tokens or more (never re-read), so
    fewer rows than the page needs before it: the pass is bm25's own."""
    await _load_words(hub, random.Random(3), n=40)
    await hub.posts.signal_append(ALICE, a_signal(project_id="web", summary="odd", body=body))
    await hub.search.index.catch_up()
    bm25_sql = HIT_SQL.format(visible="1", scope="1")

    def both(conn: sqlite3.Connection) -> tuple[list[tuple[int, float]], list[tuple[int, float]]]:
        return (
            _pass(conn, Ranking(worth_from=0), "otter", prefix=False, bm25_sql=bm25_sql),
            _pass(conn, Ranking(worth_from=10**9), "otter", prefix=False, bm25_sql=bm25_sql),
        )

    mine, theirs = await hub.core.store.read(both)
    assert mine == theirs  # the same statement answered both


def test_counts_are_kept_while_the_index_stays_near_its_size() -> None:
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute("CREATE VIRTUAL TABLE search_fts USING fts5(body)")
        conn.executemany("INSERT INTO search_fts (body) VALUES (?)", [("otter",)] * 640)
        now = [0.0]
        kept = Frequencies(size=2, ttl=60.0, clock=lambda: now[0])
        assert kept.hits(conn, '"otter"', 640) == 640
        conn.executemany("INSERT INTO search_fts (body) VALUES (?)", [("otter",)] * 10)
        assert kept.hits(conn, '"otter"', 650) == 640  # 10 rows more: within 1/64, kept
        assert kept.hits(conn, '"otter"', 651) == 650  # 11 more: counted again
        conn.executemany("INSERT INTO search_fts (body) VALUES (?)", [("otter",)] * 5)
        now[0] = 59.0
        assert kept.hits(conn, '"otter"', 651) == 650
        now[0] = 61.0
        assert kept.hits(conn, '"otter"', 651) == 655  # a minute old: counted again
        kept.hits(conn, '"heron"', 655)
        kept.hits(conn, '"vole"', 655)  # a third expression: the oldest count goes
        conn.execute("INSERT INTO search_fts (body) VALUES ('otter')")
        assert kept.hits(conn, '"otter"', 655) == 656
    finally:
        conn.close()


def test_idf_is_bm25s_with_its_floor() -> None:
    assert idf(1000, 10) == pytest.approx(math.log(990.5 / 10.5))
    assert idf(1000, 600) == 1e-6  # more than half the rows: bm25's floor


async def _load_long(hub: Hub, count: int) -> None:
    rng = random.Random(7)
    for i in range(count):  # every one holds `otter`: 10 to 40 words
        text = ["otter"] + [rng.choice(WORDS) for _ in range(rng.randint(9, 39))]
        rng.shuffle(text)
        await hub.posts.signal_append(ALICE, a_signal(project_id="web", summary=f"l{i}", body=" ".join(text)))
    await hub.search.index.catch_up()


@pytest.mark.parametrize("text", ["otter", "otter heron", '"otter heron"'])
async def test_the_text_paths_rank_the_newest_rows_their_budget_holds(hub: Hub, text: str) -> None:
    """Past `text_budget` tokens of text the newest rows that fit are ranked (at least 101), each
    scored as bm25 scores it; fewer than 101 fitting sends the pass to bm25 over every row."""
    await _load_long(hub, 300)
    bm25_sql = HIT_SQL.format(visible="1", scope="1")

    def sizes(conn: sqlite3.Connection) -> list[int]:
        match = parse_query(text).whole
        return [
            varint(r[0])[0]
            for r in conn.execute(
                """SELECT z.sz FROM search_fts f JOIN search_fts_docsize z ON z.id = f.rowid
               WHERE search_fts MATCH ? ORDER BY f.rowid DESC""",
                (match,),
            )
        ]

    held = await hub.core.store.read(sizes)
    assert len(held) > 150
    budget = sum(held[:150])  # the newest 150 rows fit, the 151st does not

    def ranked(conn: sqlite3.Connection) -> tuple[list[Any], list[Any], list[Any], list[Any]]:
        args = {"match": parse_query(text).whole, "rows": 150}
        return (
            _pass(conn, Ranking(worth_from=0, text_budget=budget), text, prefix=False, bm25_sql="SELECT nope"),
            [tuple(r) for r in conn.execute(bm25_sql, args).fetchall()],
            _pass(conn, Ranking(worth_from=0, text_budget=sum(held[:100])), text, prefix=False, bm25_sql=bm25_sql),
            [tuple(r) for r in conn.execute(bm25_sql, {**args, "rows": 1000}).fetchall()],
        )

    mine, newest, short, every = await hub.core.store.read(ranked)
    assert [r[0] for r in mine] == [r[0] for r in newest]  # the newest 150, no more
    if text == "otter heron":  # one word's or one phrase's scores leave out its IDF (one factor)
        for (_, got), (_, want) in zip(mine, newest, strict=True):
            assert got == pytest.approx(want, rel=1e-9, abs=1e-12)
    assert [r[0] for r in sorted(mine, key=lambda r: (r[1], -r[0]))] == [
        r[0] for r in sorted(newest, key=lambda r: (r[1], -r[0]))
    ]
    assert short == every  # 100 rows fit: bm25 ranked the pass, every row of it


async def test_a_row_too_long_to_reread_ends_the_rows_ranked(hub: Hub) -> None:
    """A row of 16,384 tokens or more is never re-read: the text path ranks the newer rows before
    it when the page's need is met, else bm25 ranks the pass (every row)."""
    await _load_long(hub, 120)
    await hub.posts.signal_append(ALICE, a_signal(project_id="web", summary="long", body="otter " * 16_400))
    await _load_long(hub, 130)
    bm25_sql = HIT_SQL.format(visible="1", scope="1")

    def ranked(conn: sqlite3.Connection) -> tuple[list[Any], list[Any], list[Any]]:
        args = {"match": '"otter"', "rows": 1000}
        every = [tuple(r) for r in conn.execute(bm25_sql, args).fetchall()]
        return (
            _pass(conn, Ranking(worth_from=0), "otter", prefix=False, bm25_sql=NO_BM25, need=101),
            _pass(conn, Ranking(worth_from=0), "otter", prefix=False, bm25_sql=bm25_sql, need=131),
            every,
        )

    mine, fallback, every = await hub.core.store.read(ranked)
    assert [r[0] for r in mine] == [r[0] for r in every[:130]]  # the 130 newer rows, none from the long one on
    assert fallback == every and len(every) == 251
