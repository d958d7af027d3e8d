"""`/api/v1/enrol`: self-enrolment (public), and the admin's approve and refuse.

The ask and the status poll are public routes: the gate lets them through without a token, and the
status poll reads the pending token itself (every other route refuses it as an unknown token). The
per-peer limit keys on the socket peer, or on the hop a `trust_proxy` proxy appended
(`EnrolmentService.peer`).
"""

from __future__ import annotations

from typing import Any

from quart import Blueprint, Response, request

from hubcore.errors import HubError
from hubcore.services.auth import bearer
from hubcore.services.enrolment import STATUS_WAIT_MAX, EnrolDecision, EnrolRequest
from hubcore.services.requests import parse
from hubhttp.api.query import query
from hubhttp.context import caller, hub, json_body, json_response

bp = Blueprint("enrol", __name__, url_prefix="/api/v1/enrol")


@bp.post("")
async def enrol() -> Response:
    service = hub().enrolment
    client = request.scope.get("client")
    peer = service.peer(client[0] if client else None, request.headers.getlist("X-Forwarded-For"))
    req = parse(EnrolRequest, await json_body())
    return json_response(await service.enrol(req, peer), 202)


@bp.get("/status")
async def enrol_status() -> Response:
    wait = wait_seconds(query(integers=("wait",)))
    token = bearer(request.headers.get("Authorization"))
    return json_response(await hub().enrolment.status(token, wait), headers={"Cache-Control": "no-store"})


def wait_seconds(args: dict[str, Any]) -> int:
    """`wait`, 0 to STATUS_WAIT_MAX seconds (absent: 0); it is the status poll's one parameter."""
    for name in args:
        if name != "wait":
            raise HubError(
                "invalid_argument", f"query {name[:64]}: the status poll takes only wait", details={"field": name[:64]}
            )
    wait = args.get("wait", 0)
    if not 0 <= wait <= STATUS_WAIT_MAX:
        raise HubError(
            "invalid_argument", f"query wait must be between 0 and {STATUS_WAIT_MAX}", details={"field": "wait"}
        )
    return int(wait)


@bp.post("/<agent_id>/approve")
async def approve(agent_id: str) -> Response:
    req = parse(EnrolDecision, {**await json_body(default={}), "agent_id": agent_id})
    return json_response(await hub().enrolment.decide(caller(), req, "approve"))


@bp.post("/<agent_id>/refuse")
async def refuse(agent_id: str) -> Response:
    req = parse(EnrolDecision, {**await json_body(default={}), "agent_id": agent_id})
    return json_response(await hub().enrolment.decide(caller(), req, "decline"))
