"""Reply framing inside a handshake-era (2025-11-25 and earlier) session: one JSON body or a stream.

Streamable HTTP lets the server pick, per POST, between one `application/json` body and an SSE
stream. The SDK's session transport picks once, for the whole session (`is_json_response_enabled`).
A streamed reply costs a task group, an SSE writer, a disconnect watcher and keep-alive pings, and a
call that answers at once gains nothing from them; a wait does (its progress notifications and pings
ride the stream, and a client that resets its timeout on progress stays patient). So a session's
transport here answers each request with JSON unless it is a call to a waiting tool, which keeps the
stream, as every request did before.

Three hooks of the SDK's `StreamableHTTPServerTransport` (mcp 2.3), none forked:
- `is_json_response_enabled` becomes a property read from a context variable the POST handler sets
  for its own request: the SDK reads the attribute in that request's task (the branch between the
  two framings, and `can_send_request` in the message metadata), and concurrent requests of one
  session must not see each other's choice, so an instance attribute would not do.
- `connect()` hands the server a write stream that drops any message tied to a request answered as
  JSON but its response: a JSON body carries only the response, and the SDK's router (a task of its
  own, where the context variable says nothing) would otherwise queue a stray notification as that
  request's answer. The hub's quick calls send none; this keeps that a rule, not a hope.
- `_validate_accept_header` judges the Accept header as for a stream: a client cannot know which
  framing a call gets, so it must still accept both, as it did before.
- `_create_json_response` encodes a result response with orjson (`response_body`), the same bytes
  as the SDK's pydantic encoding at a fraction of its walk over a large result.
The session manager builds its transports in `_admit_session`, with no factory to pass; the subclass
below builds this transport the same way.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from contextvars import ContextVar
from http import HTTPStatus
from types import TracebackType
from typing import Any, ClassVar
from uuid import uuid4

import orjson
from mcp.server.auth.middleware.bearer_auth import AuthorizationContext
from mcp.server.streamable_http import (
    CONTENT_TYPE_JSON,
    MCP_SESSION_ID_HEADER,
    StreamableHTTPServerTransport,
)
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.shared._stream_protocols import ReadStream, WriteStream
from mcp.shared.message import ServerMessageMetadata, SessionMessage
from mcp_types import JSONRPCError, JSONRPCMessage, JSONRPCResponse
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

_Streams = tuple[ReadStream[SessionMessage | Exception], WriteStream[SessionMessage]]


def json_request_id(body: bytes, waiting_tools: frozenset[str]) -> str | None:
    """The id (as the SDK's router keys it) of a request to answer with one JSON body: any
    request but a call to a waiting tool. None for a notification, a response, a wait, or a body
    that is not one JSON-RPC request: those keep the SDK's default (the stream), and the SDK
    itself refuses what is malformed."""
    try:
        message = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(message, dict) or not isinstance(message.get("method"), str):
        return None
    request_id = message.get("id")
    if not isinstance(request_id, str | int) or isinstance(request_id, bool):
        return None
    params = message.get("params")
    if message["method"] == "tools/call" and isinstance(params, dict) and params.get("name") in waiting_tools:
        return None
    return str(request_id)


def response_body(message: JSONRPCResponse) -> bytes | None:
    """A result response as the SDK's `model_dump_json(by_alias=True, exclude_unset=True)` writes
    it, encoded by orjson; None for what orjson will not encode (an integer past 64 bits, a lone
    surrogate), left to the SDK. The result is the runner's JSON-mode dump (plain dicts, lists,
    strings, numbers), which both encoders write alike: no spaces, non-ASCII as is, the same
    escapes and float digits (`tests/mcp/test_result_bytes.py` holds them to it)."""
    try:
        return orjson.dumps({"jsonrpc": message.jsonrpc, "id": message.id, "result": message.result})
    except orjson.JSONEncodeError:
        return None


class _JsonOnlyResponses:
    """The server's write stream, less anything tied to a JSON-answered request but its response."""

    def __init__(self, inner: WriteStream[SessionMessage], json_requests: set[str]) -> None:
        self._inner = inner
        self._json_requests = json_requests

    async def send(self, item: SessionMessage, /) -> None:
        metadata = item.metadata
        if (
            not isinstance(item.message, JSONRPCResponse | JSONRPCError)
            and isinstance(metadata, ServerMessageMetadata)
            and metadata.related_request_id is not None
            and str(metadata.related_request_id) in self._json_requests
        ):
            return
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _JsonOnlyResponses:
        return self

    async def __aexit__(
        self, _exc_type: type[BaseException] | None, _exc_val: BaseException | None, _exc_tb: TracebackType | None
    ) -> bool | None:
        await self.aclose()
        return None


