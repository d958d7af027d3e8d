"""`/api/v1/sessions`: the human's view of sessions and their brains."""

from __future__ import annotations

from quart import Blueprint, Response, request

from hubcore.services.requests import parse
from hubcore.services.sessions import SessionEnd, SessionPage, SessionRef
from hubhttp.api.feed import optional_int
from hubhttp.context import caller, hub, json_body, json_response

bp = Blueprint("sessions", __name__, url_prefix="/api/v1/sessions")


@bp.get("")
async def list_sessions() -> Response:
    query = {"project": request.args.get("project") or None, "limit": optional_int("limit")}
    req = parse(SessionPage, {name: value for name, value in query.items() if value is not None})
    return json_response(await hub().sessions.list(caller(), req.listing()))


@bp.get("/<session_id>")
async def get_session(session_id: str) -> Response:
    return json_response(await hub().sessions.get(caller(), session_id))


@bp.post("/<session_id>/end")
async def end_session(session_id: str) -> Response:
    req = parse(SessionEnd, {**await json_body(default={}), "session_id": session_id})
    return json_response(await hub().sessions.end(caller(), req))


@bp.post("/<session_id>/reassign")
async def reassign_session(session_id: str) -> Response:
    return json_response(await hub().sessions.reassign(caller(), session_id, await json_body()))


@bp.get("/<session_id>/brain")
async def brain_level(session_id: str) -> Response:
    path = request.args.get("path", "/fs/")
    return json_response(await hub().brains.list(caller(), SessionRef(session_id=session_id), path))


@bp.get("/<session_id>/brain/entry")
async def brain_entry(session_id: str) -> Response:
    path = request.args.get("path", "")
    return json_response(await hub().brains.get(caller(), SessionRef(session_id=session_id), path))


@bp.get("/<session_id>/replay")
async def replay(session_id: str) -> Response:
    return json_response(await hub().brains.replay(caller(), session_id))
