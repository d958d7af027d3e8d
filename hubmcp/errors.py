"""Hub errors on the MCP wire (DESIGN section 6).

A known tool that fails answers a JSON-RPC error whose message starts with the hub code and whose
`data.error` is the tool error object `{code, message, retryable, details}`. An unknown tool answers
an ordinary tool result with `isError: true` and `structuredContent.error.code = "not_found"`.
A resource that is missing answers -32602 with `data.uri` (SEP-2164) and the hub code in
`data.error`.
"""

from __future__ import annotations

from typing import Any

import orjson
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS, CallToolResult, TextContent

from hubcore.errors import HubError

# JSON-RPC code for a hub refusal other than a bad argument (implementation-defined server error
# range; the SDK itself uses -32000, -32001 and -3202x).
HUB_REFUSAL = -32050


def tool_error(err: HubError) -> dict[str, Any]:
    return {"code": err.code, "message": err.message, "retryable": err.retryable, "details": err.details or {}}


def rpc_code(code: str) -> int:
    if code == "invalid_argument":
        return INVALID_PARAMS
    if code == "internal":
        return INTERNAL_ERROR
    return HUB_REFUSAL


def agent_view(err: HubError) -> HubError:
    """Missing and denied look the same to an agent: a project it cannot see is `forbidden`,
    with the very message a missing one gets (the spec's tool code for both)."""
    if err.code == "not_found" and err.message.startswith("project "):
        return HubError("forbidden", err.message, details=err.details)
    return err


def to_mcp_error(err: HubError, **extra: Any) -> MCPError:
    """The JSON-RPC error for a failing known tool or method."""
    data: dict[str, Any] = {"error": tool_error(err), **extra}
    return MCPError(code=rpc_code(err.code), message=f"{err.code}: {err.message}", data=data)


def resource_missing(uri: str, message: str | None = None) -> MCPError:
    err = HubError("not_found", message or f"no resource {uri}")
    return MCPError(code=INVALID_PARAMS, message=f"Resource not found: {err.message}", data={
        "uri": uri, "error": tool_error(err),
    })


def resource_invalid(uri: str, message: str) -> MCPError:
    err = HubError("invalid_argument", message)
    return MCPError(code=INVALID_PARAMS, message=f"invalid_argument: {message}", data={
        "uri": uri, "error": tool_error(err),
    })


def unknown_tool(name: str) -> CallToolResult:
    err = HubError("not_found", f"no tool named {name!r}; tools/list names every tool")
    body = {"error": tool_error(err)}
    return CallToolResult(
        content=[TextContent(type="text", text=orjson.dumps(body).decode())],
        structured_content=body,
        is_error=True,
    )
