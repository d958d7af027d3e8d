"""The global HTTP rules, applied before any handler sees a request.

In order: an unreadable path or query string is 400, and so is any target but an origin-form path
with single slashes and no dot segments (refused, not normalised: what is checked is then exactly what
the router dispatches on); the admin gate answers 401 before a byte of the body is read, judging the
route that will actually run (`hubhttp.routing`); a body that is not JSON (where JSON is required) is
415; a body over 4 MiB is 413, decided from Content-Length when present and otherwise while
streaming, so nothing past the limit is ever buffered and no handler runs; a body that arrives slower
than the floor pace is 408. A refusal sent while a body is still unread says `Connection: close` on
HTTP/1.x, so the unread bytes are never parsed as a next request. The resolved `Caller` rides in the
ASGI scope under `hub.caller`.
"""

from __future__ import annotations

import asyncio
import math
import re
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, unquote_to_bytes

import anyio
import orjson

from hubcore.caller import Caller
from hubcore.config import HubSettings
from hubcore.errors import HubError
from hubcore.hub import Hub
from hubcore.services import validate
from hubhttp.problems import count_failure, send_problem
from hubhttp.routing import Access

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

MAX_BODY = 4 * 1024 * 1024
BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
PAGE_WRITE_RE = re.compile(r"^/api/v1/projects/[^/]+/kb/pages/.+$")
PAGE_TYPES = ("application/json", "text/markdown", "text/plain")


AccessRule = Callable[[Scope], Access]


def _bad(message: str) -> HubError:
    return HubError("invalid_argument", message)


# A target of these bytes only decodes to itself: no percent escape, no control character, no
# byte outside ASCII. The common case, checked by one match instead of a decode and a scan.
PLAIN_TARGET = re.compile(rb"[A-Za-z0-9/\-._~!$&'()*+,;=:@]*")


def check_target(scope: Scope) -> None:
    """400 for a path or query string that does not decode, or a target not in canonical form."""
    raw_path: bytes = scope.get("raw_path") or scope["path"].encode("utf-8", "surrogateescape")
    raw_target = raw_path.split(b"?", 1)[0]
    query: bytes = scope.get("query_string", b"")
    if PLAIN_TARGET.fullmatch(raw_target) and scope["path"] == raw_target.decode("ascii"):
        if not canonical(raw_target):
            raise _bad(NOT_CANONICAL)
        if query and not PLAIN_TARGET.fullmatch(query):
            _check_query(query)
        return
    try:
        decoded = unquote_to_bytes(raw_target).decode("utf-8")
    except UnicodeDecodeError:
        raise _bad("the request path is not valid UTF-8") from None
    if not validate.is_label(decoded):  # C0, DEL, C1, U+2028 and U+2029: what no path value may hold
        raise _bad("the request path holds a control character or a line separator")
    if not (canonical(raw_target) and canonical(str(scope["path"]).encode("utf-8", "surrogateescape"))):
        raise _bad(NOT_CANONICAL)
    _check_query(query)


NOT_CANONICAL = (
    "the request target must be a path starting with one '/', with single slashes, "
    "no '.' or '..' segments and no encoded slashes"
)


def _check_query(query: bytes) -> None:
    try:
        parse_qsl(query.decode("ascii"), keep_blank_values=True, errors="strict")
    except (UnicodeDecodeError, ValueError):
        raise _bad("the query string cannot be read") from None


def canonical(target: bytes) -> bool:
    """An origin-form path with single slashes: no absolute form, no empty segment before the last,
    no dot segment (plain or percent-encoded), no percent-encoded slash. Such targets are refused
    rather than normalised, so the path the gate judges is the path the router dispatches on."""
    if not target.startswith(b"/") or b"//" in target:
        return False
    if b"%" not in target and b"/." not in target:
        return True  # nothing encoded and no segment starting with a dot: the common case
    for segment in target[1:].split(b"/"):
        plain = unquote_to_bytes(segment)
        if plain in (b".", b"..") or b"/" in plain:
            return False
    return True


Heads = dict[bytes, str]
GATE_HEADERS = frozenset({b"authorization", b"content-length", b"content-type", b"transfer-encoding"})


def gate_headers(scope: Scope) -> Heads:
    """The headers the gate reads (the first of each name), found in one pass."""
    found: Heads = {}
    for key, value in scope.get("headers", ()):
        name = key.lower()
        if name in GATE_HEADERS and name not in found:
            found[name] = bytes(value).decode("latin-1")
    return found


def _declared_length(heads: Heads) -> int | None:
    raw = heads.get(b"content-length")
    if raw is None:
        return None
    if not raw.strip().isdigit():
        raise _bad("Content-Length is not a number")
    return int(raw)


