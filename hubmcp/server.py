"""The MCP server: the SDK's low-level `Server` with the hub's tools, resources and skills.

One factory serves every transport; a `Binding` says who is calling (the HTTP gate's caller, or
the stdio process's fixed caller). Tool handlers are thin: check the arguments against the
tool's JSON Schema, call one service with the caller, render the result, attach the trailer.
"""

from __future__ import annotations

import logging
from typing import Any

import mcp_types as types
import orjson
from mcp.server import Server
from mcp.server._otel import OpenTelemetryMiddleware
from mcp.server.caching import CacheHint
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.shared.inbound import x_mcp_header_map
from mcp_types import INVALID_PARAMS, MISSING_REQUIRED_CLIENT_CAPABILITY
from pydantic import BaseModel, ConfigDict

from hubcore import build
from hubcore.errors import HubError, is_volume_full, volume_full
from hubcore.hub import Hub
from hubcore.metrics import UNKNOWN_TOOL
from hubmcp import errors
from hubmcp.context import Binding, CallContext
from hubmcp.resources import Resources
from hubmcp.tools import all_tools
from hubmcp.tools import sessions as session_tools
from hubmcp.tools.base import Tool
from hubmcp.trailer import attach_trailer

log = logging.getLogger("hubmcp")

SKILLS_EXTENSION = "io.modelcontextprotocol/skills"
SKILLS_SETTINGS: dict[str, Any] = {"directoryRead": True}
INSTRUCTIONS = (
    "Agent Hub: the human's hub for their agents. Read the agent guide first: resource "
    "skill://hub/SKILL.md (skills/get, or resources/read). Call whoami to learn your identity and "
    "personal space. Successful tool results may carry `notifications.pending`: answers to your "
    "questions and items you subscribed to; each arrives once, so act on them."
)
# Served only when the app is built with conformance fixtures (tools/mcp-conformance).
FIXTURE_CAPABILITY_TOOL = "test_missing_capability"
# A read-only tool says so; nothing else is annotated (tools carry no title either: the name says
# it), each hint costing every agent's context at every session.
READ_ONLY = types.ToolAnnotations(read_only_hint=True)
LIST_CACHE = CacheHint(ttl_ms=60_000, scope="public")
PRIVATE_NOW = CacheHint(ttl_ms=0, scope="private")


def tool_result(result: dict[str, Any]) -> dict[str, Any]:
    """A successful call's result as the wire dict `types.CallToolResult` dumps to: the text block
    (the result as JSON) and the structured content. The SDK's runner still checks and sieves it
    against the era's result model; what it skips is building that model and dumping it again, a
    walk over the whole result (twice the content) per call. `resultType` is the 2026-07-28
    member (the sieve drops it for older eras); `tests/mcp/test_result_bytes.py` holds the answer
    byte for byte to the model's."""
    return {
        "content": [{"type": "text", "text": orjson.dumps(result).decode()}],
        "structuredContent": result,
        "isError": False,
        "resultType": "complete",
    }


class UriParams(types.RequestParams):
    model_config = ConfigDict(extra="allow")
    uri: str


class DirectoryParams(UriParams):
    cursor: str | None = None


class CursorParams(types.RequestParams):
    model_config = ConfigDict(extra="allow")
    cursor: str | None = None


def _modern_cache(ctx: ServerRequestContext[Any, Any], result: dict[str, Any], hint: CacheHint) -> dict[str, Any]:
    """Custom methods carry their own 2026-07-28 cache hints (the SDK fills only spec methods)."""
    if ctx.protocol_version >= "2026-07-28":
        return {"ttlMs": hint.ttl_ms, "cacheScope": hint.scope, **result}
    return result


