"""Typed requests of the knowledge base: one model per operation, which the REST routes (with the
project and the page path from the URL) and the MCP tools (project defaulting to the active
session's) both parse into before calling `KbService`.

Paths are canonical once parsed (`PagePath`); limits come from `hubcore.services.entries` (page
size, listing) and from this package (history page).
"""

# No `from __future__ import annotations` in model modules: pydantic reads the annotations.

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from hubcore.services import entries
from hubcore.services.fields import ACTOR_MAX, EntryContent, IfVersion, ProjectId, SessionId
from hubcore.services.kb.paths import PagePath
from hubcore.services.requests import Request

HISTORY_DEFAULT, HISTORY_MAX = 50, 200
OPS = ("kb.put", "kb.delete", "kb.review", "kb.promote", "kb.revert")
PAGE_TYPES_HINT = "Concept, Guide, Runbook, Reference, Decision, Decision Record"
LABEL_MAX = 200  # promote's title, and each tag
DESCRIPTION_MAX = 2000
TAGS_MAX = 50

Path = Annotated[str, PagePath()]
Prefix = Annotated[str, PagePath(allow_root=True, field="prefix")]
Version = Annotated[
    str, StringConstraints(pattern="^sha256:[0-9a-f]{64}$"), Field(description="a page version, sha256:<64 hex digits>")
]
Content = Annotated[str, EntryContent(entries.PAGE_MAX, what="the page's markdown")]
# Bounded by SQLite's integer: a larger cursor cannot be compared in the log's query.
LogCursor = Annotated[
    int, Field(ge=1, le=2**63 - 1, description="exclusive cursor: rows older than this id (next_before)")
]
OneLine = Annotated[str, StringConstraints(min_length=1, max_length=LABEL_MAX, pattern=r"^[^\x00-\x1f\x7f]*$")]


class KbWrite(Request):
    """`PUT .../kb/pages/{path}`, `brain_put` with `store: project`: write a page."""

    project_id: ProjectId
    path: Path
    content: Content
    if_version: IfVersion | None = None


class KbRead(Request):
    """`GET .../kb/pages/{path}`, `brain_get` with `store: project`, `resources/read`: a page, or
    with `version` one version its history names (deleted pages included) while it is kept."""

    project_id: ProjectId
    path: Path
    version: Version | None = None


class KbList(Request):
    """`GET .../kb/pages`, `brain_list` with `store: project`: one directory level, or with `meta`
    every page under the prefix with its row fields."""

    project_id: ProjectId
    prefix: Prefix = "/fs/"
    limit: Annotated[int, Field(ge=1, le=entries.LISTING_MAX, description=f"entries, 1 to {entries.LISTING_MAX}")] = (
        entries.LISTING_MAX
    )
    meta: Annotated[bool, Field(description="every page under the prefix with its row fields")] = False


class KbDelete(Request):
    """`DELETE .../kb/pages/{path}`, `brain_delete` with `store: project`."""

    project_id: ProjectId
    path: Path
    if_version: IfVersion | None = None


class KbReview(Request):
    """`POST .../kb/pages/{path}/review`: the human vouches for the page as it stands."""

    project_id: ProjectId
    path: Path
    if_version: IfVersion | None = None
    verified_by: Annotated[Literal["human"] | None, Field(description="only the literal 'human'")] = None


class KbRevert(Request):
    """`POST .../kb/pages/{path}/revert`, `brain_revert`: write a kept version back."""

    project_id: ProjectId
    path: Path
    version: Version
    if_version: IfVersion | None = None


class KbPromote(Request):
    """`POST .../kb/promote`, `brain_promote`: copy a session brain entry into a page citing it."""

    project_id: ProjectId
    from_session_id: SessionId
    from_path: Annotated[
        str,
        StringConstraints(min_length=1, pattern=entries.path_pattern(entries.BRAIN_NAMESPACES, allow_root=False)),
        Field(description="the brain entry's path"),
    ]
    to_path: Annotated[str, PagePath(field="to_path")]
    type: Annotated[OneLine | None, Field(description=f"the page type ({PAGE_TYPES_HINT})")] = None
    title: OneLine | None = None
    description: Annotated[str, StringConstraints(max_length=DESCRIPTION_MAX)] | None = None
    tags: Annotated[list[OneLine], Field(max_length=TAGS_MAX)] | None = None
    if_version: IfVersion | None = None


class KbHistory(Request):
    """`GET .../kb/history`, `brain_history`: the write log newest first; `limit` 0 counts only."""

    project_id: ProjectId
    path: Path | None = None
    prefix: Prefix | None = None
    actor: Annotated[str, StringConstraints(min_length=1, max_length=ACTOR_MAX)] | None = None
    op: Literal["kb.put", "kb.delete", "kb.review", "kb.promote", "kb.revert"] | None = None
    before: LogCursor | None = None
    limit: Annotated[
        int, Field(ge=0, le=HISTORY_MAX, description=(f"rows, 0 to {HISTORY_MAX} (0: the count only)"))
    ] = HISTORY_DEFAULT


class KbVersions(Request):
    """`GET .../kb/versions`: a page's versions newest first, with whether each is kept."""

    project_id: ProjectId
    path: Path
    before: LogCursor | None = None
    limit: Annotated[int, Field(ge=1, le=HISTORY_MAX, description=f"rows, 1 to {HISTORY_MAX}")] = HISTORY_DEFAULT


class KbForget(Request):
    """`DELETE .../kb/versions` (admin): forget a page's kept bytes but those of the held version."""

    project_id: ProjectId
    path: Path


class KbProject(Request):
    """An operation on a whole knowledge base (`GET .../kb/stats`)."""

    project_id: ProjectId


class KbLint(KbProject):
    """`GET .../kb/lint`; `fresh` walks again instead of reading the cached walk."""

    fresh: bool = False


class KbBacklinks(KbProject):
    """`GET .../kb/backlinks`: the pages linking to `path`."""

    path: Path
