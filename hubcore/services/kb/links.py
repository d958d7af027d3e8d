"""A knowledge base page's links: found in markdown-it-py's tokens, resolved against the page's path.

Only markdown links are links (spec "Knowledge base page"): inline `[text](target)`, reference
`[text][ref]` (resolved by its definition), autolinks `<scheme:...>` and images `![alt](target)`
(an image names a file of the bundle as a link does). Not links: wiki-style `[[page]]`, raw HTML
`<a href>`, and anything inside a fenced block, an indented code block or a code span (markdown-it
gives those no link tokens). Found once at write time and stored with the page (see facts.py).

Resolution, from the page's own path: a target with a scheme (`https:`, `mailto:`, `hub:`) or
starting `//` is external and never checked; an empty target or one that is only a fragment or a
query links the page to itself; a target starting `/` is a hub path (`/fs/...`); any other is
relative to the page's directory. The query and fragment are dropped and the path percent-decoded.
`.` and empty components vanish, `..` climbs; a link that climbs above `/fs` or names a path outside
it escapes the bundle (`link_escapes_bundle`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import unquote

from markdown_it import MarkdownIt
from markdown_it.token import Token

Kind = Literal["page", "external", "escapes"]
ROOT = "/fs/"
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
# One CommonMark parser, built at import and never changed after: parse keeps its state per call
# (markdown-it's StateCore and env), so concurrent callers on worker threads share it safely.
# Rules that only shape text (emphasis, entities, joining text runs) are off: links are found in
# the inline tokenizer before any of them runs, so they change no link and cost a third of a parse
# (and on `*a_*a_...` input, most of it). The core pass `inline` is off too: `extract` runs the
# inline tokenizer itself, only on the blocks that can hold a link (a `[` or a `<`), with the
# references the block pass collected (the inline pass is the costly half of a parse).
_BLOCKS = MarkdownIt("commonmark").disable(
    ["emphasis", "entity", "text_join", "balance_pairs", "fragments_join", "inline"]
)
# Every markdown link needs one of these: `](` (inline), `]:` (the definition a reference link
# needs), `<` (an autolink). Text with none of them holds no link and is not parsed at all.
_LINK_MARKS = ("](", "]:", "<")
_BLOCK_MARKS = ("[", "<")
_BREAKS = ("softbreak", "hardbreak")


@dataclass(frozen=True, slots=True)
class Link:
    """A link as written: its page line (1-based), its target as markdown-it normalised it
    (percent-encoded), and whether it is an image."""

    line: int
    href: str
    image: bool = False


@dataclass(frozen=True, slots=True)
class Target:
    """Where a link goes: a canonical `/fs/...` path (`/fs/` for the bundle's root) for `page`,
    None for `external` and `escapes`."""

    kind: Kind
    path: str | None = None


def extract(markdown: str, first_line: int = 1) -> list[Link]:
    """The links of `markdown` in document order; `first_line` is the page line `markdown`
    starts on (the line after the frontmatter block)."""
    links: list[Link] = []
    if not any(mark in markdown for mark in _LINK_MARKS):
        return links
    env: dict[str, Any] = {}
    for token in _BLOCKS.parse(markdown, env):
        if token.type != "inline" or token.map is None or not any(m in token.content for m in _BLOCK_MARKS):
            continue
        children: list[Token] = []
        _BLOCKS.inline.parse(token.content, _BLOCKS, env, children)
        links.extend(_inline_links(children, first_line + token.map[0]))
    return links


def _inline_links(children: list[Token], line: int) -> list[Link]:
    found: list[Link] = []
    for child in children:
        if child.type in _BREAKS:
            line += 1
        elif child.type == "html_inline":
            line += child.content.count("\n")
        elif child.type == "link_open":
            found.append(Link(line, str(child.attrGet("href") or "")))
        elif child.type == "image":
            found.append(Link(line, str(child.attrGet("src") or ""), image=True))
    return found


def resolve(page: str, href: str) -> Target:
    """Where `href`, written on the page at canonical path `page`, goes."""
    if _SCHEME.match(href) or href.startswith("//"):
        return Target("external")
    path = unquote(href.split("#", 1)[0].split("?", 1)[0], errors="replace")
    if not path:
        return Target("page", page)
    stack = [] if path.startswith("/") else page.strip("/").split("/")[:-1]
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part != "..":
            stack.append(part)
        elif len(stack) <= 1:  # climbing above /fs (or above the hub's root)
            return Target("escapes")
        else:
            stack.pop()
    if not stack or stack[0] != "fs":
        return Target("escapes")
    return Target("page", ROOT + "/".join(stack[1:]))


def index_of(path: str) -> str:
    """The index page a directory link means: `<dir>/index.md` (`/fs/index.md` for the root)."""
    return path + ("index.md" if path.endswith("/") else "/index.md")