def _has_body(heads: Heads, length: int | None) -> bool:
    """Whether body bytes follow, given the declared length (`_declared_length`)."""
    if length is not None:
        return length > 0
    return b"transfer-encoding" in heads


def check_content_type(scope: Scope, heads: Heads, has_body: bool) -> None:
    if scope["method"] not in BODY_METHODS or not has_body:
        return
    path = scope["path"]
    if path == "/mcp":
        return  # the MCP transport answers its own content-type errors
    media = heads.get(b"content-type", "").split(";", 1)[0].strip().lower()
    allowed = PAGE_TYPES if scope["method"] == "PUT" and PAGE_WRITE_RE.match(path) else PAGE_TYPES[:1]
    if media not in allowed:
        raise HubError(
            "invalid_argument",
            f"the body must be sent as {' or '.join(allowed)}",
            status=415,
        )


def too_large() -> HubError:
    return HubError("payload_too_large", f"the request body is over the {MAX_BODY}-byte limit")


@dataclass(frozen=True)
class BodyPace:
    """The slowest body the hub waits for. A body is cut when no byte arrives for `idle_secs`, or
    when fewer than `min_rate` bytes a second have arrived on average since reading began, the first
    `idle_secs` being free: a slow start or a stall is forgiven as long as the idle rule would
    forgive it, while a trickle of one byte just inside the idle window is still cut. Zero turns a
    rule off."""

    idle_secs: float
    min_rate: float

    @classmethod
    def from_settings(cls, settings: HubSettings) -> BodyPace:
        return cls(settings.body_idle_secs, settings.body_min_rate)

    def deadline(self, started: float, last: float, size: int) -> float:
        """The moment the body becomes too slow if nothing more arrives."""
        by_rate = started + self.idle_secs + size / self.min_rate if self.min_rate > 0 else math.inf
        by_idle = last + self.idle_secs if self.idle_secs > 0 else math.inf
        return min(by_idle, by_rate)


def too_slow(pace: BodyPace) -> HubError:
    return HubError(
        "invalid_argument",
        f"the request body arrived too slowly (nothing for {pace.idle_secs:g} s, or under "
        f"{pace.min_rate:g} bytes a second on average)",
        status=408,
    )


async def read_capped(receive: Receive, limit: int, pace: BodyPace) -> bytes:
    """The whole body; `payload_too_large` as soon as it passes `limit`, or the 408 refusal as soon
    as it falls behind `pace` (the rest is not read)."""
    loop = _asyncio_loop()
    # anyio's clock under asyncio is the loop's own: read it directly (anyio first asks sniffio
    # which library runs, on every call).
    clock = loop.time if loop is not None else anyio.current_time
    chunks: list[bytes] = []
    size = 0
    started = last = clock()
    held = _held_messages(receive)
    while True:
        message: Message | None
        if held is not None and held.qsize():
            message = held.get_nowait()  # already here: no deadline to watch
        else:
            deadline = pace.deadline(started, last, size)
            if loop is not None and math.isfinite(deadline):
                message = await _receive_by_asyncio(loop, receive, deadline)
            else:
                message = await _receive_by(receive, deadline)
            if message is None:
                raise too_slow(pace)
        if message["type"] == "http.disconnect":
            raise HubError("invalid_argument", "the client went away before sending its body")
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise too_large()
        if chunk:
            last = clock()
        chunks.append(chunk)
        if not message.get("more_body", False):
            return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _held_messages(receive: Receive) -> asyncio.Queue[Message] | None:
    """The queue behind `receive` when it is an asyncio queue's `get` (Hypercorn's is: the server
    puts a request's body there as it parses it). A small body is usually all there by the time
    the gate reads it, and taking it from the queue needs no timer (arming and cancelling the
    pace's timer for each message was about 5% of a no-op request's instructions;
    docs/benchmarks.md, fourteenth session). Any other `receive` is awaited under the pace."""
    queue = getattr(receive, "__self__", None)
    return queue if type(queue) is asyncio.Queue else None


def _asyncio_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:  # trio (the body pace tests run there under a virtual clock)
        return None


async def _receive_by(receive: Receive, deadline: float) -> Message | None:
    """The next message, or None once `deadline` (anyio's clock) passes first."""
    with anyio.move_on_after(deadline - anyio.current_time()) as timer:
        return await receive()
    assert timer.cancelled_caught
    return None


