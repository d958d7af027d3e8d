"""`/api/v1/projects`"""

from __future__ import annotations

from quart import Blueprint, Response

from hubhttp.context import caller, hub, json_body, json_response, no_content

bp = Blueprint("projects", __name__, url_prefix="/api/v1/projects")


@bp.get("")
async def list_projects() -> Response:
    return json_response({"projects": await hub().projects.list(caller())})


@bp.post("")
async def create_project() -> Response:
    project = await hub().projects.create(caller(), await json_body())
    return json_response(project, 201)


@bp.get("/<project_id>")
async def get_project(project_id: str) -> Response:
    return json_response(await hub().projects.get(caller(), project_id))


@bp.patch("/<project_id>")
async def update_project(project_id: str) -> Response:
    return json_response(await hub().projects.update(caller(), project_id, await json_body()))


@bp.delete("/<project_id>")
async def delete_project(project_id: str) -> Response:
    await hub().projects.delete(caller(), project_id)
    return no_content()
