"""`hub-cli mcp`: the agent endpoint over stdio, standalone or as a bridge to a running hub.

Standalone: opens the local data directory (failing when a running hub holds it), serves the same
server on stdin/stdout acting as the human admin, actor label from `HUB_AGENT_ID`; opening the hub
starts its background work, the deadline sweeper included.

Bridge: a message pump between the local pipe and the hub's `/mcp`, carrying the client's token.
It keeps every member and error code intact (no typed re-parsing), sets the per-message HTTP
headers the streamable HTTP transport needs (`MCP-Protocol-Version`; on 2026-07-28 also
`Mcp-Method` and `Mcp-Name`), sends one `Hub-Connection` value per process so the hub tracks this
pipe's active session apart from other clients on the same token, and fills `resultType`, `ttlMs`
and `cacheScope` for modern clients should a result lack them.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping
from typing import Any

import anyio
import httpx2
from mcp.client.streamable_http import streamable_http_client
from mcp.server.stdio import stdio_server
from mcp.shared.inbound import NAME_BEARING_METHODS, encode_header_value
from mcp.shared.message import ClientMessageMetadata, SessionMessage
from mcp_types import PROTOCOL_VERSION_META_KEY, JSONRPCNotification, JSONRPCRequest, JSONRPCResponse
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from hubcore.caller import Caller
from hubcore.clock import Clock
from hubcore.config import HubSettings
from hubcore.hub import Hub
from hubmcp import errors
from hubmcp.active import CONNECTION_HEADER, ActiveSessions, ConnectionKey
from hubmcp.context import FixedBinding
from hubmcp.protect import ProtectError, advertise, protect_arguments
from hubmcp.server import HubMcp

log = logging.getLogger("hubmcp.stdio")

CACHEABLE = frozenset(
    {
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "skills/list",
        "skills/get",
        "resources/directory/read",
    }
)


async def serve_standalone(
    settings: HubSettings,
    *,
    label: str | None = None,
    stdin: Any = None,
    stdout: Any = None,
    clock: Clock | None = None,
) -> None:
    """Serve the local data directory over stdio until the client closes the pipe."""
    async with Hub.open(settings, clock=clock) as hub:
        binding = FixedBinding(
            hub, Caller.admin(label), ConnectionKey("stdio", uuid.uuid4().hex), ActiveSessions(), settings.public_url
        )
        mcp = HubMcp(hub, binding)
        async with stdio_server(stdin, stdout) as (read, write):
            await mcp.server.run(read, write, mcp.server.create_initialization_options())


def endpoint_url(hub_url: str) -> str:
    url = hub_url.rstrip("/")
    return url if url.endswith("/mcp") else f"{url}/mcp"


class Pump:
    """State of one bridged pipe: the negotiated legacy version and modern requests in flight."""

    def __init__(self) -> None:
        self.legacy_version: str | None = None
        self.initialize_id: Any = None
        self.modern_methods: dict[Any, str] = {}
        self.tool_lists: set[Any] = set()  # ids of tools/list requests, whose pages gain `password`

    def outbound(self, message: Any) -> Any:
        """A client message on its way to the hub: a write tool's `password` becomes ciphertext and
        an envelope here (hubmcp.protect), so the password never leaves this process."""
        if not isinstance(message, JSONRPCRequest):
            return message
        if message.method == "tools/list":
            self.tool_lists.add(message.id)
        params = message.params or {}
        if message.method != "tools/call" or not isinstance(params.get("arguments"), Mapping):
            return message
        arguments = protect_arguments(str(params.get("name")), params["arguments"])
        return message.model_copy(update={"params": {**params, "arguments": arguments}})

    def headers_for(self, message: Any) -> dict[str, str]:
        headers: dict[str, str] = {}
        params = getattr(message, "params", None) or {}
        meta = params.get("_meta") if isinstance(params, Mapping) else None
        version = meta.get(PROTOCOL_VERSION_META_KEY) if isinstance(meta, Mapping) else None
        if isinstance(message, JSONRPCRequest) and message.method == "initialize":
            self.initialize_id = message.id
            return headers
        if isinstance(version, str) and isinstance(message, JSONRPCRequest):
            headers["MCP-Protocol-Version"] = version
            headers["Mcp-Method"] = message.method
            name_key = NAME_BEARING_METHODS.get(message.method)
            value = params.get(name_key) if name_key else None
            if isinstance(value, str):
                headers["Mcp-Name"] = encode_header_value(value)
            if version in MODERN_PROTOCOL_VERSIONS:
                self.modern_methods[message.id] = message.method
        elif self.legacy_version:
            headers["MCP-Protocol-Version"] = self.legacy_version
        return headers

    def inbound(self, message: Any) -> Any:
        """A message from the hub, on its way to the local client."""
        if isinstance(message, JSONRPCResponse):
            if self.initialize_id is not None and message.id == self.initialize_id:
                version = (message.result or {}).get("protocolVersion")
                self.legacy_version = version if isinstance(version, str) else None
                self.initialize_id = None
            if message.id in self.tool_lists and isinstance((message.result or {}).get("tools"), list):
                message = JSONRPCResponse(
                    jsonrpc="2.0", id=message.id, result={**message.result, "tools": advertise(message.result["tools"])}
                )
            self.tool_lists.discard(message.id)
            method = self.modern_methods.pop(message.id, None)
            if method is not None and isinstance(message.result, dict):
                result = dict(message.result)
                result.setdefault("resultType", "complete")
                if method in CACHEABLE:
                    result.setdefault("ttlMs", 0)
                    result.setdefault("cacheScope", "private")
                message = JSONRPCResponse(jsonrpc="2.0", id=message.id, result=result)
        elif hasattr(message, "id"):
            self.modern_methods.pop(message.id, None)
        return message


def refusal(request_id: Any, message: str) -> JSONRPCResponse:
    """The tool error a refused `password` gets, answered locally: nothing was sent to the hub."""
    error = {"code": "invalid_argument", "message": message, "retryable": False, "details": {"field": "password"}}
    return JSONRPCResponse(
        jsonrpc="2.0",
        id=request_id,
        result={"content": [{"type": "text", "text": errors.error_text(error)}], "isError": True},
    )


async def serve_bridge(
    hub_url: str, token: str | None, *, timeout: float = 30.0, stdin: Any = None, stdout: Any = None
) -> None:
    """Pump messages between stdio and the hub at `hub_url` until either side closes."""
    headers = {CONNECTION_HEADER: uuid.uuid4().hex}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    pump = Pump()
    # EOF on stdin ends the pump, and requests still in flight are dropped: a client that closed
    # stdin reads nothing more. The local streams close before stdio_server exits, since its stdout
    # writer ends only when its stream closes (left open, the bridge outlived its stdin).
    async with stdio_server(stdin, stdout) as (local_read, local_write), local_read, local_write:
        await _pump(hub_url, headers, timeout, pump, local_read, local_write)


async def _pump(
    hub_url: str, headers: dict[str, str], timeout: float, pump: Pump, local_read: Any, local_write: Any
) -> None:
    async with (
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(timeout, read=300)) as http,
        streamable_http_client(endpoint_url(hub_url), http_client=http) as (remote_read, remote_write),
        anyio.create_task_group() as tg,
    ):

        async def outbound() -> None:
            async for item in local_read:
                if isinstance(item, Exception):
                    log.warning("unreadable message from the client: %s", item)
                    continue
                try:
                    message = pump.outbound(item.message)
                except ProtectError as refused:
                    await local_write.send(SessionMessage(refusal(item.message.id, str(refused))))
                    continue
                extra = pump.headers_for(message)
                await remote_write.send(SessionMessage(message, metadata=ClientMessageMetadata(headers=extra or None)))
            tg.cancel_scope.cancel()

        async def inbound() -> None:
            async for item in remote_read:
                if isinstance(item, Exception):
                    log.warning("hub transport error: %s", item)
                    continue
                await local_write.send(SessionMessage(pump.inbound(item.message)))
            tg.cancel_scope.cancel()

        tg.start_soon(outbound)
        tg.start_soon(inbound)


__all__ = ["JSONRPCNotification", "Pump", "endpoint_url", "refusal", "serve_bridge", "serve_standalone"]
