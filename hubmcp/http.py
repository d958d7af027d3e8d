"""`/mcp` over streamable HTTP: the app factory the ASGI router mounts.

`McpEndpoint(hub)` builds the server and a `StreamableHTTPSessionManager`; enter `run()` for the
whole serving lifetime, then call the endpoint as an ASGI app for every `/mcp` request (the gate
has already resolved the bearer token into `scope["hub.caller"]`). Handshake-era clients get a
stateful `Mcp-Session-Id`; 2026-07-28 clients are served per request.

Reply framing: a request that answers at once (everything but a call to a waiting tool) gets one
`application/json` body; the SSE framing, with its stream, disconnect watcher and keep-alive pings,
costs a third of a quick call's CPU and buys such a call nothing. Waits (`inbox_wait`,
`notify_wait`) keep the streamed reply, for their progress and pings. A 2026-07-28 request is routed
by its `Mcp-Method`/`Mcp-Name` headers (which the SDK checks against the body) to a second, JSON-only
manager; inside a handshake-era session the session's transport reads the body and chooses per
request (`hubmcp/framing.py`).

DNS rebinding: the Host must be the hub's own (loopback names on any port, the bind address, the
public URL's host, and, on a wildcard bind, this machine's names), and a browser Origin must be too.
"""

from __future__ import annotations

import os
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit

from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from hubcore.config import HubSettings
from hubcore.hub import Hub
from hubmcp.active import ActiveSessions
from hubmcp.context import HttpBinding
from hubmcp.framing import PerRequestFramingManager
from hubmcp.server import HubMcp

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")
WILDCARD_HOSTS = ("0.0.0.0", "::", "")
FIXTURES_ENV = "HUB_MCP_CONFORMANCE_FIXTURES"
_VERSION_HEADER = b"mcp-protocol-version"
_METHOD_HEADER = b"mcp-method"
_NAME_HEADER = b"mcp-name"
_HANDSHAKE_VERSIONS = frozenset(v.encode("latin-1") for v in HANDSHAKE_PROTOCOL_VERSIONS)


def _bracket(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def own_hosts(settings: HubSettings) -> list[str]:
    """Host names (without port) that are this hub's own."""
    host, _ = settings.host_port
    names = set(LOOPBACK_NAMES)
    if host in WILDCARD_HOSTS:
        try:
            hostname = socket.gethostname()
            names.update({hostname, socket.getfqdn()})
            for info in socket.getaddrinfo(hostname, None):
                names.add(_bracket(str(info[4][0])))
        except OSError:
            pass
    else:
        names.add(_bracket(host))
    if settings.public_url:
        public = urlsplit(settings.public_url).hostname
        if public:
            names.add(_bracket(public))
    return sorted(n for n in names if n)


def security_settings(settings: HubSettings) -> TransportSecuritySettings:
    hosts = own_hosts(settings)
    allowed_hosts = [h for name in hosts for h in (name, f"{name}:*")]
    allowed_origins = [
        o for name in hosts for scheme in ("http", "https") for o in (f"{scheme}://{name}", f"{scheme}://{name}:*")
    ]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=allowed_hosts,
        allowed_origins=allowed_origins,
    )


class McpEndpoint:
    def __init__(self, hub: Hub, *, fixtures: bool | None = None) -> None:
        if fixtures is None:
            fixtures = os.environ.get(FIXTURES_ENV) == "1"
        self.hub = hub
        self.sessions = ActiveSessions()
        self.mcp = HubMcp(hub, HttpBinding(hub, self.sessions), fixtures=fixtures)
        security = security_settings(hub.settings)
        waiting = frozenset(t.name for t in self.mcp.tools.values() if t.waits)
        # Handshake-era sessions: each reply framed as JSON or a stream, per request (framing.py).
        self.manager = PerRequestFramingManager(
            app=self.mcp.server,
            json_response=False,
            stateless=False,
            security_settings=security,
            session_idle_timeout=30 * 60,
            waiting_tools=waiting,
        )
        # Only ever handed 2026-07-28 requests, which carry no session: stateless is moot.
        self.quick = StreamableHTTPSessionManager(
            app=self.mcp.server,
            json_response=True,
            stateless=True,
            security_settings=security,
        )
        self._waiting_tools = frozenset(name.encode() for name in waiting)

    @asynccontextmanager
    async def run(self) -> AsyncIterator[None]:
        async with self.manager.run(), self.quick.run():
            yield

    def begin_shutdown(self) -> None:
        """The server stopped accepting: end each handshake-era session's standalone GET stream,
        which its client holds open for good and which would otherwise keep the server waiting
        out its whole grace window. The sessions stay until the lifespan ends, so replies still
        in flight (waits answering the shutdown) reach their clients. The SDK offers no public
        list of sessions, hence its private map."""
        for transport in list(self.manager._server_instances.values()):
            transport.close_standalone_sse_stream()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        manager = self.quick if self.answers_at_once(scope["headers"]) else self.manager
        await manager.handle_request(scope, receive, send)

    def answers_at_once(self, headers: list[tuple[bytes, bytes]]) -> bool:
        """A 2026-07-28 request other than a call to a waiting tool."""
        version = method = name = None
        for key, value in headers:
            if key == _VERSION_HEADER:
                version = value
            elif key == _METHOD_HEADER:
                method = value
            elif key == _NAME_HEADER:
                name = value
        if version is None or version in _HANDSHAKE_VERSIONS:
            return False
        return not (method == b"tools/call" and name in self._waiting_tools)

    def render_bootstrap(self, origin: str) -> str:
        """The bootstrap guide (`GET /bootstrap/SKILL.md`) with `origin` rendered in."""
        return self.mcp.resources.skill.bootstrap(origin)


def create_endpoint(hub: Hub) -> McpEndpoint:
    """The app factory `hubhttp.asgi` mounts at `/mcp`."""
    return McpEndpoint(hub)
