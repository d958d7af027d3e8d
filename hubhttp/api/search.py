"""REST search: `GET /api/v1/search` (the admin's control surface; agents search over MCP)."""

from __future__ import annotations

from quart import Blueprint, Response

from hubcore.services.requests import parse
from hubcore.services.search.models import SearchRequest
from hubhttp.api.query import query
from hubhttp.context import caller, hub, json_response

bp = Blueprint("search", __name__, url_prefix="/api/v1")


@bp.get("/search")
async def search() -> Response:
    """Every query parameter goes to the model, so an unknown one is refused (400) like a bad value."""
    req = parse(SearchRequest, query(integers=("limit",)))  # an empty value is judged like any other
    return json_response(await hub().search.search(caller(), req))
