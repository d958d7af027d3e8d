"""`/api/v1/enrol`: self-enrolment (public), and the admin's approve and refuse.

The ask and the status poll are public routes: the gate lets them through without a token, and the
status poll reads the pending token itself (every other route refuses it as an unknown token). The
per-peer limit keys on the socket peer, or on the hop a `trust_proxy` proxy appended
(`EnrolmentService.peer`).
"""

from __future__ import annotations

from quart import Blueprint, Response, request

from hubcore.services.auth import bearer
from hubcore.services.enrolment import STATUS_WAIT_MAX, EnrolDecision, EnrolRequest
from hubcore.services.requests import parse
from hubhttp.context import caller, hub, json_body, json_response, query_int

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
    wait = query_int("wait", 0, maximum=STATUS_WAIT_MAX)
    token = bearer(request.headers.get("Authorization"))
    return json_response(await hub().enrolment.status(token, wait), headers={"Cache-Control": "no-store"})


@bp.post("/<agent_id>/approve")
async def approve(agent_id: str) -> Response:
    req = parse(EnrolDecision, {**await json_body(default={}), "agent_id": agent_id})
    return json_response(await hub().enrolment.decide(caller(), req, "approve"))


@bp.post("/<agent_id>/refuse")
async def refuse(agent_id: str) -> Response:
    req = parse(EnrolDecision, {**await json_body(default={}), "agent_id": agent_id})
    return json_response(await hub().enrolment.decide(caller(), req, "decline"))