class HubMcp:
    """Builds and holds one `Server` bound to a hub."""

    def __init__(self, hub: Hub, binding: Binding, *, fixtures: bool = False) -> None:
        self.hub = hub
        self.binding = binding
        self.tools: dict[str, Tool] = {t.name: t for t in all_tools()}
        self._header_schemas = {t.name: t.input_schema for t in self.tools.values() if x_mcp_header_map(t.input_schema)}
        self.resources = Resources(fixtures=fixtures)
        self.fixtures = fixtures
        self.server = self._build()

    def _build(self) -> Server[Any]:
        server: Server[Any] = Server(
            "agent-hub",
            version=build.version(),
            title="Agent Hub",
            instructions=INSTRUCTIONS,
            cache_hints={
                "tools/list": LIST_CACHE,
                "prompts/list": LIST_CACHE,
                "resources/templates/list": LIST_CACHE,
                "resources/list": PRIVATE_NOW,
                "resources/read": PRIVATE_NOW,
            },
            get_tool_input_schema=self._input_schema,
            on_list_tools=self._list_tools,
            on_list_resources=self._list_resources,
            on_list_resource_templates=self._list_templates,
            on_read_resource=self._read_resource,
            on_list_prompts=self._list_prompts,
            on_get_prompt=self._get_prompt,
        )
        server.extensions[SKILLS_EXTENSION] = dict(SKILLS_SETTINGS)
        # Registered as a plain handler (not `on_call_tool`, typed to answer a model): a tool's
        # result goes to the SDK as its wire dict (`tool_result`).
        server.add_request_handler("tools/call", types.CallToolRequestParams, self._call_tool)
        server.add_request_handler("skills/list", CursorParams, self._skills_list)
        server.add_request_handler("skills/get", UriParams, self._skills_get)
        server.add_request_handler("resources/directory/read", DirectoryParams, self._directory_read)
        # The SDK wraps every request in an OpenTelemetry span by default. The hub sets no tracer
        # provider and exports no traces, and the span it never records still cost a tenth to a
        # quarter of a tool call's CPU (docs/benchmarks.md, issue 27): left out.
        server.middleware[:] = [m for m in server.middleware if not isinstance(m, OpenTelemetryMiddleware)]
        server.middleware.append(self._advertise_extensions)
        return server

    # -- middleware ------------------------------------------------------------------------------

    async def _advertise_extensions(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        """The 2025-11-25 initialize model drops `capabilities.extensions`; put it back."""
        result = await call_next(ctx)
        if ctx.method == "initialize" and isinstance(result, dict):
            caps = result.setdefault("capabilities", {})
            caps.setdefault("extensions", {})[SKILLS_EXTENSION] = dict(SKILLS_SETTINGS)
        return result

    # -- tools -----------------------------------------------------------------------------------

    def _input_schema(self, name: str) -> dict[str, Any] | None:
        """What the SDK checks `Mcp-Param-*` headers against: only schemas that declare such
        headers (`x-mcp-header`). For the rest there is nothing to compare, and walking the schema
        on every call is a tenth of a quick call's cost."""
        return self._header_schemas.get(name)

    async def _list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        tools = [
            types.Tool(
                name=t.name,
                description=t.description,
                input_schema=t.input_schema,
                output_schema=t.output_schema,
                annotations=READ_ONLY if t.read_only else None,
            )
            for t in self.tools.values()
        ]
        if self.fixtures:
            tools.append(
                types.Tool(
                    name=FIXTURE_CAPABILITY_TOOL,
                    description="conformance fixture: needs sampling",
                    input_schema={"type": "object", "properties": {}},
                )
            )
        return types.ListToolsResult(tools=tools)

    def _fixture_call(self, ctx: ServerRequestContext[Any, Any]) -> types.CallToolResult:
        """The conformance suite's diagnostic tool: refuses a client that did not declare sampling."""
        if not ctx.session.check_client_capability(types.ClientCapabilities(sampling=types.SamplingCapability())):
            raise MCPError(
                code=MISSING_REQUIRED_CLIENT_CAPABILITY,
                message="this tool needs the sampling capability",
                data={"requiredCapabilities": {"sampling": {}}},
            )
        return types.CallToolResult(content=[types.TextContent(type="text", text="sampling declared")])

    async def _call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | dict[str, Any]:
        metrics = self.hub.metrics
        if self.fixtures and params.name == FIXTURE_CAPABILITY_TOOL:
            return self._fixture_call(ctx)
        tool = self.tools.get(params.name)
        if tool is None:
            metrics.tool_calls.labels(tool=UNKNOWN_TOOL, outcome="error").inc()
            metrics.failed_responses.labels(code="not_found").inc()
            return errors.unknown_tool(params.name)
        call: CallContext | None = None
        try:
            call = self.binding.context(ctx)
            args = tool.check_arguments(params.arguments)
            result = await tool.handler(call, args)
            if tool.trailer:
                result = await attach_trailer(call, result)
        except HubError as err:
            return await self._failed(call, tool.name, params.arguments, err)
        except MCPError:
            metrics.tool_calls.labels(tool=tool.name, outcome="error").inc()
            raise
        except Exception as exc:
            if is_volume_full(exc):  # a file write the services did not name: still retryable
                return await self._failed(call, tool.name, params.arguments, volume_full(exc))
            log.exception("tool %s failed", tool.name)
            return await self._failed(
                call, tool.name, params.arguments, HubError("internal", "the hub failed to answer this call")
            )
        metrics.tool_calls.labels(tool=tool.name, outcome="ok").inc()
        await self._record(call, tool.name, params.arguments, "ok")
        return tool_result(result)

    async def _failed(
        self, call: CallContext | None, name: str, arguments: dict[str, Any] | None, err: HubError
    ) -> types.CallToolResult:
        """A tool execution error: recorded, counted, and answered as an `isError` result the
        model reads (MCP's convention; a JSON-RPC error's details never reach the model)."""
        err = errors.agent_view(err, call.caller if call is not None else None)
        if call is not None:
            await self._record(call, name, arguments, err.code)
        metrics = self.hub.metrics
        metrics.tool_calls.labels(tool=name, outcome="error").inc()
        metrics.failed_responses.labels(code=err.code).inc()
        return errors.error_result(err)

    async def _record(self, call: CallContext, name: str, arguments: dict[str, Any] | None, outcome: str) -> None:
        """Replay: a call made in a session is recorded in its brain (session_start opens it, so not it)."""
        if name != "session_start":
            await session_tools.record(call, name, dict(arguments or {}), outcome)

    # -- resources -------------------------------------------------------------------------------

    def _call(self, ctx: ServerRequestContext[Any, Any]) -> CallContext:
        try:
            return self.binding.context(ctx)
        except HubError as err:
            raise errors.to_mcp_error(err) from None

    async def _list_resources(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        cursor = params.cursor if params else None
        try:
            return await self.resources.list(self._call(ctx), cursor)
        except HubError as err:
            raise errors.to_mcp_error(err) from None

    async def _list_templates(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return self.resources.templates(self.hub.core.parts)

    async def _read_resource(
        self, ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        try:
            return await self.resources.read(self._call(ctx), str(params.uri))
        except HubError as err:
            raise errors.to_mcp_error(err, uri=str(params.uri)) from None

    async def _skills_list(self, ctx: ServerRequestContext[Any, Any], params: CursorParams) -> dict[str, Any]:
        return _modern_cache(ctx, self.resources.skills_list(), LIST_CACHE)

    async def _skills_get(self, ctx: ServerRequestContext[Any, Any], params: UriParams) -> dict[str, Any]:
        return _modern_cache(ctx, self.resources.skills_get(params.uri), LIST_CACHE)

    async def _directory_read(self, ctx: ServerRequestContext[Any, Any], params: DirectoryParams) -> dict[str, Any]:
        return _modern_cache(ctx, self.resources.directory_read(params.uri, params.cursor), LIST_CACHE)

    # -- prompts (none; listed empty so generic clients and cache checks see a well-formed answer) --

    async def _list_prompts(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=[])

    async def _get_prompt(
        self, ctx: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        raise MCPError(code=INVALID_PARAMS, message=f"no prompt named {params.name!r}; this hub has none")


__all__ = ["BaseModel", "HubMcp"]
