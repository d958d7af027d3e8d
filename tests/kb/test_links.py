"""Links: which markdown is a link and on which line (spec "Knowledge base page": only markdown
links are links, nothing inside code), and where each target goes from the page's path."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from hubcore.services.kb import facts, links
from hubcore.services.kb.facts import PageLink
from hubcore.services.kb.links import Link, Target

# (id, markdown, the links expected as (line, href) pairs; image links marked with a third member)
EXTRACT: list[tuple[str, str, list[tuple[int, str] | tuple[int, str, bool]]]] = [
    ("inline", "See [a](a.md).\n", [(1, "a.md")]),
    (
        "several on a line, with a title",
        '[a](a.md) [b](../b.md "B") [c](<c d.md>)\n',
        [(1, "a.md"), (1, "../b.md"), (1, "c%20d.md")],
    ),
    ("line numbers across paragraphs", "# T\n\nx\ny [a](a.md)\n\nz [b](b.md)\n", [(4, "a.md"), (6, "b.md")]),
    ("hard break", "x  \n[a](a.md)\\\n[b](b.md)\n", [(2, "a.md"), (3, "b.md")]),
    ("link text over two lines", "[a\nb](a.md) [c](c.md)\n", [(1, "a.md"), (2, "c.md")]),
    ("reference link", "[a][r] and [r]\n\n[r]: target.md\n", [(1, "target.md"), (1, "target.md")]),
    ("a definition alone is no link", "[r]: target.md\n", []),
    ("brackets with no definition", "[not a link] [x][nope]\n", []),
    ("autolink", "<https://example.com/x>\n", [(1, "https://example.com/x")]),
    ("bare URL is text", "https://example.com/x\n", []),
    ("image", "![alt](img/d.svg)\n", [(1, "img/d.svg", True)]),
    ("image inside a link", "[![i](i.png)](p.md)\n", [(1, "p.md"), (1, "i.png", True)]),
    ("wiki link", "[[page]] and [[page|Text]]\n", []),
    ("escaped", "\\[a](a.md)\n", []),
    ("code span", "`[a](a.md)` and ``[b](b.md)``\n", []),
    ("fenced block", "```\n[a](a.md)\n```\n~~~md\n[b](b.md)\n~~~\n[c](c.md)\n", [(7, "c.md")]),
    ("unclosed fence runs to the end", "```\n[a](a.md)\n", []),
    ("indented code after a blank line", "text\n\n    [a](a.md)\n\n\t[b](b.md)\n", []),
    ("four spaces without a blank line continue the paragraph", "text\n    [a](a.md)\n", [(2, "a.md")]),
    ("four spaces inside a list item", "- item\n\n    [a](a.md)\n", [(3, "a.md")]),
    (
        "heading, emphasis, blockquote, list",
        "# [h](h.md)\n\n*[e](e.md)*\n\n> [q](q.md)\n\n1. [l](l.md)\n",
        [(1, "h.md"), (3, "e.md"), (5, "q.md"), (7, "l.md")],
    ),
    ("raw html is not a markdown link", '<a href="h.md">h</a>\n\n<div>\n[x](x.md)\n</div>\n', []),
    ("inline html over lines counts its lines", "a <span\nclass=x> [b](b.md)\n", [(2, "b.md")]),
    ("table row", "| a | b |\n|---|---|\n| [x](x.md) | y |\n", [(3, "x.md")]),
    ("javascript is no link", "[x](javascript:alert(1))\n", []),
    (
        "strong and underscores around links",
        "**[a](a.md)** _[b](b.md)_ *a [c](c_d*.md) b*\n",
        [(1, "a.md"), (1, "b.md"), (1, "c_d*.md")],
    ),
    ("an entity in a target", "[a](a&amp;b.md) [c](&#x2F;fs)\n", [(1, "a&b.md"), (1, "/fs")]),
    ("no link marks: not parsed", "[a] (b) [c]\n", []),
]


@pytest.mark.parametrize(("markdown", "expected"), [(m, e) for _, m, e in EXTRACT], ids=[i for i, _, _ in EXTRACT])
def test_extract(markdown: str, expected: list[tuple[int, str] | tuple[int, str, bool]]) -> None:
    assert links.extract(markdown) == [Link(*e) for e in expected]


_MARKDOWN_BITS = st.sampled_from(
    [
        "[a](a.md)",
        "![i](i.png)",
        "[r]",
        "[r]: /fs/r.md\n",
        "[x][r]",
        "<https://e.x>",
        "*",
        "**",
        "_",
        "__",
        "`",
        "```\n",
        "    ",
        "\t",
        "\n",
        "\n\n",
        "> ",
        "- ",
        "1. ",
        "# ",
        "&amp;",
        "&#91;",
        "\\",
        "<span>",
        "</span>",
        "[",
        "]",
        "(",
        ")",
        "text",
        " ",
        "<!-- ",
        " -->",
        "~~~\n",
        "***\n",
        "---\n",
        "===\n",
    ]
)


@given(st.lists(_MARKDOWN_BITS, max_size=30).map("".join))
def test_the_trimmed_parser_finds_what_full_commonmark_finds(markdown: str) -> None:
    full: list[Link] = []
    for token in MarkdownIt("commonmark").parse(markdown):
        if token.type == "inline" and token.children and token.map is not None:
            full.extend(links._inline_links(token.children, 1 + token.map[0]))
    assert links.extract(markdown) == full


def test_extract_counts_from_the_first_line_given() -> None:
    assert links.extract("\n[a](a.md)\n", first_line=5) == [Link(6, "a.md")]


PAGE = "/fs/guides/setup.md"
# (id, href on PAGE, where it goes)
RESOLVE: list[tuple[str, str, Target]] = [
    ("sibling", "install.md", Target("page", "/fs/guides/install.md")),
    ("dot", "./install.md", Target("page", "/fs/guides/install.md")),
    ("parent", "../index.md", Target("page", "/fs/index.md")),
    ("subdirectory", "deep/a.md", Target("page", "/fs/guides/deep/a.md")),
    ("empty components", "deep//./a.md", Target("page", "/fs/guides/deep/a.md")),
    ("down and up", "deep/../install.md", Target("page", "/fs/guides/install.md")),
    ("directory with a slash", "deep/", Target("page", "/fs/guides/deep")),
    ("the bundle root", "..", Target("page", "/fs/")),
    ("the bundle root with a slash", "../", Target("page", "/fs/")),
    ("absolute", "/fs/ref/api.md", Target("page", "/fs/ref/api.md")),
    ("absolute root", "/fs", Target("page", "/fs/")),
    ("absolute with dots", "/fs/a/../b.md", Target("page", "/fs/b.md")),
    ("fragment", "install.md#step-2", Target("page", "/fs/guides/install.md")),
    ("query", "install.md?x=1#y", Target("page", "/fs/guides/install.md")),
    ("percent-encoded", "my%20page.md", Target("page", "/fs/guides/my page.md")),
    ("encoded slash is a component separator once decoded", "a%2Fb.md", Target("page", "/fs/guides/a/b.md")),
    ("fragment only is the page itself", "#top", Target("page", PAGE)),
    ("empty is the page itself", "", Target("page", PAGE)),
    ("query only is the page itself", "?q=1", Target("page", PAGE)),
    ("the page by name", "setup.md", Target("page", PAGE)),
    ("climbs above /fs", "../../outside.md", Target("escapes")),
    ("climbs above /fs and back", "../../fs/index.md", Target("escapes")),
    ("climbs above /fs through a directory", "deep/../../../x.md", Target("escapes")),
    ("absolute above /fs", "/fs/../x.md", Target("escapes")),
    ("absolute outside /fs", "/kv/notes", Target("escapes")),
    ("absolute at the hub's root", "/index.md", Target("escapes")),
    ("absolute slash", "/", Target("escapes")),
    ("encoded dots climb", "%2E%2E/%2E%2E/x.md", Target("escapes")),
    ("https", "https://example.com/a.md", Target("external")),
    ("mailto", "mailto:someone@example.com", Target("external")),
    ("hub resource", "hub://kb/web/fs/index.md", Target("external")),
    ("scheme relative", "//example.com/a.md", Target("external")),
]


@pytest.mark.parametrize(("href", "expected"), [(h, e) for _, h, e in RESOLVE], ids=[i for i, _, _ in RESOLVE])
def test_resolve(href: str, expected: Target) -> None:
    assert links.resolve(PAGE, href) == expected


def test_resolve_from_the_root() -> None:
    assert links.resolve("/fs/index.md", "guides/setup.md") == Target("page", "/fs/guides/setup.md")
    assert links.resolve("/fs/index.md", "../x.md") == Target("escapes")


def test_index_of() -> None:
    assert links.index_of("/fs/") == "/fs/index.md"
    assert links.index_of("/fs/guides") == "/fs/guides/index.md"


# --- derived at write time -----------------------------------------------------------------------


def test_derive_reads_links_after_the_block_with_page_lines() -> None:
    content = (
        "---\ntype: Guide\ndescription: see [x](fm.md)\n---\n# T\n\n[a](a.md) [e](https://e.x)\n[s](#s)\n"
        "[out](../../x.md) ![d](d.svg)\n"
    )
    derived = facts.derive("/fs/g/p.md", content)
    assert derived.links == (
        PageLink(7, "a.md", "page", "/fs/g/a.md"),
        PageLink(7, "https://e.x", "external"),
        PageLink(8, "#s", "page", "/fs/g/p.md"),
        PageLink(9, "../../x.md", "escapes"),
        PageLink(9, "d.svg", "page", "/fs/g/d.svg", image=True),
    )


def test_derive_of_a_block_that_never_closes_reads_the_whole_page() -> None:
    derived = facts.derive("/fs/p.md", "---\n[a](a.md)\n")
    assert derived.frontmatter == "unparsed"
    assert derived.error_line == 1
    assert [(k.line, k.target) for k in derived.links] == [(2, "/fs/a.md")]


def test_derive_of_an_unparsed_block_reads_links_after_it() -> None:
    derived = facts.derive("/fs/p.md", "---\nnot yaml [a](a.md)\n---\n[b](b.md)\n")
    assert (derived.frontmatter, derived.error_line) == ("unparsed", 2)
    assert [(k.line, k.target) for k in derived.links] == [(4, "/fs/b.md")]


def test_derived_fields() -> None:
    content = (
        "---\ntype: Guide\ntitle: T\ndescription: D\nstatus: draft\ntags: [a]\nstale_after: 2027-01-01\n"
        "okf_version: 1\nverified:\n  - by: agent-1\n    at: t1\n  - by: human\n    at: t2\n---\n"
    )
    derived = facts.derive("/fs/index.md", content)
    assert (
        derived.frontmatter,
        derived.page_type,
        derived.title,
        derived.description,
        derived.status,
        derived.tags,
        derived.stale_after,
        derived.has_okf_version,
        derived.okf_line,
    ) == ("parsed", "Guide", "T", "D", "draft", ("a",), "2027-01-01", True, 8)
    assert (derived.verified_by, derived.verified_at) == ("human", "t2")
    assert facts.derive("/fs/x.md", "x").verified_by is None


def test_derived_round_trips_through_its_stored_form() -> None:
    content = '---\ntype: Guide\nverified:\n  - by: human\n    at: t\ntags: [a, "b"]\n---\n[a](a.md) ![i](i.png)\n'
    for text in (content, "plain [x](../x.md)", "---\nbad\n---\n", "---\ntags:\n---\n"):
        derived = facts.derive("/fs/d/p.md", text)
        assert facts.Derived.from_json(derived.to_json()) == derived


def test_a_stored_form_of_another_version_is_derived_again() -> None:
    stored = facts.derive("/fs/p.md", "x").to_json().replace(f'"v":{facts.DERIVE_VERSION}', '"v":0')
    assert facts.Derived.from_json(stored) is None
