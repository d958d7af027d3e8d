"""Handler helpers: the hub, the caller, JSON in and out."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import orjson
from quart import Response, current_app, request

from hubcore.caller import Caller
from hubcore.errors import HubError
from hubcore.hub import Hub

HUB_KEY = "agent_hub"


def hub() -> Hub:
    found: Hub = current_app.extensions[HUB_KEY]
    return found


def caller() -> Caller:
    found = request.scope.get("hub.caller")
    return found if isinstance(found, Caller) else Caller.public()


def json_response(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(orjson.dumps(data), status=status, mimetype="application/json", headers=headers)


def no_content() -> Response:
    return Response(b"", status=204)


async def json_body(*, default: Mapping[str, Any] | None = None) -> Mapping[str, Any]:
    """The JSON object body; `default` when there is none (None means a body is required).

    Every body the REST API takes is an object, so anything else is refused here, once.
    """
    raw = await request.get_data(as_text=False)
    if not raw.strip():
        if default is not None:
            return default
        raise HubError("invalid_argument", "this route needs a JSON object body")
    try:
        parsed = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise HubError("invalid_argument", f"the body is not valid JSON: {exc}") from None
    if isinstance(raw, bytes) and WIDE_INTEGER.search(raw):
        parsed = _exact(raw)
    if not isinstance(parsed, dict):
        raise HubError("invalid_argument", "request body must be a JSON object")
    return parsed


async def no_members() -> None:
    """For an action that takes no body: none, or `{}`. A body that does not parse, is not an
    object, or holds a member is refused (400) before anything is done."""
    body = await json_body(default={})
    if body:
        name = next(iter(body))
        raise HubError(
            "invalid_argument",
            f"{str(name)[:64]}: unknown member (this route takes no body members)",
            details={"field": str(name)[:64]},
        )


# orjson reads an integer literal beyond 64 bits as a float, silently losing it; a body holding a
# digit run that long is read again keeping integers exact, so the services refuse such a number
# (naming the member) exactly as they do when it arrives over MCP.
WIDE_INTEGER = re.compile(rb"\d{20,}")


def _exact(raw: bytes) -> Any:
    def refuse(constant: str) -> Any:
        raise HubError("invalid_argument", f"the body is not valid JSON: {constant} is not a JSON number")

    try:
        return json.loads(raw, parse_constant=refuse)
    except RecursionError:
        raise HubError("invalid_argument", "the body is nested too deeply") from None
