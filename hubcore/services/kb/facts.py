"""What a page's bytes say, derived once at write time, and what the per-project walk hands the
derived views (meta listing, backlinks, lint, stats) for each page.

The store keeps `Derived` beside each page (as `Derived.to_json()`), so no read re-parses the
bundle: the walk reads rows into `PageFacts` and the views in views.py work from those alone.
`DERIVE_VERSION` changes whenever the derivation does; a stored row of another version is derived
again from the page's bytes (`Derived.from_json` answers None for it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import orjson

from hubcore.services.kb import frontmatter, links
from hubcore.services.kb.frontmatter import State, Verified

DERIVE_VERSION = 1


class PageLink(NamedTuple):
    """A link on the page: its line, its target as written (normalised), and where it goes:
    `kind` `page` with the canonical `target` (`/fs/` the root; the page's own path for a
    self-link), or `external` / `escapes` with no target. A named tuple: a walk decodes tens of
    thousands of these, and a tuple is the cheapest immutable record to build."""

    line: int
    href: str
    kind: links.Kind
    target: str | None = None
    image: bool = False


@dataclass(frozen=True, slots=True)
class Derived:
    """Everything the views need from a page's bytes. Frontmatter fields are None when the block
    is absent or unparsed; `verified` keeps every entry (the trust rule compares them)."""

    frontmatter: State
    page_type: str | None = None
    title: str | None = None
    description: str | None = None
    status: str | None = None
    tags: tuple[str, ...] | None = None
    stale_after: str | None = None  # as written; views.stale_date reads it
    has_okf_version: bool = False
    okf_line: int | None = None  # the line of `okf_version`
    error: str | None = None  # why the block is unparsed
    error_line: int | None = None
    verified: tuple[Verified, ...] = ()
    links: tuple[PageLink, ...] = ()

    @property
    def verified_by(self) -> str | None:
        """The newest (last) verified entry's `by`."""
        return self.verified[-1].by if self.verified else None

    @property
    def verified_at(self) -> str | None:
        return self.verified[-1].at if self.verified else None

    def to_json(self) -> str:
        return orjson.dumps(_encode(self)).decode()

    @classmethod
    def from_json(cls, text: str) -> Derived | None:
        """The stored derivation, or None when it was made by another `DERIVE_VERSION`."""
        data: dict[str, Any] = orjson.loads(text)
        if data.get("v") != DERIVE_VERSION:
            return None
        return _decode(data)


def derive(path: str, content: str, parsed: frontmatter.Frontmatter | None = None) -> Derived:
    """What the page at canonical `path` holding `content` says. Never raises: a write checks
    `frontmatter.require_writable` first (and may hand its answer in as `parsed`, saving a parse)."""
    found = parsed if parsed is not None else frontmatter.parse(content)
    body = content[found.body_offset :]
    page_links = tuple(_page_link(path, link) for link in links.extract(body, found.body_line))
    return Derived(
        frontmatter=found.state,
        page_type=found.type,
        title=found.title,
        description=found.description,
        status=found.status,
        tags=found.tags,
        stale_after=found.stale_after,
        has_okf_version="okf_version" in found.keys,
        okf_line=found.line_of("okf_version"),
        error=found.error,
        error_line=found.error_line,
        verified=found.verified,
        links=page_links,
    )


def _page_link(path: str, link: links.Link) -> PageLink:
    target = links.resolve(path, link.href)
    return PageLink(link.line, link.href, target.kind, target.path, link.image)


@dataclass(frozen=True, slots=True)
class PageFacts:
    """One page as the walk gives it to the views: the store's row and its derivation.
    `trust` is decided by the store from the write log (one of the levels `hubcore.services.kb.trust`
    names); times are ISO 8601 UTC."""

    path: str
    size_bytes: int
    version: str
    derived: Derived
    trust: str
    last_write_by: str | None = None
    last_write_at: str | None = None


# --- storage form ------------------------------------------------------------------------------


def _encode(d: Derived) -> dict[str, Any]:
    return {
        "v": DERIVE_VERSION,
        "fm": d.frontmatter,
        "type": d.page_type,
        "title": d.title,
        "description": d.description,
        "status": d.status,
        "tags": None if d.tags is None else list(d.tags),
        "stale_after": d.stale_after,
        "okf": d.has_okf_version,
        "okf_line": d.okf_line,
        "error": d.error,
        "error_line": d.error_line,
        "verified": [[v.by, v.at] for v in d.verified],
        "links": [tuple(k) for k in d.links],  # orjson writes a plain tuple as an array
    }


def _decode(data: dict[str, Any]) -> Derived:
    tags = data["tags"]
    return Derived(
        frontmatter=data["fm"],
        page_type=data["type"],
        title=data["title"],
        description=data["description"],
        status=data["status"],
        tags=None if tags is None else tuple(tags),
        stale_after=data["stale_after"],
        has_okf_version=data["okf"],
        okf_line=data["okf_line"],
        error=data["error"],
        error_line=data["error_line"],
        verified=tuple(Verified(by, at) for by, at in data["verified"]),
        links=tuple(map(PageLink._make, data["links"])),
    )
