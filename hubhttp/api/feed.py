"""`/api/v1/feed` and the per-project feed routes: pages, the seen cursor, ideas, stats."""

from __future__ import annotations

from typing import Any

from quart import Blueprint, Response, request

from hubcore.errors import HubError
from hubcore.services.feed import FeedPage, FeedRead, FeedSeen
from hubcore.services.posts import IdeaPost
from hubcore.services.requests import parse
from hubhttp.context import caller, hub, json_body, json_response

bp = Blueprint("feed", __name__, url_prefix="/api/v1")


def optional_int(name: str) -> int | None:
    """An integer query parameter, None when absent; the service checks its range."""
    raw = request.args.get(name)
    if raw is None or raw == "":
        return None
    try:
        return int(raw)
    except ValueError:
        raise HubError("invalid_argument", f"query {name} must be an integer") from None


def page_query() -> dict[str, Any]:
    """The page members of the query string (typed as the model takes them); an empty cursor
    reads as absent, and `kind` may repeat."""
    args = request.args
    kinds = [k for value in args.getlist("kind") for k in value.split(",")]
    query = {"since": args.get("since") or None, "before": args.get("before") or None, "kind": kinds or None,
             "session_id": args.get("session_id"), "limit": optional_int("limit")}
    return {name: value for name, value in query.items() if value is not None}


@bp.get("/feed")
async def global_feed() -> Response:
    return json_response(await hub().feed.global_feed(caller(), parse(FeedPage, page_query())))


@bp.get("/projects/<project_id>/feed")
async def project_feed(project_id: str) -> Response:
    req = parse(FeedRead, {**page_query(), "project_id": project_id})
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
