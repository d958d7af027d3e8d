"""`/api/v1/backups`: the online backup (admin). No path comes from the request: the hub writes
only under its configured `backup_dir`."""

from __future__ import annotations

from quart import Blueprint, Response

from hubcore.ops.backup import BackupCreate
from hubcore.services.requests import parse
from hubhttp.api.query import merged, query
from hubhttp.context import caller, hub, json_body, json_response

bp = Blueprint("backups", __name__, url_prefix="/api/v1")

# Its response model, BackupOut, is in hubhttp.api.backup_responses (loaded with the OpenAPI document).


@bp.post("/backups")
async def create_backup() -> Response:
    req = parse(BackupCreate, merged(query(), await json_body(default={})))
    return json_response(await hub().backups.create(caller(), req), status=201)
