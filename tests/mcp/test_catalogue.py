"""The tool catalogue an agent pays for at every session (issue 27, part 1 and 3).

`tools/list` is measured as it goes over the wire (compact JSON of the result, in the era whose
result is the larger), in tokens as bytes / 4. The whole catalogue must stay within the budget and
no tool may take more than its share; the failure message lists every tool's share, largest
first, so whoever grows the catalogue sees where the bytes went.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from hubmcp.tools import all_tools
from tests.mcp.live import LiveHub, modern_request, modern_result, structured
from tests.mcp.schema_lint import findings

pytestmark = pytest.mark.anyio

SKILL_DIR = Path(__file__).resolve().parents[2] / "hubmcp" / "skill"
BUDGET_TOKENS = 8_000  # issue 27: the whole tools/list
TOOL_CEILING_TOKENS = 600  # one tool's share: no single tool may take the budget over for everyone
DESCRIPTION_MAX = 240  # "one or two sentences"


def tokens(value: Any) -> int:
    return len(orjson.dumps(value)) // 4


async def modern_list(live: LiveHub) -> dict[str, Any]:
    return await modern_result(live, modern_request("tools/list"))


def prose(node: Any) -> bool:
    """Whether a schema carries a `description` keyword anywhere (a member named so is no prose)."""
    if isinstance(node, list):
        return any(prose(v) for v in node)
    if not isinstance(node, dict):
        return False
    if isinstance(node.get("description"), str):
        return True
    return any(prose(v) for k, v in node.items() if k != "properties") or any(
        prose(v) for v in (node.get("properties") or {}).values()
    )


def shares(tools: list[dict[str, Any]]) -> str:
    rows = sorted(
        ((tokens(t), tokens(t.get("inputSchema")), tokens(t.get("outputSchema")), t["name"]) for t in tools),
        reverse=True,
    )
    return "\n".join(f"{name:20} {total:5} tokens (input {inp}, output {out})" for total, inp, out, name in rows)


async def test_the_catalogue_fits_the_budget_and_no_tool_hogs_it(live: LiveHub) -> None:
    result = await modern_list(live)
    tools = result["tools"]
    assert {t["name"] for t in tools} == {t.name for t in all_tools()}  # every tool is listed
    total = tokens(result)
    table = shares(tools)
    assert total <= BUDGET_TOKENS, f"tools/list is {total} tokens, over {BUDGET_TOKENS}:\n{table}"
    for tool in tools:
        assert tokens(tool) <= TOOL_CEILING_TOKENS, f"{tool['name']} takes {tokens(tool)} tokens:\n{table}"
    # The handshake era lists the very same tools (its result has no cache hints: it is smaller).
    async with live.client() as client:
        listed = await client.list_tools()
    assert [t.name for t in listed.tools] == [t["name"] for t in tools]


async def test_descriptions_are_short_and_say_nothing_twice(live: LiveHub) -> None:
    tools = (await modern_list(live))["tools"]
    for tool in tools:
        description = tool["description"]
        assert 0 < len(description) <= DESCRIPTION_MAX, (tool["name"], len(description))
        assert "title" not in tool  # the name says it
        assert "description" not in tool["inputSchema"], tool["name"]  # the tool's description says it
    descriptions = [t["description"] for t in tools]
    assert len(set(descriptions)) == len(descriptions)


async def test_output_schemas_describe_the_tools_own_result(live: LiveHub) -> None:
    """The `notifications` trailer is described once, in the guide, not in every output schema:
    only notify_wait, whose result it is, lists it. Output schemas allow unlisted members, so a
    result that carries the trailer still matches."""
    tools = (await modern_list(live))["tools"]
    for tool in tools:
        out = tool["outputSchema"]
        assert out["type"] == "object" and out.get("additionalProperties", True) is True, tool["name"]
        listed = "notifications" in out.get("properties", {})
        assert listed == (tool["name"] == "notify_wait"), tool["name"]
        assert not prose(out), tool["name"]
    guide = (SKILL_DIR / "references" / "notifications.md").read_text()
    for member in ("notifications", "pending", "more", "source", "subscription_id", "thread_id", "expired"):
        assert f"`{member}" in guide or f'"{member}"' in guide, member


async def test_schemas_are_portable_in_both_directions(live: LiveHub) -> None:
    """Zero findings by the Inspector's `--strict` rules: no `type: [X, "null"]` anywhere (an
    optional input member is simply optional; null still reads as absent), nothing untyped."""
    tools = (await modern_list(live))["tools"]
    found = {t["name"]: findings(t["inputSchema"]) + findings(t["outputSchema"]) for t in tools}
    assert {name: f for name, f in found.items() if f} == {}


async def test_an_optional_null_still_reads_as_absent(live: LiveHub) -> None:
    """The schema no longer lists `null` for an optional member; a client that sends it anyway is
    served as before (absent), and a required member's null is still refused."""
    await live.make_project("web")
    async with live.client() as client:
        read = structured(await client.call_tool("feed_read", {"project_id": "web", "limit": None, "since": None}))
        assert read["events"] == []
        refused = await client.call_tool("feed_read", {"project_id": None})
        assert refused.is_error and "project_id" in refused.content[0].text.split("\n")[0]  # type: ignore[union-attr]


def test_the_tool_registry_matches_what_is_served() -> None:
    """The lean schemas are what the `Tool` holds (so REST's OpenAPI, built from the typed
    requests, is untouched by them); every output schema has only its own members."""
    for tool in all_tools():
        assert "notifications" not in tool.output_schema.get("properties", {}) or tool.name == "notify_wait"
        assert findings(tool.input_schema) == [] and findings(tool.output_schema) == [], tool.name
