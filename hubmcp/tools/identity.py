"""`whoami` and `version`."""

from __future__ import annotations

from typing import Any

from hubcore import build
from hubcore.services.requests import NoArguments
from hubmcp.context import CallContext
from hubmcp.tools.base import Tool, outputs

SKILL_URI = "skill://hub/SKILL.md"


async def whoami(call: CallContext, _: NoArguments) -> dict[str, Any]:
    me = await call.hub.identity.whoami(call.caller)
    return {
        **me,
        "guide_url": call.guide_url(),
        "guide_resource": "hub://skill",
        "skill_uri": SKILL_URI,
        "mcp_url": f"{call.origin}/mcp" if call.origin else None,
        "protocol_version": call.protocol_version,
    }


async def version(call: CallContext, _: NoArguments) -> dict[str, Any]:
    return {"name": "agent-hub", "version": build.version(), "commit": build.commit()}


_NULLABLE_STR = {"type": ["string", "null"]}

TOOLS = (
    Tool(
        name="whoami",
        description=(
            "Your identity: agent id, display name, your personal project, and where the agent guide is. Call it first."
        ),
        input_model=NoArguments,
        output_schema=outputs(
            {
                "kind": {"enum": ["agent", "admin"]},
                "actor": {"type": "string", "description": "the name your writes are recorded under"},
                "agent_id": _NULLABLE_STR,
                "display_name": {"type": "string"},
                "personal_project_id": _NULLABLE_STR,
                "status": {"type": "string"},
                "created_at": _NULLABLE_STR,
                "guide_url": _NULLABLE_STR,
                "guide_resource": {"type": "string"},
                "skill_uri": {"type": "string"},
                "mcp_url": _NULLABLE_STR,
                "protocol_version": {"type": "string"},
            },
            ("kind", "actor", "personal_project_id", "guide_resource", "skill_uri"),
        ),
        handler=whoami,
        read_only=True,
    ),
    Tool(
        name="version",
        description="The hub's version and commit.",
        input_model=NoArguments,
        output_schema=outputs(
            {
                "name": {"type": "string"},
                "version": {"type": "string"},
                "commit": {"type": "string"},
            },
            ("name", "version", "commit"),
        ),
        handler=version,
        read_only=True,
    ),
)
