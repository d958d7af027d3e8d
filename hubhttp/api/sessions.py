"""`/api/v1/sessions`: the human's view of sessions and their brains."""

from __future__ import annotations

from typing import Any

from quart import Blueprint, Response

from hubcore.services.brains import BrainGet, BrainList
from hubcore.services.requests import parse
from hubcore.services.sessions import SessionEnd, SessionPage, SessionReassign
from hubhttp.api.query import merged, query
from hubhttp.context import caller, hub, json_body, json_response

bp = Blueprint("sessions", __name__, url_prefix="/api/v1/sessions")


@bp.get("")
async def list_sessions() -> Response:
    req = parse(SessionPage, query(integers=("limit",)))  # an empty `project=` is refused there
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
    req = parse(SessionReassign, {**await json_body(), "session_id": session_id})
    return json_response(await hub().sessions.reassign(caller(), req))


def brain_query() -> dict[str, Any]:
    """The members of a brain read a query string carries (`path`, `store`); the session is the
    path's, so a `session_id` in the query is refused as named twice."""
    return query()


@bp.get("/<session_id>/brain")
async def brain_level(session_id: str) -> Response:
    req = parse(BrainList, merged(brain_query(), {"session_id": session_id}))
    return json_response(await hub().brains.list_entries(caller(), req))


@bp.get("/<session_id>/brain/entry")
async def brain_entry(session_id: str) -> Response:
    req = parse(BrainGet, merged(brain_query(), {"session_id": session_id}))
    return json_response(await hub().brains.read_entry(caller(), req))


@bp.get("/<session_id>/replay")
async def replay(session_id: str) -> Response:
    return json_response(await hub().brains.replay(caller(), session_id))
