"""`/api/v1/feed` and the per-project feed routes: pages, the seen cursor, ideas, stats."""

from __future__ import annotations

from typing import Any

from quart import Blueprint, Response

from hubcore.errors import HubError
from hubcore.services.events import KINDS
from hubcore.services.feed import FeedPage, FeedRead, FeedSeen
from hubcore.services.posts import IdeaPost
from hubcore.services.requests import parse
from hubhttp.api.query import merged, query
from hubhttp.context import caller, hub, json_body, json_response

bp = Blueprint("feed", __name__, url_prefix="/api/v1")


def page_query() -> dict[str, Any]:
    """The page members of the query string, typed as the model takes them (`hubhttp.api.query`):
    `kind` may repeat (each value one kind) or list kinds separated by commas; an empty `since`
    is a cursor like any other, and refused (an event id is never empty)."""
    out = query(integers=("limit",), repeats=("kind",))
    kinds = out.get("kind")
    if isinstance(kinds, list):  # repeated: the document's array form, each value exactly one kind
        for kind in kinds:
            if kind not in KINDS:
                raise HubError(
                    "invalid_argument",
                    f"kind {kind[:64]!r}: a repeated kind names one kind each",
                    details={"field": "kind"},
                )
    return out


@bp.get("/feed")
async def global_feed() -> Response:
    return json_response(await hub().feed.global_feed(caller(), parse(FeedPage, page_query())))


@bp.get("/projects/<project_id>/feed")
async def project_feed(project_id: str) -> Response:
    req = parse(FeedRead, merged(page_query(), {"project_id": project_id}))
    return json_response(await hub().feed.project_feed(caller(), req))


@bp.post("/projects/<project_id>/feed/seen")
async def feed_seen(project_id: str) -> Response:
    req = parse(FeedSeen, {**await json_body(default={}), "project_id": project_id})
    return json_response(await hub().feed.seen(caller(), req))


@bp.post("/projects/<project_id>/ideas")
async def post_idea(project_id: str) -> Response:
    req = parse(IdeaPost, {**await json_body(), "project_id": project_id})
    result = await hub().posts.idea(caller(), req)
    return json_response({"id": result["id"]}, 201)  # the spec's member; no second name


@bp.get("/projects/<project_id>/stats")
async def project_stats(project_id: str) -> Response:
    return json_response(await hub().feed.stats(caller(), project_id))
