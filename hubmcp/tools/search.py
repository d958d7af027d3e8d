"""The `search` tool: a thin adapter over the search service (hubcore.services.search)."""

from __future__ import annotations

from typing import Any

from hubcore.services.search.models import FAMILIES, SearchCall
from hubmcp.context import CallContext
from hubmcp.tools.base import Tool, outputs

FAMILY: dict[str, Any] = {"enum": list(FAMILIES)}  # the parts' families (`Part.search_family_names`)
HIT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "type": FAMILY,
        "project_id": {"type": "string"},
        "project_display_name": {"type": "string"},
        "snippet": {"type": "string"},
        "event_id": {"type": "string"},
        "event_kind": {"type": "string"},
        "actor": {"type": "string"},
        "session_id": {"type": ["string", "null"]},
        "path": {"type": "string"},
        "session_name": {"type": ["string", "null"]},
        "session_status": {"type": ["string", "null"]},
        "artifact_id": {"type": "string"},
        "version": {"type": "integer"},
        "size_bytes": {"type": "integer"},
    },
    "required": ["type", "project_id", "project_display_name", "snippet"],
}


async def search(call: CallContext, req: SearchCall) -> dict[str, Any]:
    return await call.hub.search.search(call.caller, req.request())


TOOLS = (
    Tool(
        name="search",
        description=(
            "Search events, artifacts, brains and knowledge pages you can see (one project, one "
            'session, or all). Words match as prefixes; "a phrase" in quotes; `mode: semantic` adds '
            "matches by meaning."
        ),
        input_model=SearchCall,
        output_schema=outputs(
            {
                "query": {"type": "string"},
                "count": {"type": "integer"},
                "truncated": {"type": "boolean"},
                "took_ms": {"type": "number"},
                "backend": {"enum": ["fts", "hybrid", "fts-fallback"]},
                "semantic": {"enum": ["unavailable", "warming"]},
                "groups": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "type": FAMILY,
                            "count": {"type": "integer"},
                            "hits": {"type": "array", "items": HIT},
                        },
                        "required": ["type", "count", "hits"],
                    },
                },
            },
            ("count", "truncated", "took_ms", "backend", "groups"),
        ),
        handler=search,
        read_only=True,
    ),
)