async def _receive_by_asyncio(loop: asyncio.AbstractEventLoop, receive: Receive, deadline: float) -> Message | None:
    """`_receive_by` under asyncio (how the hub is served): a timer on the loop's own clock cancels
    the waiting task; an anyio cancel scope (or `asyncio.timeout`) costs every request's body read
    several times as much."""
    task = asyncio.current_task()
    assert task is not None
    expired = False

    def expire() -> None:
        nonlocal expired
        expired = True
        task.cancel()

    timer = loop.call_at(deadline, expire)
    try:
        return await receive()
    except asyncio.CancelledError:
        if expired and task.uncancel() == 0:  # our own timer, and nobody else cancelled too
            return None
        raise
    finally:
        timer.cancel()


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


def _closing(send: Send) -> Send:
    """`send` with `Connection: close` on the response: the request's body is not (all) read, and
    the connection must not go on to parse what is left of it as a next request."""

    async def inner(message: Message) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", []), (b"connection", b"close")]}
        await send(message)

    return inner


def _body_expected(heads: Heads) -> bool:
    try:
        return _has_body(heads, _declared_length(heads))
    except HubError:
        return True  # an unreadable Content-Length: assume bytes follow


MCP_PATH = "/mcp"
# OAuth discovery documents (RFC 9728 protected resource, RFC 8414 authorization server) that MCP
# clients look for after a 401: the hub offers no OAuth, and a 404 lets them fail fast instead of
# reporting a bare "error response".
OAUTH_DISCOVERY = (
    "/.well-known/oauth-protected-resource",
    "/.well-known/oauth-authorization-server",
    "/.well-known/openid-configuration",
)
NO_OAUTH = "this hub offers no OAuth; /mcp takes a bearer token the human issues (an agent token)"
MCP_TOKEN_REFUSED = -32001


async def send_mcp_refusal(send: Send, err: HubError, metrics: Any) -> None:
    """A refused token on /mcp: 401 with a JSON-RPC error body. The MCP SDK clients surface a
    JSON-RPC error found in a non-2xx JSON body (and show only "Server returned an error response"
    for a problem document), so the person running the agent reads why. The id is null: the
    request was refused before its body was read."""
    message = (
        "unauthenticated: the hub refused the bearer token (missing, unknown, revoked or not yet "
        "approved); /mcp takes an agent token the human issues, and this hub offers no OAuth"
    )
    body = orjson.dumps(
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {
                "code": MCP_TOKEN_REFUSED,
                "message": message,
                "data": {"error": {"code": err.code, "message": err.message, "retryable": False, "details": {}}},
            },
        }
    )
    count_failure(metrics, err.code)
    await send(
        {
            "type": "http.response.start",
            "status": 401,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"www-authenticate", b'Bearer realm="agent-hub", error="invalid_token"'),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class Gate:
    """ASGI middleware enforcing the global rules in front of `app`. `access` names the access
    the route the request will reach needs (see `hubhttp.routing.RouteAccess`)."""

    def __init__(self, app: ASGIApp, hub: Callable[[], Hub], access: AccessRule) -> None:
        self.app = app
        self.hub = hub
        self.access = access
        self._pace: tuple[HubSettings | None, BodyPace] = (None, BodyPace(0, 0))  # per settings, once

    def _pace_of(self, settings: HubSettings) -> BodyPace:
        if self._pace[0] is not settings:
            self._pace = (settings, BodyPace.from_settings(settings))
        return self._pace[1]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        hub = self.hub()
        heads = gate_headers(scope)
        try:
            check_target(scope)
            caller = await self._caller(hub, scope, heads)
            length = _declared_length(heads)
            has_body = _has_body(heads, length)
            check_content_type(scope, heads, has_body)
            if length is not None and length > MAX_BODY:
                raise too_large()
            if has_body and scope["method"] in BODY_METHODS:
                body = await read_capped(receive, MAX_BODY, self._pace_of(hub.settings))
                receive = replay(body, receive)
        except HubError as err:
            if _body_expected(heads) and scope.get("http_version", "1.1") in ("1.0", "1.1"):
                send = _closing(send)  # HTTP/2 has no such header: its stream simply ends
            if scope["path"] == MCP_PATH and err.code == "unauthenticated":
                await send_mcp_refusal(send, err, hub.metrics)
            else:
                await send_problem(send, err, hub.metrics)
            return
        scope["hub.caller"] = caller
        await self.app(scope, receive, send)

    async def _caller(self, hub: Hub, scope: Scope, heads: Heads) -> Caller:
        if scope["path"].startswith(OAUTH_DISCOVERY):
            raise HubError("not_found", NO_OAUTH)
        needed = self.access(scope)
        caller = await hub.auth.resolve(heads.get(b"authorization"))
        if needed is Access.ADMIN and (caller is None or not caller.is_admin):
            raise HubError("unauthenticated", "this route needs the admin token")
        if needed is Access.TOKEN and caller is None:
            raise HubError("unauthenticated", "this route needs an agent token or the admin token")
        return caller or Caller.public()
