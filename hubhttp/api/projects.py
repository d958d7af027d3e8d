"""`/api/v1/projects`"""

from __future__ import annotations

from quart import Blueprint, Response

from hubcore.services.projects import ProjectCreate, ProjectUpdate
from hubcore.services.requests import parse
from hubhttp.context import caller, hub, json_body, json_response, no_content

bp = Blueprint("projects", __name__, url_prefix="/api/v1/projects")


@bp.get("")
async def list_projects() -> Response:
    return json_response({"projects": await hub().projects.list(caller())})


@bp.post("")
async def create_project() -> Response:
    project = await hub().projects.create(caller(), parse(ProjectCreate, await json_body()))
    return json_response(project, 201)


@bp.get("/<project_id>")
async def get_project(project_id: str) -> Response:
    return json_response(await hub().projects.get(caller(), project_id))


@bp.patch("/<project_id>")
async def update_project(project_id: str) -> Response:
    req = parse(ProjectUpdate, {**await json_body(), "project_id": project_id})
    return json_response(await hub().projects.update(caller(), req))


@bp.delete("/<project_id>")
async def delete_project(project_id: str) -> Response:
    await hub().projects.delete(caller(), project_id)
    return no_content()
