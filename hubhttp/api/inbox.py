"""`/api/v1/inbox`, question answers and approval decisions: the human in the loop."""

from __future__ import annotations

from quart import Blueprint, Response

from hubcore.services.inbox import InboxList, InboxMark, ReadAll
from hubcore.services.requests import parse
from hubcore.services.resolutions import AnswerPost, DecisionPost
from hubhttp.api.query import query
from hubhttp.context import caller, hub, json_body, json_response

bp = Blueprint("inbox", __name__, url_prefix="/api/v1")


@bp.get("/inbox")
async def list_inbox() -> Response:
    # The query typed as the model takes it (`hubhttp.api.query`); the model refuses an empty value.
    req = parse(InboxList, query(integers=("limit",), flags=("unread_only", "settled")))
    return json_response(await hub().inbox.list_items(caller(), req))


@bp.post("/inbox/read-all")
async def read_all() -> Response:
    req = parse(ReadAll, await json_body(default={}))
    return json_response(await hub().inbox.read_all(caller(), req))


@bp.post("/inbox/<event_id>/read")
async def mark_read(event_id: str) -> Response:
    return json_response(await hub().inbox.mark(caller(), parse(InboxMark, {"event_id": event_id}), "read"))


@bp.post("/inbox/<event_id>/unread")
async def mark_unread(event_id: str) -> Response:
    return json_response(await hub().inbox.mark(caller(), parse(InboxMark, {"event_id": event_id}), "unread"))


@bp.post("/questions/<question_id>/answer")
async def answer(question_id: str) -> Response:
    req = parse(AnswerPost, {**await json_body(), "question_id": question_id})
    return json_response(await hub().resolutions.answer(caller(), req))


@bp.post("/approvals/<approval_id>/decision")
async def decide(approval_id: str) -> Response:
    req = parse(DecisionPost, {**await json_body(), "approval_id": approval_id})
    return json_response(await hub().resolutions.decide(caller(), req))


@bp.get("/home")
async def home() -> Response:
    return json_response(await hub().home.home(caller()))