class PerRequestFramingTransport(StreamableHTTPServerTransport):
    """A session transport that frames each reply as JSON or as a stream (module docstring)."""

    # Per request, not per session: a context variable is what the request's own task sees.
    _json_reply: ClassVar[ContextVar[bool]] = ContextVar("hub_mcp_json_reply", default=False)

    def __init__(self, *args: Any, waiting_tools: frozenset[str], **kwargs: Any) -> None:
        self._waiting_tools = waiting_tools
        self._json_requests: set[str] = set()  # ids of this session's requests in flight as JSON
        super().__init__(*args, **kwargs)

    @property
    def is_json_response_enabled(self) -> bool:
        return self._json_reply.get()

    @is_json_response_enabled.setter
    def is_json_response_enabled(self, value: bool) -> None:
        """The SDK's constructor sets the session-wide choice; the choice is per request here."""

    async def _handle_post_request(self, scope: Scope, request: Request, receive: Receive, send: Send) -> None:
        # Starlette keeps the body it read: the SDK's own read below returns the same bytes.
        try:
            body = await request.body()
        except ClientDisconnect:  # gone mid-body: the SDK's own read fails too and answers as before
            body = b""
        request_id = json_request_id(body, self._waiting_tools)
        if request_id is None:
            await super()._handle_post_request(scope, request, receive, send)
            return
        token = self._json_reply.set(True)
        self._json_requests.add(request_id)
        try:
            await super()._handle_post_request(scope, request, receive, send)
        finally:
            self._json_requests.discard(request_id)
            self._json_reply.reset(token)

    async def _validate_accept_header(self, request: Request, scope: Scope, send: Send) -> bool:
        token = self._json_reply.set(False)
        try:
            return await super()._validate_accept_header(request, scope, send)
        finally:
            self._json_reply.reset(token)

    def _create_json_response(
        self,
        response_message: JSONRPCMessage | None,
        status_code: HTTPStatus = HTTPStatus.OK,
        headers: dict[str, str] | None = None,
    ) -> Response:
        body = response_body(response_message) if isinstance(response_message, JSONRPCResponse) else None
        if body is None or headers:
            return super()._create_json_response(response_message, status_code, headers)
        response_headers = {"Content-Type": CONTENT_TYPE_JSON}
        if self.mcp_session_id:
            response_headers[MCP_SESSION_ID_HEADER] = self.mcp_session_id
        return Response(body, status_code=status_code, headers=response_headers)

    @asynccontextmanager
    async def connect(self) -> AsyncIterator[_Streams]:
        async with super().connect() as (read_stream, write_stream):
            yield read_stream, _JsonOnlyResponses(write_stream, self._json_requests)


class PerRequestFramingManager(StreamableHTTPSessionManager):
    """The SDK's session manager, building `PerRequestFramingTransport`s for its sessions."""

    def __init__(self, *args: Any, waiting_tools: frozenset[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._waiting_tools = waiting_tools

    def _admit_session(self, requestor: AuthorizationContext | None) -> StreamableHTTPServerTransport | None:
        """The SDK's `_admit_session` (mcp 2.3.0) with this module's transport."""
        if self.max_sessions is not None and len(self._server_instances) >= self.max_sessions:
            return None
        transport = PerRequestFramingTransport(
            mcp_session_id=uuid4().hex,
            is_json_response_enabled=False,
            event_store=self.event_store,
            security_settings=self.security_settings,
            retry_interval=self.retry_interval,
            idle_timeout=self.session_idle_timeout,
            waiting_tools=self._waiting_tools,
        )
        session_id = transport.mcp_session_id
        assert session_id is not None
        if requestor is not None:
            self._session_owners[session_id] = requestor
        self._server_instances[session_id] = transport
        return transport
