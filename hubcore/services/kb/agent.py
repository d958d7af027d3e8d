"""The knowledge base's agent tools' own requests (spec: `brain_promote`, `brain_history`,
`brain_revert`): the members an agent names, with the project (and for promote the session)
defaulting to its connection's active session. `request` turns one into the operation's typed
request (`models`) once the adapter knows those defaults; every rule stays with the models and
`KbService`.
"""

# No `from __future__ import annotations` in model modules: pydantic reads the annotations.

from typing import Annotated

from pydantic import Field, StringConstraints

from hubcore.services.fields import IfVersion, ProjectId, SessionId
from hubcore.services.kb import models
from hubcore.services.requests import Request, parse

ProjectOf = Annotated[
    ProjectId | None, Field(description="the knowledge base's project; default: your active session's project")
]


class BrainPromote(Request):
    """`brain_promote`: copy an entry of your session brain into a page citing the session."""

    from_path: Annotated[
        str, StringConstraints(min_length=1), Field(description="the session brain entry to copy (/fs/... or /kv/...)")
    ]
    to_path: models.Path
    project_id: ProjectOf = None
    session_id: Annotated[
        SessionId | None, Field(description="the session whose brain holds from_path; default: your active session")
    ] = None
    type: Annotated[models.OneLine | None, Field(description=f"the page type ({models.PAGE_TYPES_HINT})")] = None
    title: models.OneLine | None = None
    description: Annotated[str, StringConstraints(max_length=models.DESCRIPTION_MAX)] | None = None
    tags: Annotated[list[models.OneLine], Field(max_length=models.TAGS_MAX)] | None = None
    if_version: IfVersion | None = None

    def request(self, project_id: str, session_id: str) -> models.KbPromote:
        members = self.model_dump(exclude_none=True, exclude={"project_id", "session_id"})
        return parse(models.KbPromote, {**members, "project_id": project_id, "from_session_id": session_id})


class BrainHistory(Request):
    """`brain_history`: a page's versions newest first (deleted pages included), with whether
    each version's bytes are still kept (a kept one can be restored with `brain_revert`)."""

    path: models.Path
    project_id: ProjectOf = None
    before: models.LogCursor | None = None
    # The very member `GET .../kb/versions` takes (one schema on both surfaces).
    limit: Annotated[int, Field(ge=1, le=models.HISTORY_MAX, description=(f"rows, 1 to {models.HISTORY_MAX}"))] = (
        models.HISTORY_DEFAULT
    )

    def request(self, project_id: str) -> models.KbVersions:
        return parse(models.KbVersions, {**self.model_dump(exclude_none=True), "project_id": project_id})


class BrainRevert(Request):
    """`brain_revert`: write a kept version of a page back (nothing when it is the held one)."""

    path: models.Path
    version: models.Version
    project_id: ProjectOf = None
    if_version: IfVersion | None = None

    def request(self, project_id: str) -> models.KbRevert:
        return parse(models.KbRevert, {**self.model_dump(exclude_none=True), "project_id": project_id})
