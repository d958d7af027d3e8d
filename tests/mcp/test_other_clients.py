"""Refusals every client shows (issue 27, part 2), through clients nobody here wrote.

An error result carries no structured content, so no client that checks structured content
against the tool's output schema (MCP says it must match) replaces the refusal with a schema
complaint: the first thing each client shows is the hub's code and message. Successful calls are
read through the same clients, which check the result against the output schema.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.mcp.live import ERAS, LiveHub

pytestmark = pytest.mark.anyio

fastmcp = pytest.importorskip("fastmcp")
pydantic_ai_mcp = pytest.importorskip("pydantic_ai.mcp")
pydantic_ai_exceptions = pytest.importorskip("pydantic_ai.exceptions")

REFUSAL = "forbidden: project 'nope' not found"


async def agent(live: LiveHub) -> str:
    token = await live.make_agent("other")
    await live.make_project("web")
    return token


async def test_fastmcp_shows_the_refusal_and_reads_results(live: LiveHub) -> None:
    token = await agent(live)
    transport = fastmcp.client.transports.StreamableHttpTransport(
        live.mcp_url, headers={"Authorization": f"Bearer {token}"}
    )
    async with fastmcp.Client(transport) as client:
        refused = await client.call_tool("feed_read", {"project_id": "nope"}, raise_on_error=False)
        assert refused.is_error and refused.structured_content is None
        assert refused.content[0].text.startswith(REFUSAL), refused.content[0].text
        with pytest.raises(fastmcp.exceptions.ToolError) as raised:
            await client.call_tool("feed_read", {"project_id": "nope"})
        assert str(raised.value).startswith(REFUSAL), str(raised.value)
        sent = await client.call_tool("signal_append", {"project_id": "web", "summary": "from fastmcp"})
        assert not sent.is_error and sent.structured_content is not None
        read = await client.call_tool("feed_read", {"project_id": "web"})
        assert [e["summary"] for e in read.structured_content["events"]] == ["from fastmcp"]


async def test_pydantic_ai_hands_the_model_the_refusal(live: LiveHub) -> None:
    token = await agent(live)
    toolset = pydantic_ai_mcp.MCPToolset(live.mcp_url, headers={"Authorization": f"Bearer {token}"})
    async with toolset:
        with pytest.raises(pydantic_ai_exceptions.ModelRetry) as retry:
            await toolset.direct_call_tool("feed_read", {"project_id": "nope"})
        assert str(retry.value.message).startswith(REFUSAL), retry.value.message
        sent: Any = await toolset.direct_call_tool(
            "signal_append", {"project_id": "web", "summary": "from pydantic-ai"}
        )
        assert isinstance(sent, dict) and sent["event_id"], sent


@pytest.mark.parametrize("mode", ERAS)
async def test_the_sdk_client_shows_the_refusal(live: LiveHub, mode: str) -> None:
    token = await agent(live)
    async with live.client(token, mode=mode) as client:
        tools = await client.list_tools()  # the client checks results against these schemas
        assert any(t.output_schema for t in tools.tools)
        refused = await client.call_tool("feed_read", {"project_id": "nope"})
        assert refused.is_error and refused.structured_content is None
        assert refused.content[0].text.startswith(REFUSAL)  # type: ignore[union-attr]
