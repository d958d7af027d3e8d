"""`/api/v1/agents`: agents, tokens and grants (admin)."""

from __future__ import annotations

from quart import Blueprint, Response

from hubcore.services.agents import AgentCreate, GrantAdd
from hubcore.services.requests import parse
from hubhttp.context import caller, hub, json_body, json_response, no_content, no_members

bp = Blueprint("agents", __name__, url_prefix="/api/v1/agents")


@bp.get("")
async def list_agents() -> Response:
    return json_response({"agents": await hub().agents.list(caller())})


@bp.post("")
async def create_agent() -> Response:
    return json_response(await hub().agents.create(caller(), parse(AgentCreate, await json_body())), 201)


@bp.post("/<agent_id>/token")
async def issue_token(agent_id: str) -> Response:
    await no_members()
    return json_response(await hub().agents.issue_token(caller(), agent_id), 201)


@bp.delete("/<agent_id>/token")
async def revoke_token(agent_id: str) -> Response:
    await no_members()
    await hub().agents.revoke_token(caller(), agent_id)
    return no_content()


@bp.get("/<agent_id>/grants")
async def list_grants(agent_id: str) -> Response:
    return json_response({"grants": await hub().agents.grants(caller(), agent_id)})


@bp.post("/<agent_id>/grants")
async def add_grant(agent_id: str) -> Response:
    req = parse(GrantAdd, {**await json_body(), "agent_id": agent_id})
    grant, created = await hub().agents.grant(caller(), req)
    return json_response(grant, 201 if created else 200)


@bp.delete("/<agent_id>/grants/<project_id>")
async def revoke_grant(agent_id: str, project_id: str) -> Response:
    await hub().agents.revoke_grant(caller(), agent_id, project_id)
    return no_content()
