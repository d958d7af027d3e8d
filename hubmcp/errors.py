"""Hub errors on the MCP wire (DESIGN section 6).

Tool errors follow MCP's convention: every tool execution error, argument validation included, is
an ordinary tool result with `isError: true` and one text content that starts `<code>: <message>`,
so the model reads what went wrong and can correct itself (clients drop a JSON-RPC error's `data`);
its last line is the error object `{"error": {code, message, retryable, details}}` as JSON, for
programs. An error result carries no `structuredContent`: MCP says structured content must match
the tool's output schema, which describes the tool's result, and clients that check it (the
Inspector, the TypeScript SDK) would show a schema complaint instead of the refusal (issue 27). An
unknown tool answers the same way with `not_found`. Only a malformed JSON-RPC request is a protocol
error (the SDK answers those).

A resource that is missing answers -32602 with `data.uri` (SEP-2164) and the hub code in
`data.error`; other resource and custom-method refusals are JSON-RPC errors too.
"""

from __future__ import annotations

from typing import Any

import orjson
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS, CallToolResult, TextContent

from hubcore.caller import Caller
from hubcore.errors import HubError

# JSON-RPC code for a hub refusal other than a bad argument on a resource or custom method
# (implementation-defined server error range; the SDK itself uses -32000, -32001 and -3202x).
HUB_REFUSAL = -32050


def tool_error(err: HubError) -> dict[str, Any]:
    return {"code": err.code, "message": err.message, "retryable": err.retryable, "details": err.details or {}}


def rpc_code(code: str) -> int:
    if code == "invalid_argument":
        return INVALID_PARAMS
    if code == "internal":
        return INTERNAL_ERROR
    return HUB_REFUSAL


def agent_view(err: HubError, caller: Caller | None) -> HubError:
    """Missing and denied look the same to an agent: a project (or an artifact) it cannot see is `forbidden`,
    with the very message a missing one gets (the spec's tool code for both). The admin (an admin
    token, or the standalone stdio server) may see everything, so there is no oracle to hide: a
    missing project stays `not_found`."""
    if caller is not None and caller.is_admin:
        return err
    if err.code == "not_found" and err.message.startswith(("project ", "artifact ")):
        return HubError("forbidden", err.message, details=err.details)
    return err


def error_text(error: dict[str, Any]) -> str:
    """An error result's text: the code and message first, the error object last (one line)."""
    text = f"{error['code']}: {error['message']}"
    if error.get("retryable"):
        text += "\n(retryable: the same call may succeed later)"
    return text + "\n" + orjson.dumps({"error": error}).decode()


def error_result(err: HubError) -> CallToolResult:
    """A failing tool call as MCP's tool execution error: a result the model reads."""
    return CallToolResult(content=[TextContent(type="text", text=error_text(tool_error(err)))], is_error=True)


def error_object(result: dict[str, Any]) -> dict[str, Any] | None:
    """The `error` object of an error result as it came over the wire (its text's last line),
    or None when the text carries none (another server's error)."""
    for block in result.get("content") or ():
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
            try:
                body = orjson.loads(block["text"].rsplit("\n", 1)[-1])
            except orjson.JSONDecodeError:
                return None
            error = body.get("error") if isinstance(body, dict) else None
            return error if isinstance(error, dict) else None
    return None


def to_mcp_error(err: HubError, **extra: Any) -> MCPError:
    """The JSON-RPC error for a failing resource read or custom method (never a tool call)."""
    data: dict[str, Any] = {"error": tool_error(err), **extra}
    return MCPError(code=rpc_code(err.code), message=f"{err.code}: {err.message}", data=data)


def resource_missing(uri: str, message: str | None = None) -> MCPError:
    err = HubError("not_found", message or f"no resource {uri}")
    return MCPError(
        code=INVALID_PARAMS,
        message=f"Resource not found: {err.message}",
        data={
            "uri": uri,
            "error": tool_error(err),
        },
    )


def unknown_tool(name: str) -> CallToolResult:
    shown = name if len(name) <= 64 else name[:64] + "..."  # never echo a large value back
    return error_result(HubError("not_found", f"no tool named {shown!r}; tools/list names every tool"))
