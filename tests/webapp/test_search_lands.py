"""Search lands where it points (issue 25 part 3): a feed hit opens its project's feed at that event,
marked and opened, with the events around it (not the top of the feed); semantic mode says "warming
up" while the hub's model loads and asks again by itself until meaning answers."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.webapp.conftest import DESKTOP, PHONE, Hub
from tests.webapp.seed import XSS, no_script_ran

pytestmark = pytest.mark.browser
VIEWPORTS = pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["390", "1280"])


@VIEWPORTS
def test_a_feed_hit_opens_the_feed_at_its_event(opener: Any, hub: Hub, viewport: dict[str, int]) -> None:
    agent = hub.new_agent("lander")
    project = hub.new_project("lands")
    word = f"needle{viewport['width']}"
    made = []
    for n in range(60):
        summary = f"{word} {XSS}" if n == 10 else f"step {n}"
        made.append(
            str(
                hub.mcp(
                    agent,
                    "signal_append",
                    {"project_id": project, "summary": summary, "payload": {"body": f"body of {n}"}},
                )["event_id"]
            )
        )
    target = made[10]
    page = opener(viewport=viewport, hash_=f"#/search?q={word}")
    hit = page.locator(".hit a.hit-link").first
    expect(hit).to_be_visible()
    hit.click()
    expect(page.locator("h1")).to_have_text(project)
    assert f"event={target}" in page.url
    row = page.locator(f'li.feed-row[data-id="{target}"]')
    expect(row).to_have_class(re.compile(r"\btarget\b"))
    expect(row).to_have_attribute("aria-current", "true")
    expect(row.locator(".target-mark")).to_have_text("Search hit")
    expect(row.locator(".feed-detail")).to_be_visible()
    expect(row.locator(".feed-detail")).to_contain_text("body of 10")
    expect(row.locator(".summary")).to_have_text(f"{word} {XSS}")  # as text
    expect(row).to_be_in_viewport()
    for near in (made[9], made[11], made[0], made[35]):  # the events around it, older and newer
        expect(page.locator(f'li.feed-row[data-id="{near}"]')).to_have_count(1)
    expect(page.locator(f'li.feed-row[data-id="{made[59]}"]')).to_have_count(0)  # not the top of the feed
    newest = page.get_by_role("button", name="Show the newest events")
    expect(newest).to_be_visible()
    newest.click()
    expect(page.locator(f'li.feed-row[data-id="{made[59]}"]')).to_have_count(1)
    expect(page.locator("li.feed-row.target")).to_have_count(0)
    # What is stored: the human's feed cursor moved to the newest event shown, never past it.
    hub.wait_last_seen(project, made[59])
    no_script_ran(page)


@VIEWPORTS
def test_a_hit_whose_event_is_gone_says_so_and_shows_the_newest(
    opener: Any, hub: Hub, viewport: dict[str, int]
) -> None:
    agent = hub.new_agent("lander")
    project = hub.new_project("lands")
    last = hub.mcp(agent, "signal_append", {"project_id": project, "summary": "the only event"})["event_id"]
    page = opener(viewport=viewport, hash_=f"#/projects/{project}?tab=feed&event=01ARZ3NDEKTSV4RRFFQ69G5FAV")
    expect(page.locator(".feed-notice")).to_have_text(
        "The event the search pointed at is not in this feed now; showing the newest."
    )
    expect(page.locator(f'li.feed-row[data-id="{last}"]')).to_have_count(1)


@VIEWPORTS
def test_semantic_mode_says_warming_up_and_retries_by_itself(opener: Any, hub: Hub, viewport: dict[str, int]) -> None:
    word = f"gearwheel{viewport['width']}"
    hub.mcp(
        hub.new_agent("lander"), "signal_append", {"project_id": hub.new_project("warm"), "summary": f"{word} polished"}
    )
    asked: list[str] = []

    def warming_twice(route: Any) -> None:
        response = route.fetch()
        body = response.json()
        asked.append(route.request.url)
        if len(asked) <= 2:  # a hub whose model is still loading answers lexically and says so
            body.update(backend="fts-fallback", semantic="warming")
        else:  # then meaning answers
            body["backend"] = "hybrid"
            body.pop("semantic", None)
        route.fulfill(response=response, body=json.dumps(body))

    page = opener(viewport=viewport)
    page.route("**/api/v1/search?*mode=semantic*", warming_twice)
    page.evaluate("h => { location.hash = h; }", f"#/search?q={word}&mode=semantic")
    note = page.locator(".backend-note")
    expect(note).to_contain_text("Meaning search is warming up")
    expect(note).not_to_contain_text("not available")
    expect(page.locator(".hit", has_text=f"{word} polished")).to_have_count(1)  # word matches meanwhile
    expect(note).to_have_text("Word matches blended with matches by meaning.", timeout=15_000)
    assert len(asked) == 3 and all(f"q={word}" in u for u in asked)
    page.wait_for_timeout(1500)
    assert len(asked) == 3  # meaning answered: no more retries
