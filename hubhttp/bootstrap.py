"""`GET /bootstrap/SKILL.md`: the public bootstrap guide, with the caller's own origin in it.

The origin is the request's scheme and Host, or the forwarded ones when the socket peer is listed
in `trust_proxy`. The renderer is injected by the composition root (hubhttp does not import hubmcp).
"""

from __future__ import annotations

from collections.abc import Callable

from quart import Blueprint, Response, current_app, request

from hubcore.origin import request_origin
from hubhttp.context import hub

bp = Blueprint("bootstrap", __name__)

RENDERER_KEY = "bootstrap_renderer"


def caller_origin() -> str:
    scope = request.scope
    client = scope.get("client")
    settings = hub().settings
    return request_origin(
        scheme=str(scope.get("scheme", "http")),
        headers={k.lower(): v for k, v in request.headers.items()},
        peer=client[0] if client else None,
        trust_proxy=settings.trust_proxy,
        fallback_host=settings.bind,
    )


@bp.get("/bootstrap/SKILL.md")
async def bootstrap_skill() -> Response:
    render: Callable[[str], str] = current_app.extensions[RENDERER_KEY]
    body = render(caller_origin())
    return Response(
        body, status=200, content_type="text/markdown; charset=utf-8", headers={"Cache-Control": "no-cache"}
    )
