"""The `search` tool: a thin adapter over the search service (hubcore.services.search)."""

from __future__ import annotations

from typing import Any

from hubcore.services.search.models import SearchCall
from hubmcp.context import CallContext
from hubmcp.tools.base import Tool, outputs

FAMILY: dict[str, Any] = {"enum": ["feed", "artifact", "brain", "kb"]}
HIT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "type": FAMILY, "project_id": {"type": "string"}, "project_display_name": {"type": "string"},
        "snippet": {"type": "string"}, "event_id": {"type": "string"}, "event_kind": {"type": "string"},
        "actor": {"type": "string"}, "session_id": {"type": ["string", "null"]}, "path": {"type": "string"},
        "session_name": {"type": ["string", "null"]}, "session_status": {"type": ["string", "null"]},
        "artifact_id": {"type": "string"}, "version": {"type": "integer"}, "size_bytes": {"type": "integer"},
    },
    "required": ["type", "project_id", "project_display_name", "snippet"],
}


async def search(call: CallContext, req: SearchCall) -> dict[str, Any]:
    return await call.hub.search.search(call.caller, req.request())


TOOLS = (
    Tool(
        name="search",
        title="Search the hub",
        description=(
            "Search feed events, artifacts (a protected one by its title only), session brains and "
            "knowledge pages in the projects you can see: in one project (`project_id`), one session "
            "(`session_id`), or everywhere (neither). "
            "Words match as prefixes with whole-word matches first; put a \"quoted phrase\" in double "
            "quotes; punctuation and AND/OR/NOT/NEAR are ignored (every word must match). Hits come in "
            "`groups` by type (feed, artifact, brain, kb), the group with the best hit first; `count` is "
            "the hits on this page, `truncated` says more matched than the page (or the 1,000 rows read) "
            "holds: narrow the query. `mode: semantic` also finds by meaning: the documents nearest the "
            "query's meaning are blended with the word matches (`backend: hybrid`), filling the page even "
            "when none is close; without the hub's embedding model it answers lexically "
            "(`backend: fts-fallback`)."
        ),
        input_model=SearchCall,
        output_schema=outputs({
            "query": {"type": "string"}, "count": {"type": "integer"}, "truncated": {"type": "boolean"},
            "took_ms": {"type": "number"}, "backend": {"enum": ["fts", "hybrid", "fts-fallback"]},
            "groups": {"type": "array", "items": {"type": "object", "properties": {
                "type": FAMILY, "count": {"type": "integer"}, "hits": {"type": "array", "items": HIT}},
                "required": ["type", "count", "hits"]}},
        }, ("count", "truncated", "took_ms", "backend", "groups")),
        handler=search,
        read_only=True,
    ),
)
