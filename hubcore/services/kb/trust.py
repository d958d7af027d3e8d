"""A page's trust, read from its verified entries and its write log (spec "Knowledge base page").

- `unverified`: the page has no verified entry.
- `human_reviewed`: its newest verified entry (the last of the block) is by `human`.
- `machine_confirmed`: its newest entry is by anyone else.
- `edited_since_review`: the page no longer holds the verified bytes.

Whether the page still holds the verified bytes is decided by the write log, never by comparing
stamps with the page's own time: each log row carries a note, `verifies`, saying whether that write
brought in the newest verification. A write does when the page it stored ends its verified block
with an entry the page it replaced lacked, stamped within five minutes of the write; a review
always does. The page is edited since its review when the version it holds differs from the version
the newest verifying write stored. So a retry that stores the same bytes is no edit (it brings in
nothing, and the held version is still the verified one), restoring the verified bytes reads as
verified again, and removing the newest entry to show an older one is an edit (that write brings
in nothing and stores other bytes). A log row without the note (written by an older hub) falls
back to time: the page is edited when its newest write is later than the newest verified `at`, to
the second.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

UNVERIFIED = "unverified"
HUMAN_REVIEWED = "human_reviewed"
MACHINE_CONFIRMED = "machine_confirmed"
EDITED_SINCE_REVIEW = "edited_since_review"
STAMP_WINDOW_SECS = 300.0
HUMAN = "human"


class Verified(Protocol):
    """One entry of a page's `verified` block (`frontmatter.Verified`)."""

    @property
    def by(self) -> str: ...

    @property
    def at(self) -> str: ...


@dataclass(frozen=True)
class Note:
    """What trust needs of one log row of the page: when it was written, the version it stored
    (None for a delete), and its note (None when the row has none)."""

    at: float
    version: str | None
    verifies: bool | None


def stamp(value: str) -> float | None:
    """An entry's `at` as seconds since the epoch; None when it is not an ISO 8601 time (a date
    alone counts as its midnight UTC; a time without a zone is read as UTC)."""
    try:
        moment = datetime.fromisoformat(value.strip())
    except (ValueError, AttributeError):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def brings_verification(stored: Sequence[Verified], replaced: Sequence[Verified] | None, at: float) -> bool:
    """The note of a write (not a review) made at `at`: whether the page it stores ends its
    verified block with an entry the page it replaces (None: no page) lacked, stamped within five
    minutes of the write."""
    if not stored:
        return False
    newest = stored[-1]
    if replaced is not None and (newest.by, newest.at) in {(v.by, v.at) for v in replaced}:
        return False
    when = stamp(newest.at)
    return when is not None and abs(at - when) <= STAMP_WINDOW_SECS


def trust(verified: Sequence[Verified], notes: Iterable[Note], held: str) -> str:
    """The trust of a page holding version `held` with `verified` entries, given its log rows'
    notes newest first (the newest being the write that stored `held`). The notes are read only
    as far as the newest verifying write."""
    if not verified:
        return UNVERIFIED
    newest = verified[-1]
    reviewed = HUMAN_REVIEWED if newest.by == HUMAN else MACHINE_CONFIRMED
    newest_write: float | None = None
    for note in notes:
        newest_write = note.at if newest_write is None else newest_write
        if note.verifies is None:  # an older hub's row: the timestamp rule
            return EDITED_SINCE_REVIEW if _later(newest_write, newest.at) else reviewed
        if note.verifies:
            return reviewed if note.version == held else EDITED_SINCE_REVIEW
    return EDITED_SINCE_REVIEW  # entries no write of this page brought in: not the verified bytes


def _later(written: float, verified_at: str) -> bool:
    """Whether a write at `written` is later than the stamp `verified_at`, to the second (an
    unreadable stamp cannot vouch for anything)."""
    when = stamp(verified_at)
    return when is None or int(written) > int(when)
