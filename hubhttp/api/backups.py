"""`/api/v1/backups`: the online backup (admin). No path comes from the request: the hub writes
only under its configured `backup_dir`."""

from __future__ import annotations

from quart import Blueprint, Response

from hubcore.ops.backup import BackupCreate
from hubcore.services.requests import parse
from hubhttp.api.query import merged, query
from hubhttp.api.responses import Out
from hubhttp.context import caller, hub, json_body, json_response

bp = Blueprint("backups", __name__, url_prefix="/api/v1")


class BackupManifestOut(Out):
    schema_version: int
    created_at: str
    files: int
    bytes: int


class BackupOut(Out):
    directory: str
    path: str
    manifest: BackupManifestOut
    duration_ms: int


@bp.post("/backups")
async def create_backup() -> Response:
    req = parse(BackupCreate, merged(query(), await json_body(default={})))
    return json_response(await hub().backups.create(caller(), req), status=201)
