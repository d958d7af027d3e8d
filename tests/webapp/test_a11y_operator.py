"""Accessibility of the screens issue 25 changed (tests/webapp/test_a11y.py's audit): the Inbox at
volume (grouped, a body unfolded, an answer held for Undo, the admit confirmation), a feed opened at
a search hit, semantic search warming up, and the phone's More menu at 320 px; both themes, phone
and desktop widths; no serious or critical violation."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from playwright.sync_api import expect

from tests.webapp.conftest import DESKTOP, PHONE, Hub
from tests.webapp.shared_pages import go, page_pool_fixture, shared_fixture  # noqa: F401 (fixtures)
from tests.webapp.test_a11y import audit, settle

pytestmark = pytest.mark.browser
THEMES = pytest.mark.parametrize("theme", ["light", "dark"])
WIDTHS = pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["390", "1280"])


@THEMES
@WIDTHS
def test_the_inbox_grouped_with_a_held_answer(shared: Any, hub: Hub, theme: str, viewport: dict[str, int]) -> None:
    agent = hub.new_agent("a11y-inbox")
    project = hub.new_project("a11y-inbox")
    qid = hub.question(agent, project, "Held?", options=["Yes", "No"], body="Context line.\n" * 8)
    hub.approval(agent, project, "Approve with a deadline?", expires_in_seconds=3600)
    page = shared(f"#/inbox?project={project}", viewport=viewport, theme=theme, undo_seconds=5)
    settle(page)
    page.locator("#filter-group").check()
    row = page.locator(f'li.row[data-event-id="{qid}"]')
    row.get_by_role("button", name="More", exact=True).click()
    row.get_by_role("button", name="Yes").click()
    expect(row.locator(".held")).to_be_visible()
    assert audit(page) == []
    row.get_by_role("button", name="Undo").click()
    expect(row.locator(".held")).to_have_count(0)


@THEMES
def test_the_admit_confirmation(shared: Any, hub: Hub, theme: str) -> None:
    r = httpx.post(
        f"{hub.url}/api/v1/enrol",
        json={"display_name": "Auditee", "why": "to be audited", "suggested_id": f"auditee-{theme}"},
        timeout=10,
    )
    assert r.status_code == 202, r.text
    agent_id = r.json()["agent_id"]
    page = shared(f"#/inbox?project=space-{agent_id}", viewport=DESKTOP, theme=theme)
    settle(page)
    page.locator("li.row.kind-enrol_request").get_by_role("button", name="Admit").click()
    expect(page.locator("dialog[open] .admit-why")).to_have_text("to be audited")
    assert audit(page) == []
    page.locator("dialog[open]").get_by_role("button", name="Cancel").click()
    page.locator("li.row.kind-enrol_request").get_by_role("button", name="Refuse").click()
    expect(page.locator("li.row.kind-enrol_request")).to_have_attribute("data-status", "resolved")  # not left pending


@THEMES
@WIDTHS
def test_a_feed_opened_at_a_search_hit(shared: Any, hub: Hub, theme: str, viewport: dict[str, int]) -> None:
    agent = hub.new_agent("a11y-feed")
    project = hub.new_project("a11y-feed")
    made = [
        str(hub.mcp(agent, "signal_append", {"project_id": project, "summary": f"event {n}"})["event_id"])
        for n in range(30)
    ]
    page = shared(f"#/projects/{project}?tab=feed&event={made[3]}", viewport=viewport, theme=theme)
    expect(page.locator("li.feed-row.target")).to_be_visible()
    expect(page.get_by_role("button", name="Show the newest events")).to_be_visible()
    assert audit(page) == []


@THEMES
def test_semantic_search_warming_up(shared: Any, hub: Hub, theme: str) -> None:
    def warming(route: Any) -> None:
        response = route.fetch()
        body = response.json()
        body.update(backend="fts-fallback", semantic="warming")
        route.fulfill(response=response, body=json.dumps(body))

    page = shared(theme=theme)
    page.route("**/api/v1/search?*mode=semantic*", warming)
    go(page, "#/search?q=event&mode=semantic")
    # A worker's hub may be answering its first search (test_search.py waits as long for its first).
    expect(page.locator(".backend-note")).to_contain_text("warming up", timeout=15_000)
    assert audit(page) == []
    page.unroute_all(behavior="ignoreErrors")  # the screen keeps retrying: a late retry meets no handler


@THEMES
def test_the_more_menu_at_320(shared: Any, theme: str) -> None:
    page = shared("#/settings", viewport={"width": 320, "height": 640}, theme=theme)
    settle(page)
    page.locator("nav.tabs button.more-tab").click()
    expect(page.locator("#more-menu")).to_be_visible()
    assert audit(page) == []
    page.keyboard.press("Escape")
    expect(page.locator("#more-menu")).to_be_hidden()
