"""What a write stores beside a page's bytes, derived once so no read re-parses a page: the
derivation the views read (`facts.derive`: frontmatter fields, verified entries, links), the
`stale_after` date the brief's query uses, and a one-line summary for the version listing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hubcore.services.kb import facts, frontmatter, views

SUMMARY_MAX = 120
_HEADING = re.compile(r"#{1,6}\s+(.*?)\s*#*\s*$")


@dataclass(frozen=True)
class Written:
    derived: facts.Derived
    stale_after: str | None  # a valid `YYYY-MM-DD` of a parsed block, else None (never stale)
    summary: str | None

    @property
    def verified(self) -> tuple[frontmatter.Verified, ...]:
        return self.derived.verified


def derive(path: str, content: str) -> Written:
    """The page's derived facts; refuses (`invalid_argument`, nothing stored) a closed frontmatter
    block holding a control character (spec "Errors")."""
    block = frontmatter.require_writable(content)
    found = facts.derive(path, content, block)
    return Written(found, stale_date(found.stale_after), _summary(found.title, content[block.body_offset :]))


def decoded(text: str, path: str, content: bytes | None) -> facts.Derived:
    """A stored derivation; one made by another derivation version is derived again from the
    page's bytes (`content`), and reads as an unparsed page when those are not at hand."""
    found = facts.Derived.from_json(text)
    if found is not None:
        return found
    if content is None:
        return facts.Derived("unparsed", error="stored by another hub version; rewrite the page")
    return facts.derive(path, content.decode("utf-8"))


def stale_date(value: str | None) -> str | None:
    """`stale_after` as the brief's query compares it (`YYYY-MM-DD`), read as the views read it."""
    when = views.stale_date(value)
    return None if when is None else when.isoformat()


def _summary(title: str | None, body: str) -> str | None:
    """The title, else the first heading or line of the markdown, cut to 120 characters."""
    text = title
    if not text:
        line = next((ln.strip() for ln in body.splitlines() if ln.strip()), "")
        heading = _HEADING.fullmatch(line)
        text = heading.group(1) if heading else line
    if not text:
        return None
    return text if len(text) <= SUMMARY_MAX else text[: SUMMARY_MAX - 3] + "..."
