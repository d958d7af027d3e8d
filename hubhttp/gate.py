"""The global HTTP rules, applied before any handler sees a request.

In order: an unreadable path or query string is 400; the admin gate answers 401 before a byte of
the body is read; a body that is not JSON (where JSON is required) is 415; a body over 4 MiB is 413,
decided from Content-Length when present and otherwise while streaming, so nothing past the limit is
ever buffered and no handler runs. The resolved `Caller` rides in the ASGI scope under `hub.caller`.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, MutableMapping
from enum import Enum
from typing import Any
from urllib.parse import parse_qsl, unquote_to_bytes

from hubcore.caller import Caller
from hubcore.errors import HubError
from hubcore.hub import Hub
from hubhttp.problems import send_problem

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

MAX_BODY = 4 * 1024 * 1024
BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
PAGE_WRITE_RE = re.compile(r"^/api/v1/projects/[^/]+/kb/pages/.+$")
PAGE_TYPES = ("application/json", "text/markdown", "text/plain")


class Access(Enum):
    PUBLIC = "public"
    TOKEN = "token"  # the admin token or any active agent token
    ADMIN = "admin"


def access_for(path: str, method: str) -> Access:
    """Who may call a route. Unknown paths under the gated prefixes are gated too, so probing the
    control surface without a token learns nothing."""
    if path == "/mcp" or path.startswith("/mcp/"):
        return Access.TOKEN
    if path == "/metrics":
        return Access.ADMIN
    if not path.startswith("/api/"):
        return Access.PUBLIC
    if path in ("/api/v1/enrol", "/api/v1/enrol/status"):
        return Access.PUBLIC
    if path in ("/api/v1/projects", "/api/v1/stream"):
        return Access.TOKEN
    return Access.ADMIN


def _bad(message: str) -> HubError:
    return HubError("invalid_argument", message)


def check_target(scope: Scope) -> None:
    """400 for a path or query string that does not decode."""
    raw_path: bytes = scope.get("raw_path") or scope["path"].encode("utf-8", "surrogateescape")
    try:
        decoded = unquote_to_bytes(raw_path.split(b"?", 1)[0]).decode("utf-8")
    except UnicodeDecodeError:
        raise _bad("the request path is not valid UTF-8") from None
    if any(ord(c) < 0x20 or c == "\x7f" for c in decoded):
        raise _bad("the request path holds a control character")
    query: bytes = scope.get("query_string", b"")
    try:
        parse_qsl(query.decode("ascii"), keep_blank_values=True, errors="strict")
    except (UnicodeDecodeError, ValueError):
        raise _bad("the query string cannot be read") from None


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


def _declared_length(scope: Scope) -> int | None:
    raw = _header(scope, b"content-length")
    if raw is None:
        return None
    if not raw.strip().isdigit():
        raise _bad("Content-Length is not a number")
    return int(raw)


def _has_body(scope: Scope) -> bool:
    length = _declared_length(scope)
    if length is not None:
        return length > 0
    return _header(scope, b"transfer-encoding") is not None


def check_content_type(scope: Scope) -> None:
    if scope["method"] not in BODY_METHODS or not _has_body(scope):
        return
    path = scope["path"]
    if path == "/mcp":
        return  # the MCP transport answers its own content-type errors
    media = (_header(scope, b"content-type") or "").split(";", 1)[0].strip().lower()
    allowed = PAGE_TYPES if scope["method"] == "PUT" and PAGE_WRITE_RE.match(path) else PAGE_TYPES[:1]
    if media not in allowed:
        raise HubError(
            "invalid_argument",
            f"the body must be sent as {' or '.join(allowed)}",
            status=415,
        )


def too_large() -> HubError:
    return HubError("payload_too_large", f"the request body is over the {MAX_BODY}-byte limit")


async def read_capped(receive: Receive, limit: int) -> bytes:
    """The whole body, or `payload_too_large` as soon as it passes `limit` (the rest is not read)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise HubError("invalid_argument", "the client went away before sending its body")
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise too_large()
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def replay(body: bytes, receive: Receive) -> Receive:
    """A `receive` that hands over the already-read body, then defers to the real one."""
    sent = False

    async def inner() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return inner


class Gate:
    """ASGI middleware enforcing the global rules in front of `app`."""

    def __init__(self, app: ASGIApp, hub: Callable[[], Hub]) -> None:
        self.app = app
        self.hub = hub

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        hub = self.hub()
        try:
            check_target(scope)
            caller = await self._caller(hub, scope)
            check_content_type(scope)
            length = _declared_length(scope)
            if length is not None and length > MAX_BODY:
                raise too_large()
            if scope["method"] in BODY_METHODS and _has_body(scope):
                receive = replay(await read_capped(receive, MAX_BODY), receive)
        except HubError as err:
            await send_problem(send, err, hub.metrics)
            return
        scope["hub.caller"] = caller
        await self.app(scope, receive, send)

    async def _caller(self, hub: Hub, scope: Scope) -> Caller:
        needed = access_for(scope["path"], scope["method"])
        caller = await hub.auth.resolve(_header(scope, b"authorization"))
        if needed is Access.ADMIN and (caller is None or not caller.is_admin):
            raise HubError("unauthenticated", "this route needs the admin token")
        if needed is Access.TOKEN and caller is None:
            raise HubError("unauthenticated", "this route needs an agent token or the admin token")
        return caller or Caller.public()
