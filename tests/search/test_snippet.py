"""A document's snippet (`snippet_of`) is cut from the text's opening when that decides it: the
same snippet as flattening the whole text, for any text."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from hubcore.parts.protocol import SNIPPET_MAX, snippet_of


def whole(text: str) -> str:
    """The rule as written before the shortcut: flatten all of it, then cut."""
    flat = re.sub(r"\s+", " ", text).strip()
    return flat if len(flat) <= SNIPPET_MAX else flat[: SNIPPET_MAX - 1].rstrip() + "…"


# Words and whitespace runs of every length around the cut (the opening is 4 x SNIPPET_MAX).
PIECES = st.one_of(
    st.text(alphabet="ab…é", min_size=1, max_size=250),
    st.text(alphabet=" \t\n\r\u00a0\u2003\x1c", min_size=1, max_size=900),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(PIECES, max_size=12))
def test_the_snippet_is_the_whole_texts(pieces: list[str]) -> None:
    text = "".join(pieces)
    assert snippet_of(text) == whole(text)


def test_edges_of_the_opening() -> None:
    for words in (SNIPPET_MAX - 1, SNIPPET_MAX, SNIPPET_MAX + 1, SNIPPET_MAX + 2, SNIPPET_MAX + 3):
        for gap in (0, 1, 4 * SNIPPET_MAX - words, 4 * SNIPPET_MAX):
            text = " " * gap + "x" * words + " " * 3 + "tail " * 100
            assert snippet_of(text) == whole(text)
            for short in ("x" * words, "x" * words + "  ", " " * gap + "x" * words, "x" * (words - 2) + "  y"):
                assert snippet_of(short) == whole(short)
    assert snippet_of("a " * 2000) == whole("a " * 2000)
    assert snippet_of(" " * 5000 + "end") == "end"
