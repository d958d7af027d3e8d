"""A search query's text made into FTS5 match expressions (DESIGN section 7, "Search queries").

Words match as prefixes; a balanced `"quoted phrase"` matches as a phrase; punctuation and bare
`AND`/`OR`/`NOT`/`NEAR` are dropped, so a caller's text is never FTS5 syntax. At most 64 terms
count (a phrase is one term; the rest are ignored) and the text is at most 8 KiB.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hubcore.errors import invalid

QUERY_MAX_BYTES = 8 * 1024
TERMS_MAX = 64
OPERATORS = frozenset({"AND", "OR", "NOT", "NEAR"})
_WORD = re.compile(r"[^\W_]+")  # letters and digits: what the unicode61 tokenizer keeps as tokens
_PHRASE = re.compile(r'"([^"]*)"')


@dataclass(frozen=True)
class Parsed:
    """The terms of a query: `words` match as prefixes, `phrases` (tuples of words) as phrases."""

    words: tuple[str, ...]
    phrases: tuple[tuple[str, ...], ...]

    def terms(self, prefix: bool) -> list[str]:
        """Each term as its own match expression (phrases first, then words), on the prefix pass
        with every word as a prefix: one of bm25's phrases each."""
        quoted = [" + ".join(f'"{w}"' for w in phrase) for phrase in self.phrases]  # FTS5's phrase
        return quoted + [f'"{w}"*' if prefix else f'"{w}"' for w in self.words]

    @property
    def whole(self) -> str:
        """Every term as a whole word (phrases as phrases): the hits ranked first."""
        return " AND ".join(self.terms(False))

    @property
    def prefix(self) -> str:
        """Every word as a prefix: the rest of the hits."""
        return " AND ".join(self.terms(True))


def _words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text) if w not in OPERATORS]


def parse(text: str) -> Parsed:
    """The query's terms; a blank query (or one of only punctuation and operators) is refused."""
    if len(text.encode("utf-8")) > QUERY_MAX_BYTES:
        raise invalid(f"a search query is at most {QUERY_MAX_BYTES} bytes")
    phrases: list[tuple[str, ...]] = []
    rest = text
    if text.count('"') >= 2:
        for found in _PHRASE.findall(text):
            words = tuple(_WORD.findall(found))  # inside a phrase an operator word is just a word
            if words:
                phrases.append(words)
        rest = _PHRASE.sub(" ", text)
    terms: list[tuple[str, ...] | str] = [*phrases, *_words(rest.replace('"', " "))]
    if not terms:
        raise invalid("the search query is blank: give at least one word")
    kept = terms[:TERMS_MAX]
    return Parsed(tuple(t for t in kept if isinstance(t, str)), tuple(t for t in kept if isinstance(t, tuple)))
