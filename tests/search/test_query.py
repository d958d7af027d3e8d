"""Query parsing as a table: what a caller's text becomes in FTS5 (never FTS5 syntax of its own)."""

from __future__ import annotations

import pytest

from hubcore.errors import HubError
from hubcore.services.search.query import QUERY_MAX_BYTES, TERMS_MAX, parse

CASES = [
    ("backup schedule", '"backup" AND "schedule"', '"backup"* AND "schedule"*'),
    ('"flaky payment" test', '"flaky" + "payment" AND "test"', '"flaky" + "payment" AND "test"*'),
    ("a AND b OR NOT c NEAR d", '"a" AND "b" AND "c" AND "d"', '"a"* AND "b"* AND "c"* AND "d"*'),
    ("and or not", '"and" AND "or" AND "not"', '"and"* AND "or"* AND "not"*'),  # only bare capitals are operators
    ('"NOT this"', '"NOT" + "this"', '"NOT" + "this"'),  # inside a phrase an operator is a word
    ("foo-bar: baz!*^(", '"foo" AND "bar" AND "baz"', '"foo"* AND "bar"* AND "baz"*'),
    ('"unbalanced quote', '"unbalanced" AND "quote"', '"unbalanced"* AND "quote"*'),
    ('col:val {x} [y] "', '"col" AND "val" AND "x" AND "y"', '"col"* AND "val"* AND "x"* AND "y"*'),
    ("élan naïve", '"élan" AND "naïve"', '"élan"* AND "naïve"*'),
    ("snake_case __ x", '"snake" AND "case" AND "x"', '"snake"* AND "case"* AND "x"*'),  # as the tokenizer splits
]


@pytest.mark.parametrize(("text", "whole", "prefix"), CASES)
def test_query_becomes_terms(text: str, whole: str, prefix: str) -> None:
    parsed = parse(text)
    assert (parsed.whole, parsed.prefix) == (whole, prefix)


@pytest.mark.parametrize("text", ["", "   ", "!!! ?? --", "AND OR NOT NEAR", '""', '" "', "_ __"])
def test_blank_queries_are_refused(text: str) -> None:
    with pytest.raises(HubError) as caught:
        parse(text)
    assert caught.value.code == "invalid_argument" and "blank" in caught.value.message


def test_at_most_64_terms_count_and_8_kib() -> None:
    parsed = parse(" ".join(f"w{n}" for n in range(100)))
    assert len(parsed.words) == TERMS_MAX and parsed.words[-1] == f"w{TERMS_MAX - 1}"
    assert len(parse("x" * QUERY_MAX_BYTES).words) == 1
    with pytest.raises(HubError) as caught:
        parse("x" * (QUERY_MAX_BYTES + 1))
    assert caught.value.code == "invalid_argument"
    with pytest.raises(HubError):
        parse("é" * (QUERY_MAX_BYTES // 2 + 1))  # bytes, not characters
