"""`/api/v1/storage` and `/api/v1/prune`: the storage report, pruning and its undo (admin)."""

from __future__ import annotations

from quart import Blueprint, Response

from hubhttp.context import caller, hub, json_response

bp = Blueprint("storage", __name__, url_prefix="/api/v1")


@bp.get("/storage")
async def report() -> Response:
    return json_response(await hub().storage.report(caller()))


@bp.delete("/storage/sessions/<session_id>")
async def prune_one(session_id: str) -> Response:
    return json_response(await hub().storage.prune(caller(), session_id=session_id))


@bp.delete("/storage/sessions")
async def prune_all() -> Response:
    return json_response(await hub().storage.prune(caller()))


@bp.delete("/storage/projects/<project_id>/sessions")
async def prune_project(project_id: str) -> Response:
    return json_response(await hub().storage.prune(caller(), project_id=project_id))


@bp.post("/prune/undo/<token>")
async def undo(token: str) -> Response:
    return json_response(await hub().storage.undo(caller(), token))
