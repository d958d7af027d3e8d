"""The search operation's typed request (REST `GET /search` and the MCP `search` tool)."""

# No `from __future__ import annotations` in model modules: pydantic reads the annotations.

from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import Field

from hubcore.parts.catalog import search_family_names
from hubcore.services.fields import EntryContent, ProjectId, SessionId
from hubcore.services.requests import Request
from hubcore.services.search.query import QUERY_MAX_BYTES

HITS_MAX = 100  # hits a page (spec "Limits")
HITS_DEFAULT = 50
# The `type` values: the families the parts declare (`Part.search_family_names`), in part order, so
# a new part's family is in the request models (and the REST and MCP schemas made from them)
# without a change here.
FAMILIES = search_family_names()
FAMILIES_TEXT = f"{', '.join(FAMILIES[:-1])} or {FAMILIES[-1]}" if len(FAMILIES) > 1 else "".join(FAMILIES)

if TYPE_CHECKING:
    Family = str
else:
    Family = Literal[FAMILIES]
Query = Annotated[
    str,
    EntryContent(QUERY_MAX_BYTES, what="the query"),
    Field(
        description='words match as prefixes, whole words first; "a phrase" in quotes '
        "as a phrase; punctuation and bare AND/OR/NOT/NEAR are dropped"
    ),
]


class SearchRequest(Request):
    """`GET /search` and `search`: lexical search over what the caller may see."""

    q: Query
    scope: Annotated[
        Literal["global", "project"] | None,
        Field(
            description="global (every visible project) or project (needs project); "
            "absent: project when project is given, else global"
        ),
    ] = None
    project: Annotated[ProjectId | None, Field(description="the project searched (scope=project)")] = None
    session_id: Annotated[SessionId | None, Field(description="only this session's brain and events")] = None
    type: Annotated[Family | None, Field(description="only this family of hits")] = None
    limit: Annotated[int, Field(ge=1, le=HITS_MAX, description=f"hits a page, 1 to {HITS_MAX}")] = HITS_DEFAULT
    mode: Annotated[
        Literal["lexical", "semantic"],
        Field(
            description="semantic blends in the documents nearest in meaning (backend hybrid); "
            "without the embedding model it is lexical (fts-fallback)"
        ),
    ] = "lexical"


class SearchCall(Request):
    """The MCP `search` tool: scoped to a project (`project_id`), a session (`session_id`), or,
    with neither, every project the caller may see."""

    query: Query
    project_id: Annotated[ProjectId | None, Field(description="search only this project")] = None
    session_id: Annotated[SessionId | None, Field(description="search only this session's brain and events")] = None
    type: Annotated[Family | None, Field(description=f"only this family: {FAMILIES_TEXT}")] = None
    limit: Annotated[int, Field(ge=1, le=HITS_MAX, description=f"hits a page, 1 to {HITS_MAX}")] = HITS_DEFAULT
    mode: Annotated[
        Literal["lexical", "semantic"],
        Field(
            description="semantic blends in the documents nearest in meaning (backend hybrid); "
            "without the embedding model it is lexical (fts-fallback)"
        ),
    ] = "lexical"

    def request(self) -> SearchRequest:
        return SearchRequest(
            q=self.query,
            project=self.project_id,
            session_id=self.session_id,
            type=self.type,
            limit=self.limit,
            mode=self.mode,
        )
