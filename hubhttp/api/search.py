"""REST search: `GET /api/v1/search` (the admin's control surface; agents search over MCP)."""

from __future__ import annotations

from quart import Blueprint, Response, request

from hubcore.services.requests import parse
from hubcore.services.search.models import SearchRequest
from hubhttp.api.feed import optional_int
from hubhttp.context import caller, hub, json_response

bp = Blueprint("search", __name__, url_prefix="/api/v1")


@bp.get("/search")
async def search() -> Response:
    """Every query parameter goes to the model, so an unknown one is refused (400) like a bad value."""
    query: dict[str, object] = {name: request.args.get(name) for name in request.args}
    if "limit" in query:
        query["limit"] = optional_int("limit")
    req = parse(SearchRequest, {name: value for name, value in query.items() if value not in (None, "")})
    return json_response(await hub().search.search(caller(), req))
