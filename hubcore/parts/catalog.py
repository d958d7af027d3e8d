"""The hub's part classes, the one list (`PART_TYPES`), apart from the hub that builds them: what
is asked of the classes alone (hub.db's steps, the ops tools' view of a data directory, the search
families the request models list) reads this module without importing the hub."""

from __future__ import annotations

from hubcore.parts.artifacts import ArtifactsPart
from hubcore.parts.enrolment import EnrolmentPart
from hubcore.parts.feeds import FeedsPart
from hubcore.parts.integrity import IntegrityPart
from hubcore.parts.kb import KbPart
from hubcore.parts.projects import ProjectsPart
from hubcore.parts.protocol import Part
from hubcore.parts.push import PushPart
from hubcore.parts.search import SearchPart
from hubcore.parts.sessions import SessionsPart

# In the order `hubcore.hub.build_parts` makes them (a test holds the two alike): hub.db is migrated
# from their classes' steps before any part is built.
PART_TYPES: tuple[type[Part], ...] = (
    ProjectsPart,
    FeedsPart,
    SessionsPart,
    KbPart,
    ArtifactsPart,
    SearchPart,
    EnrolmentPart,
    IntegrityPart,
    PushPart,
)


def search_family_names(parts: tuple[type[Part], ...] | None = None) -> tuple[str, ...]:
    """Every family of search hits the parts feed (`parts`, the binary's when None: read at the
    call), in part order: the search `type` values."""
    return tuple(name for part in (PART_TYPES if parts is None else parts) for name in part.search_family_names)
