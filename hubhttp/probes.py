"""Probes and metrics, outside /api/v1."""

from __future__ import annotations

from prometheus_client import CONTENT_TYPE_LATEST
from quart import Blueprint, Response

from hubhttp.context import hub, json_response

bp = Blueprint("probes", __name__)


@bp.get("/healthz")
async def healthz() -> Response:
    return json_response({"status": "ok"})


@bp.get("/readyz")
async def readyz() -> Response:
    return json_response(await hub().health.ready())


@bp.get("/metrics")
async def metrics() -> Response:
    return Response(
        hub().metrics.render(), mimetype=CONTENT_TYPE_LATEST.split(";")[0], content_type=CONTENT_TYPE_LATEST
    )
