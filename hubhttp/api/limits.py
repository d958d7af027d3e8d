"""`GET /api/v1/limits`: the limits a client checks before sending (`hubcore.services.limits`)."""

from __future__ import annotations

from quart import Blueprint, Response

from hubcore.services.limits import limits
from hubhttp.context import json_response

bp = Blueprint("limits", __name__)


@bp.get("/api/v1/limits")
async def get_limits() -> Response:
    return json_response(limits(), headers={"Cache-Control": "no-cache"})
