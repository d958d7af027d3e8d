"""Seeding and navigation helpers for the projects, feed, sessions, storage and access screens'
tests: what agents do is done over MCP with their own token, what the human does through REST."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import expect

from tests.webapp.conftest import Hub

# What a hostile agent writes where the human will read it: if it were ever parsed as HTML the
# handler would run and set the flag.
XSS = '<img src=x onerror="window.__xss=1">'


def go(page: Any, hash_: str, title: str | None = None) -> None:
    """Move the open app to another screen (as a link would) and wait for its heading."""
    page.evaluate("h => { location.hash = h; }", hash_)
    if title is not None:
        expect(page.locator("h1")).to_have_text(title)


def no_script_ran(page: Any) -> None:
    assert page.evaluate("window.__xss") is None
    assert page.locator("main img").count() == 0


def session(
    hub: Hub,
    token: str,
    project_id: str,
    name: str,
    files: dict[str, str] | None = None,
    *,
    end: bool = False,
    handoff: str | None = None,
) -> str:
    """A session an agent started (its brain holding `files`), ended when asked; its id."""
    started = hub.mcp(token, "session_start", {"project_id": project_id, "name": name})
    session_id = str(started["session_id"])
    for path, content in (files or {}).items():
        hub.mcp(token, "brain_put", {"session_id": session_id, "store": "session", "path": path, "content": content})
    if end:
        args: dict[str, Any] = {"session_id": session_id}
        if handoff is not None:
            args["handoff"] = handoff
        hub.mcp(token, "session_end", args)
    return session_id


def signals(hub: Hub, token: str, project_id: str, count: int, prefix: str = "step") -> list[str]:
    """`count` signals in order; their event ids, oldest first."""
    return [
        str(hub.mcp(token, "signal_append", {"project_id": project_id, "summary": f"{prefix} {i}"})["event_id"])
        for i in range(1, count + 1)
    ]
