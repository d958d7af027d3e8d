"""One vocabulary: the same thing has the same name on every tool and route (issue 10, part 5).

The names settled (docs/decisions.md has the table): a session's id is `session_id`, and
`session` is only ever a reference object; a brain entry's text is `content` both ways; a
question's line is `summary`, as on every event. The old names must not come back.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from hubcore.caller import Caller
from hubcore.hub import Hub
from hubmcp.tools import all_tools
from tests.harness import ADMIN, HubClient
from tests.requests import a_session_start

RETIRED_ARGUMENTS = {"question", "value"}  # became `summary` and `content`
# `value` is retired as a brain entry's text; it is the name of a form question's answer (issue 24,
# as MCP elicitation and the spec's answer event call it), on the answer tool alone.
NAMED_AGAIN = {("answer_post", "value")}
ALICE = Caller.agent("alice")


def members(schema: Any) -> Iterator[tuple[str, Any]]:
    """Every (member name, member schema) of an object schema, through anyOf/oneOf and items."""
    if not isinstance(schema, dict):
        return
    for name, sub in schema.get("properties", {}).items():
        yield name, sub
        yield from members(sub)
    for key in ("anyOf", "oneOf"):
        for sub in schema.get(key, []):
            yield from members(sub)
    yield from members(schema.get("items"))


def test_no_tool_takes_a_retired_name() -> None:
    for tool in all_tools():
        names = {name for name, _ in members(tool.input_schema) if (tool.name, name) not in NAMED_AGAIN}
        assert not names & RETIRED_ARGUMENTS, (tool.name, names & RETIRED_ARGUMENTS)


def test_a_session_reference_is_an_object_and_an_id_is_session_id() -> None:
    seen = 0
    for tool in all_tools():
        props = tool.input_schema["properties"]
        if "session" in props:
            seen += 1
            # An object only (a bare id goes in session_id); the catalogue names its two forms
            # once, in the description (issue 27), and the hub checks them (test_brains).
            assert props["session"]["type"] == "object", tool.name
            assert "{session_id} or {agent, name" in props["session"]["description"], tool.name
            assert "session_id" in props, tool.name
        if "session_id" in props:
            # A string; an optional one reads `null` as absent all the same (requests.parse), but
            # the catalogue publishes no `[string, null]` union.
            assert props["session_id"]["type"] == "string", tool.name
    assert seen == 4  # brain_get, brain_list, brain_put, brain_delete


def test_session_results_name_the_id_session_id() -> None:
    tools = {tool.name: tool for tool in all_tools()}
    for name in ("session_start", "session_end"):
        out = tools[name].output_schema
        assert "session_id" in out["required"] and "id" not in out["properties"], name
    rows = tools["session_list"].output_schema["properties"]["sessions"]["items"]
    assert rows["required"] == ["session_id"]
    assert tools["brain_put"].input_schema["required"] == ["path", "content", "store"]
    assert "content" in tools["brain_get"].output_schema["required"]
    assert tools["question_post"].input_schema["required"] == ["project_id", "summary"]


@pytest.mark.anyio
async def test_rest_session_rows_say_session_id(client: HubClient, hub: Hub) -> None:
    started = await hub.sessions.start(ALICE, a_session_start("web", "task"))
    sid = started["session_id"]
    (row,) = (await client.get("/api/v1/sessions?project=web", headers=ADMIN)).json()["sessions"]
    single = (await client.get(f"/api/v1/sessions/{sid}", headers=ADMIN)).json()
    await client.make_agent("carol")
    moved = (await client.post(f"/api/v1/sessions/{sid}/reassign", json={"agent": "carol"}, headers=ADMIN)).json()
    ended = (await client.post(f"/api/v1/sessions/{sid}/end", json={}, headers=ADMIN)).json()
    for body in (row, single, moved, ended):
        assert body["session_id"] == sid and "id" not in body, body


@pytest.mark.anyio
async def test_the_feed_filters_by_session_id_only(client: HubClient, hub: Hub) -> None:
    started = await hub.sessions.start(ALICE, a_session_start("web", "task"))
    sid = started["session_id"]
    url = "/api/v1/projects/web/feed"
    by_id = (await client.get(url, params={"session_id": sid}, headers=ADMIN)).json()["events"]
    assert [e["session_id"] for e in by_id] == [sid]  # the session's own `started` event
    # `session` is no second name for it: a query parameter the route does not take is refused.
    other = await client.get(url, params={"session": "ses_none"}, headers=ADMIN)
    assert other.status_code == 400 and other.json()["details"]["field"] == "session", other.text
