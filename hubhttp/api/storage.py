"""`/api/v1/storage` and `/api/v1/prune`: the storage report, pruning and its undo (admin)."""

from __future__ import annotations

from typing import Any

from quart import Blueprint, Response

from hubcore.services.requests import parse
from hubcore.services.storage import PruneAll, PruneProject, PruneSession, PruneUndo
from hubhttp.api.query import merged, query
from hubhttp.context import caller, hub, json_body, json_response

bp = Blueprint("storage", __name__, url_prefix="/api/v1")


async def members(**path: str) -> dict[str, Any]:
    """Every member a prune or undo request carries: its query parameters and body members (which
    its model refuses: these routes take only their path), then the path's own."""
    return merged(query(), await json_body(default={}), path)


@bp.get("/storage")
async def report() -> Response:
    return json_response(await hub().storage.report(caller()))


@bp.delete("/storage/sessions/<session_id>")
async def prune_one(session_id: str) -> Response:
    req = parse(PruneSession, await members(session_id=session_id))
    return json_response(await hub().storage.prune(caller(), req))


@bp.delete("/storage/sessions")
async def prune_all() -> Response:
    return json_response(await hub().storage.prune(caller(), parse(PruneAll, await members())))


@bp.delete("/storage/projects/<project_id>/sessions")
async def prune_project(project_id: str) -> Response:
    req = parse(PruneProject, await members(project_id=project_id))
    return json_response(await hub().storage.prune(caller(), req))


@bp.post("/prune/undo/<token>")
async def undo(token: str) -> Response:
    return json_response(await hub().storage.undo(caller(), parse(PruneUndo, await members(token=token))))
