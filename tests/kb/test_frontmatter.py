"""The frontmatter subset as a table: a page's text and the fields it must read as, or a page, a
patch and the page it must become byte for byte (spec "Knowledge base page")."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hubcore.errors import HubError
from hubcore.services.kb import frontmatter as fm
from hubcore.services.kb.frontmatter import Source, Verified

V1 = Verified("human", "2026-01-02T03:04:05.000Z")
V2 = Verified("agent-7", "2026-02-03T04:05:06.000Z")

# (id, page text, the fields expected; fields not named read as the dataclass default)
READ: list[tuple[str, str, dict[str, Any]]] = [
    # --- when a block opens
    ("no block", "# Title\n\ntext\n", {"state": "absent"}),
    ("empty page", "", {"state": "absent"}),
    ("fence with trailing space", "--- \ntype: Guide\n---\n", {"state": "absent"}),
    ("four dashes", "----\ntype: Guide\n----\n", {"state": "absent"}),
    ("blank line first", "\n---\ntype: Guide\n---\n", {"state": "absent"}),
    ("byte order mark", "\ufeff---\ntype: Guide\n---\n", {"state": "absent"}),
    ("fence only, never closed", "---\n", {"state": "unparsed", "error_line": 1, "body_line": 1}),
    (
        "never closes",
        "---\ntype: Guide\n\n# Title\n",
        {
            "state": "unparsed",
            "error": "the frontmatter block never closes with a --- line",
            "error_line": 1,
            "body_offset": 0,
            "body_line": 1,
        },
    ),
    ("closing with trailing space does not close", "---\ntype: Guide\n--- \n", {"state": "unparsed"}),
    ("empty block", "---\n---\nbody\n", {"state": "parsed", "body_offset": 8, "body_line": 3}),
    (
        "closing fence at end of file",
        "---\ntype: Guide\n---",
        {
            "state": "parsed",
            "type": "Guide",
            "body_line": 4,
            "keys": ("type",),
            "key_lines": (("type", 2),),
            "body_offset": 19,
        },
    ),
    (
        "crlf line endings",
        "---\r\ntype: Guide\r\ntitle: T\r\n---\r\nbody\r\n",
        {
            "state": "parsed",
            "type": "Guide",
            "title": "T",
            "keys": ("type", "title"),
            "key_lines": (("type", 2), ("title", 3)),
            "body_offset": len("---\r\ntype: Guide\r\ntitle: T\r\n---\r\n"),
            "body_line": 5,
        },
    ),
    # --- plain key: value
    (
        "every scalar key",
        "---\ntype: Decision Record\ntitle: Why SQLite\ndescription: One file per store\nstatus: stable\n"
        "stale_after: 2027-01-31\nokf_version: 1\n---\n",
        {
            "state": "parsed",
            "type": "Decision Record",
            "title": "Why SQLite",
            "description": "One file per store",
            "status": "stable",
            "stale_after": "2027-01-31",
            "okf_version": "1",
            "keys": ("type", "title", "description", "status", "stale_after", "okf_version"),
            "key_lines": (
                ("type", 2),
                ("title", 3),
                ("description", 4),
                ("status", 5),
                ("stale_after", 6),
                ("okf_version", 7),
            ),
            "body_offset": 134,
            "body_line": 9,
        },
    ),
    ("colon inside a value", "---\ntitle: Hub: the design\n---\n", {"title": "Hub: the design"}),
    ("comment after a value", "---\ntitle: Hello # a comment\n---\n", {"title": "Hello"}),
    ("hash without a space is text", "---\ntitle: C# notes\n---\n", {"title": "C# notes"}),
    ("extra spaces around a value", "---\ntitle:    spaced   \n---\n", {"title": "spaced"}),
    ("empty value is null", "---\ntitle:\n---\n", {"state": "parsed", "title": None}),
    ("tilde is null", "---\ntitle: ~\n---\n", {"title": None}),
    ("null is null", "---\ntitle: null\n---\n", {"title": None}),
    ("quoted null is text", '---\ntitle: "null"\n---\n', {"title": "null"}),
    ("empty quoted is empty text", '---\ntype: ""\n---\n', {"state": "parsed", "type": ""}),
    ("double quoted with escapes", '---\ntitle: "say \\"hi\\" \\\\ \\n"\n---\n', {"title": 'say "hi" \\ \\n'}),
    ("single quoted", "---\ntitle: 'it''s # here'\n---\n", {"title": "it's # here"}),
    ("quoted then comment", '---\ntitle: "a" # c\n---\n', {"title": "a"}),
    (
        "text after a quoted value",
        '---\ntitle: "a" b\n---\n',
        {"state": "unparsed", "error": "text follows a quoted value", "error_line": 2},
    ),
    ("quote never closes", '---\ntitle: "a\n---\n', {"state": "unparsed", "error_line": 2}),
    ("plain value folds its indented lines", "---\ntitle: one\n  two\n   three\n---\n", {"title": "one two three"}),
    (
        "comments and blank lines",
        "---\n# a comment\n\ntype: Guide\n  # indented comment\n---\n",
        {"state": "parsed", "type": "Guide", "key_lines": (("type", 4),)},
    ),
    ("keys are case sensitive", "---\nType: Guide\n---\n", {"state": "parsed", "type": None, "keys": ("Type",)}),
    # --- block scalars
    (
        "literal block folds to one line",
        "---\ndescription: |\n  line one\n  line two\n---\n",
        {"description": "line one line two"},
    ),
    (
        "folded block",
        "---\ndescription: >\n  line one\n\n  line two\ntitle: T\n---\n",
        {"description": "line one line two", "title": "T", "key_lines": (("description", 2), ("title", 6))},
    ),
    (
        "block with chomping and indent indicators",
        "---\ndescription: |-\n  a\ntitle: >2+\n   b\n---\n",
        {"description": "a", "title": "b"},
    ),
    ("empty block scalar", "---\ndescription: >\ntitle: T\n---\n", {"description": "", "title": "T"}),
    # --- tags
    ("flow tags", "---\ntags: [kb, lint, \"a, b\", 'c']\n---\n", {"tags": ("kb", "lint", "a, b", "c")}),
    ("empty flow tags", "---\ntags: []\n---\n", {"state": "parsed", "tags": ()}),
    ("flow tags with a trailing comma", "---\ntags: [a, b,]\n---\n", {"tags": ("a", "b")}),
    ("flow tags then comment", "---\ntags: [a] # c\n---\n", {"tags": ("a",)}),
    ("indented tag items", '---\ntags:\n  - kb\n  - "lint: x"\n---\n', {"tags": ("kb", "lint: x")}),
    (
        "tag items at the key's column",
        "---\ntags:\n- kb\n- lint\ntype: Guide\n---\n",
        {"tags": ("kb", "lint"), "type": "Guide"},
    ),
    ("one tag as a string", "---\ntags: kb\n---\n", {"tags": ("kb",)}),
    ("tags with nothing", "---\ntags:\n---\n", {"state": "parsed", "tags": None}),
    ("nested flow list", "---\ntags: [a, [b]]\n---\n", {"state": "unparsed", "error_line": 2}),
    (
        "flow list never closes",
        "---\ntags: [a, b\n---\n",
        {"state": "unparsed", "error": "a flow list does not close on its line"},
    ),
    ("empty flow item", "---\ntags: [a,,b]\n---\n", {"state": "unparsed", "error": "a flow list holds an empty item"}),
    ("text after a flow list", "---\ntags: [a] b\n---\n", {"state": "unparsed"}),
    ("flow list over two lines", "---\ntags: [a,\n  b]\n---\n", {"state": "unparsed", "error_line": 3}),
    ("a tag that is a mapping", "---\ntags:\n  - name: x\n---\n", {"state": "unparsed", "error_line": 3}),
    ("a tag item continued", "---\ntags:\n  - a\n    b\n---\n", {"state": "unparsed", "error_line": 3}),
    ("misaligned tag items", "---\ntags:\n    - a\n  - b\n---\n", {"state": "unparsed", "error_line": 4}),
    # --- verified and sources
    (
        "verified entries",
        "---\nverified:\n  - by: human\n    at: 2026-01-02T03:04:05.000Z\n  - by: agent-7\n"
        '    at: "2026-02-03T04:05:06.000Z"\n---\n',
        {"state": "parsed", "verified": (V1, V2), "keys": ("verified",), "key_lines": (("verified", 2),)},
    ),
    (
        "verified at the key's column",
        "---\nverified:\n- by: human\n  at: 2026-01-02T03:04:05.000Z\n---\n",
        {"verified": (V1,)},
    ),
    (
        "verified entry with an extra key",
        "---\nverified:\n  - by: human\n    at: 2026-01-02T03:04:05.000Z\n    note: ok\n---\n",
        {"state": "parsed", "verified": (V1,)},
    ),
    ("verified empty flow list", "---\nverified: []\n---\n", {"state": "parsed", "verified": ()}),
    ("verified with nothing", "---\nverified:\n---\n", {"state": "parsed", "verified": ()}),
    (
        "verified entry lacking at",
        "---\nverified:\n  - by: human\n---\n",
        {"state": "unparsed", "error": "a verified entry lacks at", "error_line": 3},
    ),
    (
        "verified entry with an empty by",
        "---\nverified:\n  - by:\n    at: x\n---\n",
        {"state": "unparsed", "error": "a verified entry lacks by"},
    ),
    ("verified as a string", "---\nverified: human\n---\n", {"state": "unparsed", "error_line": 2}),
    ("verified as a flow mapping", "---\nverified:\n  - {by: human, at: x}\n---\n", {"state": "unparsed"}),
    (
        "verified entry giving a key twice",
        "---\nverified:\n  - by: a\n    by: b\n    at: x\n---\n",
        {"state": "unparsed", "error": "an entry gives 'by' twice"},
    ),
    ("verified entry line not key: value", "---\nverified:\n  - by: a\n    at x\n---\n", {"state": "unparsed"}),
    (
        "sources entries",
        "---\nsources:\n  - title: s1 /fs/notes.md\n    resource: hub://brain/s1/fs/notes.md\n---\n",
        {"state": "parsed", "sources": (Source("s1 /fs/notes.md", "hub://brain/s1/fs/notes.md"),)},
    ),
    ("sources entry lacking resource", "---\nsources:\n  - title: t\n---\n", {"state": "unparsed"}),
    # --- unknown keys, kept and ignored
    (
        "unknown keys of any shape",
        '---\ntype: Guide\naliases: [a, [b]]\nmeta:\n  owner: x\n  nested:\n    - {q: 1}\nweird: "unclosed\n---\n',
        {
            "state": "parsed",
            "type": "Guide",
            "keys": ("type", "aliases", "meta", "weird"),
            "key_lines": (("type", 2), ("aliases", 3), ("meta", 4), ("weird", 8)),
        },
    ),
    ("unknown key with items at its column", "---\nlist:\n- a\n- b\n---\n", {"state": "parsed", "keys": ("list",)}),
    # --- what the subset does not read
    (
        "line without a colon",
        "---\ntype Guide\n---\n",
        {"state": "unparsed", "error": "line 2 is not a top-level 'key: value' line", "error_line": 2},
    ),
    ("colon without a space", "---\ntype:Guide\n---\n", {"state": "unparsed", "error_line": 2}),
    ("indented first line", "---\n  type: Guide\n---\n", {"state": "unparsed", "error_line": 2}),
    ("a dash item under a key with a value", "---\ntype: Guide\n- x\n---\n", {"state": "unparsed", "error_line": 3}),
    ("quoted key", '---\n"type": Guide\n---\n', {"state": "unparsed"}),
    (
        "a key given twice",
        "---\ntitle: a\ntitle: b\n---\n",
        {"state": "unparsed", "error": "key 'title' is given twice", "error_line": 3},
    ),
    ("title as a flow list", "---\ntitle: [a]\n---\n", {"state": "unparsed", "error_line": 2}),
    ("title as a mapping", "---\ntitle:\n  en: Hello\n---\n", {"state": "unparsed", "error_line": 2}),
    ("type as items", "---\ntype:\n  - Guide\n---\n", {"state": "unparsed"}),
    ("quoted value continued", '---\ntitle: "a"\n  b\n---\n', {"state": "unparsed", "error_line": 3}),
    # --- control characters: a stored page with one reads as unparsed; a write is refused
    (
        "tab in a value",
        "---\ntitle: a\tb\n---\n",
        {
            "state": "unparsed",
            "control_line": 2,
            "error_line": 2,
            "body_line": 4,
            "body_offset": 19,
            "error": "a frontmatter line holds a control character",
        },
    ),
    ("tab as indentation", "---\ntags:\n\t- a\n---\n", {"state": "unparsed", "control_line": 3}),
    ("carriage return inside a line", "---\ntitle: a\rb\n---\n", {"state": "unparsed", "control_line": 2}),
    ("escape character", "---\ntype: Guide\ntitle: \x1b[31m\n---\n", {"state": "unparsed", "control_line": 3}),
    ("delete character", "---\ntitle: a\x7f\n---\n", {"state": "unparsed", "control_line": 2}),
    ("C1 control", "---\ntitle: a\x85b\n---\n", {"state": "unparsed", "control_line": 2}),
    ("NUL in a comment line", "---\n# \x00\n---\n", {"state": "unparsed", "control_line": 2}),
    (
        "control characters after the block are the page's own",
        "---\ntype: Guide\n---\n\tcode\x00\n",
        {"state": "parsed", "type": "Guide", "control_line": None},
    ),
    (
        "control characters in a block that never closes",
        "---\n\tcode\n",
        {"state": "unparsed", "control_line": None, "error_line": 1},
    ),
    ("unicode line separator is text", "---\ntitle: a\u2028b\n---\n", {"title": "a\u2028b"}),
]


@pytest.mark.parametrize(("text", "expected"), [(t, e) for _, t, e in READ], ids=[i for i, _, _ in READ])
def test_read(text: str, expected: dict[str, Any]) -> None:
    found = fm.parse(text)
    for name, value in expected.items():
        assert getattr(found, name) == value, name
    if found.state != "parsed":  # fields are null when the block is unreadable
        assert (found.type, found.title, found.tags, found.verified) == (None, None, None, ())


def test_body_starts_after_the_block() -> None:
    text = "---\ntype: Guide\n---\n# Title\n"
    found = fm.parse(text)
    assert text[found.body_offset :] == "# Title\n"
    assert found.body_line == 4


def test_line_of() -> None:
    found = fm.parse("---\ntype: Guide\nokf_version: 1\n---\n")
    assert (found.line_of("okf_version"), found.line_of("title")) == (3, None)


@pytest.mark.parametrize(
    "text", ["---\ntitle: a\tb\n---\n", "---\nx: \x00\n---\nbody\n", "---\r\ntitle: a\x0bb\r\n---\r\n"]
)
def test_a_control_character_in_a_closed_block_is_refused_at_write(text: str) -> None:
    with pytest.raises(HubError) as caught:
        fm.require_writable(text)
    assert caught.value.code == "invalid_argument"
    assert "control character" in caught.value.message
    assert caught.value.details == {"field": "content", "line": 2}


@pytest.mark.parametrize(
    "text", ["plain\tpage\n", "---\ntype: Guide\n---\n\tindented\n", "---\n\tnever closes\n", "---\ntitle: x\n---\n"]
)
def test_pages_a_write_takes(text: str) -> None:
    assert fm.require_writable(text) == fm.parse(text)


# --- patches: (id, page, patch, the page it becomes) -------------------------------------------

AT = "2026-11-23T17:25:32.123Z"
REVIEW = fm.Patch(append=(("verified", (("by", "human"), ("at", AT))),))
SOURCE = Source("s1: /fs/notes.md", "hub://brain/s1/fs/notes.md")
ENTRY_LINES = "  - by: human\n    at: 2026-11-23T17:25:32.123Z\n"

PATCH: list[tuple[str, str, fm.Patch, str]] = [
    ("review, no block", "# Notes\n\ntext\n", REVIEW, "---\nverified:\n" + ENTRY_LINES + "---\n# Notes\n\ntext\n"),
    ("review, empty page", "", REVIEW, "---\nverified:\n" + ENTRY_LINES + "---\n"),
    (
        "review, no block, crlf",
        "# N\r\ntext\r\n",
        REVIEW,
        "---\r\nverified:\r\n  - by: human\r\n    at: 2026-11-23T17:25:32.123Z\r\n---\r\n# N\r\ntext\r\n",
    ),
    (
        "review, block without verified",
        "---\ntype: Guide\nx: 1\n---\nbody\n",
        REVIEW,
        "---\ntype: Guide\nx: 1\nverified:\n" + ENTRY_LINES + "---\nbody\n",
    ),
    ("review, empty block", "---\n---\n", REVIEW, "---\nverified:\n" + ENTRY_LINES + "---\n"),
    (
        "review, closing fence at end of file",
        "---\ntype: Guide\n---",
        REVIEW,
        "---\ntype: Guide\nverified:\n" + ENTRY_LINES + "---",
    ),
    (
        "review, appended after the last entry",
        "---\nverified:\n  - by: agent-7\n    at: 2026-01-01T00:00:00Z\n\n# keep me\ntitle: T\n---\nbody\n",
        REVIEW,
        "---\nverified:\n  - by: agent-7\n    at: 2026-01-01T00:00:00Z\n"
        + ENTRY_LINES
        + "\n# keep me\ntitle: T\n---\nbody\n",
    ),
    (
        "review, entries at the key's column",
        "---\nverified:\n- by: a\n  at: b\n---\n",
        REVIEW,
        "---\nverified:\n- by: a\n  at: b\n- by: human\n  at: 2026-11-23T17:25:32.123Z\n---\n",
    ),
    (
        "review, entries indented four",
        "---\nverified:\n    - by: a\n      at: b\n---\n",
        REVIEW,
        "---\nverified:\n    - by: a\n      at: b\n    - by: human\n      at: 2026-11-23T17:25:32.123Z\n---\n",
    ),
    (
        "review, crlf block",
        "---\r\ntype: Guide\r\n---\r\nbody\r\n",
        REVIEW,
        "---\r\ntype: Guide\r\nverified:\r\n  - by: human\r\n    at: 2026-11-23T17:25:32.123Z\r\n---\r\nbody\r\n",
    ),
    (
        "review, empty flow list becomes the key",
        "---\nverified: []\ntype: Guide\n---\n",
        REVIEW,
        "---\nverified:\n" + ENTRY_LINES + "type: Guide\n---\n",
    ),
    ("review, verified null", "---\nverified: ~\n---\n", REVIEW, "---\nverified:\n" + ENTRY_LINES + "---\n"),
    (
        "review, verified with nothing and a comment",
        "---\nverified:\n  # none yet\ntype: Guide\n---\n",
        REVIEW,
        "---\nverified:\n" + ENTRY_LINES + "  # none yet\ntype: Guide\n---\n",
    ),
    (
        "review, the body is never touched",
        "---\ntype: Guide\n---\n---\nverified: fake\n---\n",
        REVIEW,
        "---\ntype: Guide\nverified:\n" + ENTRY_LINES + "---\n---\nverified: fake\n---\n",
    ),
    (
        "promote, no block",
        "notes\n",
        fm.Patch(
            (("type", "Guide"), ("title", "Notes")),
            ("a", "b c"),
            (("sources", (("title", SOURCE.title), ("resource", SOURCE.resource))),),
        ),
        '---\ntype: Guide\ntitle: Notes\ntags: [a, b c]\nsources:\n  - title: "s1: /fs/notes.md"\n'
        "    resource: hub://brain/s1/fs/notes.md\n---\nnotes\n",
    ),
    (
        "promote, keys replaced in place",
        "---\ntitle: Old\ndescription: >\n  old\n  text\n\ntags:\n  - x\n  - y\nkeep: me\n---\nbody\n",
        fm.Patch((("title", "New"), ("description", "new text")), ("z",)),
        "---\ntitle: New\ndescription: new text\n\ntags: [z]\nkeep: me\n---\nbody\n",
    ),
    ("promote, empty tags", "---\ntags: [a]\n---\n", fm.Patch(tags=()), "---\ntags: []\n---\n"),
    (
        "promote, a value quoted",
        "---\ntype: Guide\n---\n",
        fm.Patch((("title", 'a "b" \\ c'), ("description", " padded")), ("x, y", "null", "#z")),
        '---\ntype: Guide\ntitle: "a \\"b\\" \\\\ c"\ndescription: " padded"\ntags: ["x, y", "null", "#z"]\n---\n',
    ),
    (
        "promote, sources appended to a list",
        "---\nsources:\n  - title: t\n    resource: r\n---\n",
        fm.Patch((("type", "Guide"),), None, (("sources", (("title", "u"), ("resource", "hub://x"))),)),
        "---\nsources:\n  - title: t\n    resource: r\n  - title: u\n    resource: hub://x\ntype: Guide\n---\n",
    ),
]


@pytest.mark.parametrize(
    ("page", "change", "expected"), [(p, c, e) for _, p, c, e in PATCH], ids=[i for i, _, _, _ in PATCH]
)
def test_patch(page: str, change: fm.Patch, expected: str) -> None:
    assert fm.patch(page, change) == expected
    assert fm.parse(expected).state == "parsed"


def test_append_verified_reads_back_as_the_newest_entry() -> None:
    page = "---\nverified:\n  - by: agent-7\n    at: 2026-01-01T00:00:00Z\n---\n"
    out = fm.append_verified(page, "human", AT)
    assert fm.parse(out).verified == (Verified("agent-7", "2026-01-01T00:00:00Z"), Verified("human", AT))


def test_promote_patch_reads_back() -> None:
    page = "---\ntype: Concept\nowner: x\n---\n# Body [link](a.md)\n"
    out = fm.promote_patch(page, SOURCE, type="Guide", title="T: 1", description="d", tags=["a"])
    found = fm.parse(out)
    assert (found.type, found.title, found.description, found.tags, found.sources) == (
        "Guide",
        "T: 1",
        "d",
        ("a",),
        (SOURCE,),
    )
    assert out.endswith("---\n# Body [link](a.md)\n")
    assert "owner: x\n" in out


def test_promote_patch_with_only_a_source() -> None:
    assert fm.promote_patch("x\n", SOURCE) == (
        '---\nsources:\n  - title: "s1: /fs/notes.md"\n    resource: hub://brain/s1/fs/notes.md\n---\nx\n'
    )


@pytest.mark.parametrize(
    "page",
    [
        "---\ntype Guide\n---\n",  # unparsed
        "---\ntype: Guide\n",  # never closes
        "---\ntitle: a\tb\n---\n",  # control character
        "---\ntitle: a\ntitle: b\n---\n",  # a key twice
    ],
)
def test_patching_an_unreadable_block_is_refused(page: str) -> None:
    for patcher in (lambda p: fm.append_verified(p, "human", AT), lambda p: fm.promote_patch(p, SOURCE)):
        with pytest.raises(HubError) as caught:
            patcher(page)
        assert caught.value.code == "invalid_argument"
        assert "unsafe" in caught.value.message


@pytest.mark.parametrize("value", ["a\nb", "a\tb", "\x00", "x\x85"])
def test_a_patch_value_with_a_control_character_is_refused(value: str) -> None:
    with pytest.raises(HubError) as caught:
        fm.promote_patch("---\n---\n", SOURCE, title=value)
    assert caught.value.code == "invalid_argument"


_TEXT = st.text(st.characters(blacklist_categories=("Cc", "Cs")), max_size=40)


@given(_TEXT)
def test_a_rendered_value_reads_back_as_itself(value: str) -> None:
    assert fm.parse(f"---\ntitle: {fm.render(value)}\n---\n").title == value


@given(st.lists(_TEXT, max_size=5))
def test_rendered_tags_read_back(tags: list[str]) -> None:
    assert fm.parse(fm.patch("---\n---\n", fm.Patch(tags=tuple(tags)))).tags == tuple(tags)


# --- properties over generated pages ---------------------------------------------------------------

_LINES = st.sampled_from(
    [
        "---",
        "type: Guide",
        "title: T",
        'title: "q: x"',
        "tags: [a, b]",
        "tags:",
        "  - a",
        "- b",
        "verified:",
        "  - by: human",
        "    at: t",
        "- by: x",
        "  at: y",
        "verified: []",
        "sources:",
        "  - title: s",
        "    resource: r",
        "description: >",
        "  folded",
        "",
        "# c",
        "x: {y}",
        "  nested: 1",
        "bad line",
        "title: a",
        "\tt",
        "okf_version: 1",
        "[a](a.md)",
        "---x",
        "\r",
    ]
)
_PAGES = st.builds(
    lambda lines, end: "\n".join(lines) + end, st.lists(_LINES, max_size=14), st.sampled_from(["", "\n"])
)


@given(_PAGES)
def test_parse_never_raises(page: str) -> None:
    found = fm.parse(page)
    assert found.state in ("absent", "parsed", "unparsed")
    assert page[: found.body_offset] == "" or page[: found.body_offset].endswith(("---\n", "---"))


def _body(page: str) -> str:
    return page[fm.parse(page).body_offset :]


@given(_PAGES)
def test_review_changes_only_the_block(page: str) -> None:
    try:
        out = fm.append_verified(page, "human", AT)
    except HubError as exc:
        assert exc.code == "invalid_argument"
        assert fm.parse(page).state == "unparsed"
        return
    after = fm.parse(out)
    assert after.state == "parsed"
    assert after.verified[-1] == Verified("human", AT)
    assert after.verified[:-1] == fm.parse(page).verified
    if fm.parse(page).state == "absent":
        assert out.endswith(page)
    else:
        assert _body(out) == _body(page)
        kept = [line for line in fm.split_lines(page) if line not in fm.split_lines(out)]
        assert kept in ([], ["verified: []\n"], ["verified: ~\n"])  # only an empty list's own line goes


@given(_PAGES, st.lists(_TEXT, max_size=3), _TEXT)
def test_promote_changes_only_the_block(page: str, tags: list[str], title: str) -> None:
    try:
        out = fm.promote_patch(page, SOURCE, type="Guide", title=title, tags=tags)
    except HubError as exc:
        assert exc.code == "invalid_argument"
        assert fm.parse(page).state == "unparsed"
        return
    after, before = fm.parse(out), fm.parse(page)
    assert after.state == "parsed"
    assert (after.type, after.title, after.tags, after.sources[-1]) == ("Guide", title, tuple(tags), SOURCE)
    assert after.sources[:-1] == before.sources and after.verified == before.verified
    assert out.endswith(page) if before.state == "absent" else _body(out) == _body(page)
