"""Clients that open a new MCP session per call (langchain-mcp-adapters' default, issue 27).

Each call below goes through a fresh SDK client: a new `Mcp-Session-Id` in the handshake era, a
request without `Hub-Connection` on 2026-07-28. No active session survives between calls, so a
session-bound call that names none must say how to name one (`session_id`), never only "call
session_start first" (an instruction that sends an agent in a loop), and the named calls work.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.harness import ADMIN
from tests.mcp.live import ERAS, LiveHub, structured, tool_error

pytestmark = pytest.mark.anyio


async def once(live: LiveHub, token: str, mode: str, tool: str, arguments: dict[str, Any]) -> Any:
    """One call through a brand-new client (and so a brand-new MCP session)."""
    async with live.client(token, mode=mode) as client:
        return await client.call_tool(tool, arguments)


def says_how_to_name_it(error: dict[str, Any]) -> None:
    assert error["code"] == "conflict", error
    assert "session_id" in error["message"], error
    assert not error["message"].rstrip(".").endswith("call session_start first"), error


@pytest.mark.parametrize("mode", ERAS)
async def test_a_new_client_per_call_works_by_naming_the_session(live: LiveHub, mode: str) -> None:
    token = await live.make_agent("chain")
    await live.make_project("web")
    started = structured(await once(live, token, mode, "session_start", {"project_id": "web", "name": "per-call"}))
    sid = started["session_id"]

    # The next client has no active session: every session-bound call says to pass session_id.
    for tool, arguments in (
        ("brain_put", {"path": "/kv/plan", "content": "step 1", "store": "session"}),
        ("brain_get", {"path": "/kv/plan"}),
        ("brain_list", {"path": "/kv/"}),
        ("brain_delete", {"path": "/kv/plan", "store": "session"}),
        ("session_end", {}),
        ("brain_promote", {"from_path": "/kv/plan", "to_path": "/fs/plan.md", "project_id": "web"}),
    ):
        says_how_to_name_it(tool_error(await once(live, token, mode, tool, arguments), "conflict"))
    # Nothing was written by the refused calls: the brain is empty, the session still runs.
    r = await live.http.get(f"/api/v1/sessions/{sid}", headers=ADMIN)
    assert r.status_code == 200 and r.json()["status"] == "active", r.text
    listed = structured(await once(live, token, mode, "brain_list", {"path": "/kv/", "session_id": sid}))
    assert listed["entries"] == []

    # Naming it works, call after call, each from a new client.
    put = structured(
        await once(
            live,
            token,
            mode,
            "brain_put",
            {"path": "/kv/plan", "content": "step 1", "store": "session", "session_id": sid},
        )
    )
    assert put["session_id"] == sid
    got = structured(await once(live, token, mode, "brain_get", {"path": "/kv/plan", "session_id": sid}))
    assert got["content"] == "step 1" and got["version"] == put["version"]
    signal = structured(
        await once(
            live, token, mode, "signal_append", {"project_id": "web", "summary": "step 1 done", "session_id": sid}
        )
    )
    r = await live.http.get("/api/v1/projects/web/feed", headers=ADMIN)
    assert any(e["id"] == signal["event_id"] and e["session_id"] == sid for e in r.json()["events"]), r.text
    ended = structured(await once(live, token, mode, "session_end", {"session_id": sid, "handoff": "done"}))
    assert ended["status"] == "ended"
    r = await live.http.get(f"/api/v1/sessions/{sid}", headers=ADMIN)
    assert r.json()["status"] == "ended" and r.json()["handoff"] == "done", r.text
