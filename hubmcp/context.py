"""What a tool handler gets: the hub, who is calling, over which connection, from which origin."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol

from mcp.server.context import ServerRequestContext
from mcp.shared.jsonrpc_dispatcher import progress_token_from_params
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from hubcore.caller import Caller
from hubcore.errors import HubError
from hubcore.hub import Hub
from hubcore.origin import request_origin
from hubmcp.active import CONNECTION_HEADER, ActiveSessions, ConnectionKey, legacy_key, modern_key
from hubmcp.waits import Report, WaitPolicy


class WorkingSession:
    """The session a call turned out to be made in, when its handler resolved it (a session the
    caller runs): replay records the call there without looking the session up again."""

    __slots__ = ("recorded", "session_id")

    def __init__(self) -> None:
        self.session_id: str | None = None
        self.recorded = False  # the handler recorded the call itself (session_end)


@dataclass(frozen=True)
class CallContext:
    hub: Hub
    caller: Caller
    # None: the request carries no connection identity, so it has no implicit active session.
    connection: ConnectionKey | None
    sessions: ActiveSessions
    # Works out `origin`; few calls need it, so it is not worked out for every call.
    origin_of: Callable[[], str | None]
    protocol_version: str
    # Sends `notifications/progress` for this request; None when the request carried no token.
    report_progress: Report | None = None
    waits: WaitPolicy = field(default_factory=WaitPolicy)
    working: WorkingSession = field(default_factory=WorkingSession)

    @cached_property
    def origin(self) -> str | None:
        """`scheme://host[:port]` the client used, or None when it came over stdio with no public URL."""
        return self.origin_of()

    def guide_url(self) -> str | None:
        return f"{self.origin}/bootstrap/SKILL.md" if self.origin else None


class Binding(Protocol):
    """How one transport tells the handlers who is calling."""

    waits: WaitPolicy

    def context(self, ctx: ServerRequestContext[Any, Any]) -> CallContext: ...


def progress_of(ctx: ServerRequestContext[Any, Any]) -> Report | None:
    """The request's progress sender, when it asked for progress (`_meta.progressToken`)."""
    if progress_token_from_params(ctx.params) is None:
        return None
    return ctx.session.report_progress


class HttpBinding:
    """Streamable HTTP behind the gate: the caller rides in the ASGI scope as `hub.caller`."""

    def __init__(self, hub: Hub, sessions: ActiveSessions) -> None:
        self.hub = hub
        self.sessions = sessions
        self.waits = WaitPolicy()

    def context(self, ctx: ServerRequestContext[Any, Any]) -> CallContext:
        request = ctx.request
        scope = getattr(request, "scope", None)
        caller = scope.get("hub.caller") if scope else None
        if request is None or scope is None or not isinstance(caller, Caller) or caller.kind == "public":
            # The gate answers 401 before the MCP layer; reaching here without a caller is a bug.
            raise HubError("unauthenticated", "this endpoint needs an agent token")
        headers = request.headers  # case-insensitive
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            key = modern_key(caller.actor, headers.get(CONNECTION_HEADER))
        else:
            sid = headers.get("mcp-session-id")
            key = legacy_key(sid) if sid else modern_key(caller.actor, headers.get(CONNECTION_HEADER))
        return CallContext(
            self.hub,
            caller,
            key,
            self.sessions,
            lambda: self._origin(scope, headers),
            ctx.protocol_version,
            progress_of(ctx),
            self.waits,
        )

    def _origin(self, scope: Mapping[str, Any], headers: Mapping[str, str]) -> str:
        client = scope.get("client")
        settings = self.hub.settings
        return request_origin(
            scheme=str(scope.get("scheme", "http")),
            headers={k.lower(): v for k, v in headers.items()},
            peer=client[0] if client else None,
            trust_proxy=settings.trust_proxy,
            fallback_host=settings.bind,
        )


class FixedBinding:
    """stdio: one pipe, one caller."""

    def __init__(
        self, hub: Hub, caller: Caller, connection: ConnectionKey, sessions: ActiveSessions, origin: str | None
    ) -> None:
        self.hub, self.caller, self.connection = hub, caller, connection
        self.sessions, self.origin = sessions, origin
        self.waits = WaitPolicy()

    def context(self, ctx: ServerRequestContext[Any, Any]) -> CallContext:
        origin = self.origin
        return CallContext(
            self.hub,
            self.caller,
            self.connection,
            self.sessions,
            lambda: origin,
            ctx.protocol_version,
            progress_of(ctx),
            self.waits,
        )
