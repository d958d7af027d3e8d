"""Accessibility: axe-core (axe-playwright-python) on every screen, phone width, in the light and the
dark theme, with no serious or critical violation; each screen seeded so its rows are drawn. The
screens are reached on one open app page, as the human moves between them (tests/webapp/shared_pages.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.adversarial.rest_support import subscription
from tests.webapp.conftest import Hub
from tests.webapp.shared_pages import page_pool_fixture, shared_fixture  # noqa: F401 (fixtures)

pytestmark = pytest.mark.browser

Seeds = dict[str, str]


@pytest.fixture(scope="module")
def seeds(hub: Hub) -> Iterator[Seeds]:
    agent = hub.new_agent("auditor")
    project = hub.new_project("a11y")
    hub.question(agent, project, "Which colour for the button?", options=["Blue", "Green"], body="Context here.")
    hub.question(
        agent,
        project,
        "Order details?",
        form={
            "type": "object",
            "required": ["email"],
            "properties": {
                "email": {"type": "string", "format": "email", "title": "Reply to", "description": "Where to send it"},
                "copies": {"type": "integer", "minimum": 1, "maximum": 5, "default": 2},
                "colour": {"type": "string", "enum": ["r", "b"], "enumNames": ["Red", "Blue"]},
                "extras": {"type": "array", "items": {"type": "string", "enum": ["gift", "rush"]}},
                "ok": {"type": "boolean", "title": "Confirm"},
            },
        },
    )
    # A push device (its endpoint refuses connections at once), so Settings draws a device row.
    device = hub.rest("POST", "/push/devices", subscription("http://127.0.0.1:9/audit"), expect=201)
    hub.question(agent, project, "Open question with a deadline?", expires_in_seconds=3600)
    hub.approval(agent, project, "Deploy now?")
    hub.mcp(agent, "signal_append", {"project_id": project, "kind": "idea", "summary": "An idea to read"})
    hub.mcp(agent, "signal_append", {"project_id": project, "summary": "Progress made"})
    session = hub.mcp(agent, "session_start", {"project_id": project, "name": "audit"})["session_id"]
    art = hub.mcp(
        agent,
        "artifact_publish",
        {
            "project_id": project,
            "title": "Audit page",
            "kind": "html",
            "content": "<main><h1>Audit</h1><p>Some words</p></main>",
        },
    )["artifact_id"]
    hub.mcp(
        agent,
        "comment_post",
        {"artifact_id": art, "body": "Check this", "anchor": {"mode": "text", "quote": "Some words"}},
    )
    hub.mcp(agent, "artifact_draft", {"artifact_id": art, "content": "<main><h1>Audit</h1><p>More words</p></main>"})
    locked = hub.agent_call(
        agent,
        "artifact_publish",
        {
            "project_id": project,
            "title": "Locked",
            "kind": "html",
            "content": "<p>secret</p>",
            "password": "audit password",
        },
    )
    guide = (
        "---\ntype: Guide\ntitle: Guide\nstatus: draft\n---\n# Guide\n\n| a | b |\n|--:|--|\n| 1 | [x](other.md) |\n"
    )
    hub.rest("PUT", f"/projects/{project}/kb/pages/fs/guide.md", {"content": guide})
    hub.rest("PUT", f"/projects/{project}/kb/pages/fs/guide.md", {"content": guide + "\nMore.\n"})
    diff = hub.mcp(
        agent,
        "artifact_publish",
        {
            "project_id": project,
            "title": "Audit diff",
            "kind": "diff",
            "content": (
                "--- a/app.py\n+++ b/app.py\n@@ -1,12 +1,12 @@\n import os\n-def greet():\n+def greet(name):\n"
                + "".join(f" line {n}\n" for n in range(3, 12))
                + "-x = 1\n+x = 2\n"
            ),
        },
    )["artifact_id"]
    hub.mcp(
        agent,
        "comment_post",
        {
            "artifact_id": diff,
            "body": "Who is greeted?",
            "anchor": {"mode": "line", "file": "app.py", "side": "new", "line": 2},
        },
    )
    review = hub.approval(agent, project, "Review the diff", artifact_id=diff)
    yield {
        "project": project,
        "session": str(session),
        "artifact": str(art),
        "locked": str(locked["artifact_id"]),
        "diff": str(diff),
        "review": str(review),
    }
    hub.rest("DELETE", f"/push/devices/{device['id']}", expect=204)


# (screen, its address from the seeds). WEB-B's screens are listed here too.
SCREENS: list[tuple[str, Callable[[Seeds], str]]] = [
    ("home", lambda s: "#/"),
    ("inbox", lambda s: "#/inbox"),
    ("settings", lambda s: "#/settings"),
    ("projects", lambda s: "#/projects"),
    ("project", lambda s: f"#/projects/{s['project']}"),
    ("project-sessions", lambda s: f"#/projects/{s['project']}?tab=sessions"),
    ("project-settings", lambda s: f"#/projects/{s['project']}?tab=settings"),
    ("feed", lambda s: "#/feed"),
    ("session", lambda s: f"#/sessions/{s['session']}"),
    ("storage", lambda s: "#/storage"),
    ("access", lambda s: "#/access"),
    ("search", lambda s: "#/search?q=Progress"),
    ("artifacts", lambda s: f"#/projects/{s['project']}/artifacts"),
    ("artifact", lambda s: f"#/artifacts/{s['artifact']}"),
    ("artifact-protected", lambda s: f"#/artifacts/{s['locked']}"),
    ("artifact-diff", lambda s: f"#/artifacts/{s['diff']}?approval={s['review']}"),
    ("wiki", lambda s: f"#/projects/{s['project']}/wiki?path=/fs/guide.md"),
    ("wiki-history", lambda s: f"#/projects/{s['project']}/wiki?path=/fs/guide.md&view=history"),
    ("wiki-review", lambda s: f"#/projects/{s['project']}/wiki?view=review"),
    ("wiki-lint", lambda s: f"#/projects/{s['project']}/wiki?view=lint"),
]


def audit(page: Any) -> list[str]:
    """Axe's serious and critical violations on the page as it stands. axe-core (570 KB) is injected
    once per document, not once per audit: compiling it costs 0.1 to 0.6 s in a fresh renderer."""
    from axe_playwright_python.base import AXE_SCRIPT

    # Axe reads colours as painted: a toast still rising (opacity below 1) fails contrast. Audit the
    # settled page, as the human reads it, by letting every finite animation finish first.
    page.evaluate(
        "Promise.all(document.getAnimations()"
        ".filter((a) => a.effect && a.effect.getComputedTiming().iterations !== Infinity)"
        ".map((a) => a.finished.catch(() => null)))"
    )
    if not page.evaluate("() => typeof window.axe === 'object' && typeof window.axe.run === 'function'"):
        page.evaluate(AXE_SCRIPT)
    # What axe_playwright_python's Axe().run(page) runs after its injection, with its default options.
    response = page.evaluate("axe.run({resultTypes: ['violations']})")
    return [
        f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes']][:5]}"
        for v in response["violations"]
        if v["impact"] in ("serious", "critical")
    ]


def settle(page: Any) -> None:
    expect(page.locator("h1")).to_be_visible()
    expect(page.locator("main [role=status]", has_text="Loading")).to_have_count(0)
    expect(page.locator("main p", has_text="Loading…")).to_have_count(0)


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize(("screen", "address"), SCREENS, ids=[s for s, _ in SCREENS])
def test_no_serious_violation(
    shared: Any, seeds: Seeds, screen: str, address: Callable[[Seeds], str], theme: str
) -> None:
    page = shared(address(seeds), theme=theme)
    settle(page)
    assert page.evaluate("getComputedStyle(document.body).colorScheme") == theme
    assert audit(page) == []


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_connect_and_dialogs_have_no_serious_violation(opener: Any, shared: Any, theme: str) -> None:
    page = opener(color_scheme=theme, token=None, hash_="#/connect")
    settle(page)
    page.locator("#token").fill("wrong")
    page.get_by_role("button", name="Connect").click()
    expect(page.locator("#token-error")).not_to_be_empty()
    assert audit(page) == []
    connected = shared("#/", theme=theme)
    connected.keyboard.press("?")
    expect(connected.locator("dialog[open]")).to_be_visible()
    assert audit(connected) == []
    connected.keyboard.press("Escape")
    expect(connected.locator("dialog[open]")).to_have_count(0)


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_opened_brain_panels_and_the_token_dialog_have_no_serious_violation(shared: Any, hub: Hub, theme: str) -> None:
    agent_id = f"opener-{theme}"
    agent = hub.new_agent(agent_id)
    project = hub.new_project("a11y-open")
    session = hub.mcp(agent, "session_start", {"project_id": project, "name": "opened"})["session_id"]
    hub.mcp(agent, "brain_put", {"session_id": session, "store": "session", "path": "/fs/notes/a.md", "content": "# A"})
    page = shared(f"#/sessions/{session}", theme=theme)
    page.get_by_role("button", name="Files (/fs/)").click()
    page.locator(".tree-item", has_text="notes").click()
    page.locator(".tree-item", has_text="a.md").click()
    expect(page.locator(".entry-content")).to_have_text("# A")
    page.get_by_role("button", name="Show replay").click()
    expect(page.locator(".replay-call")).to_have_count(1)
    assert audit(page) == []
    page.evaluate("location.hash = '#/access'")
    row = page.locator(f'.agent-row[data-agent="{agent_id}"]')
    row.get_by_role("button", name="Grants").click()
    expect(row.locator(".grants-panel")).not_to_contain_text("Loading")
    row.get_by_role("button", name="New token").click()
    page.locator("dialog").get_by_role("button", name="Issue new token").click()
    expect(page.locator("dialog input.token-field")).to_be_visible()
    assert audit(page) == []
    hub.tokens[agent_id] = page.locator("dialog input.token-field").input_value()  # the old one is revoked
    page.locator("dialog").get_by_role("button", name="Done").click()
    expect(page.locator("dialog[open]")).to_have_count(0)


def test_reduced_motion_turns_animation_off(opener: Any) -> None:
    page = opener()
    page.emulate_media(reduced_motion="reduce")
    page.evaluate("location.hash = '#/settings'")
    page.locator("label[for=density-compact]").click()  # saving shows no toast; make one
    page.evaluate(
        "document.getElementById('toasts').append(Object.assign(document.createElement('div'),"
        " {className: 'toast', textContent: 'x'}))"
    )
    assert page.evaluate("getComputedStyle(document.querySelector('.toast')).animationName") == "none"
