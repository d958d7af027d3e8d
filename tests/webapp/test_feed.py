"""A project's feed and the global feed: kind chips, day groups, paging back by cursor, unseen marks
from the human's cursor, the cursor posted as the spec's rules say, ideas posted from the app, and
what agents wrote shown as text."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.webapp.conftest import Hub
from tests.webapp.seed import XSS, go, no_script_ran, signals

pytestmark = pytest.mark.browser


def test_a_feed_pages_back_marks_what_is_unseen_and_posts_the_cursor(app_page: Any, hub: Hub) -> None:
    token = hub.new_agent("feeder")
    project = hub.new_project("feed")
    ids = signals(hub, token, project, 60)
    # The human had seen up to the 55th: the five above it are unseen.
    assert hub.rest("POST", f"/projects/{project}/feed/seen", {"event_id": ids[54]})["advanced"] is True

    go(app_page, f"#/projects/{project}", project)
    rows = app_page.locator(".feed-row")
    expect(rows).to_have_count(50)  # one page, newest first
    expect(rows.first).to_contain_text("step 60")
    expect(app_page.locator(".feed-row.unseen")).to_have_count(5)
    expect(app_page.locator(".feed-row.unseen").last).to_contain_text("step 56")
    expect(app_page.locator(f'.feed-row[data-id="{ids[54]}"] .new-mark')).to_have_count(0)
    expect(app_page.locator(".day-title").first).to_have_text("Today")
    hub.wait_last_seen(project, ids[-1])  # the newest id of the whole feed it saw

    app_page.get_by_role("button", name="Load older").click()
    expect(rows).to_have_count(60)
    expect(rows.last).to_contain_text("step 1")
    expect(app_page.get_by_role("button", name="Load older")).to_be_hidden()


def test_new_events_arrive_live_marked_new_and_move_the_cursor(app_page: Any, hub: Hub) -> None:
    token = hub.new_agent("feeder")
    project = hub.new_project("live")
    first = signals(hub, token, project, 1, "before")
    go(app_page, f"#/projects/{project}", project)
    expect(app_page.locator(".feed-row")).to_have_count(1)
    hub.wait_last_seen(project, first[0])

    later = signals(hub, token, project, 2, "arrived")
    expect(app_page.locator(".feed-row")).to_have_count(3)
    expect(app_page.locator(".feed-row").first).to_contain_text("arrived 2")
    expect(app_page.locator(".feed-row.unseen")).to_have_count(3)  # unseen when the screen opened
    hub.wait_last_seen(project, later[-1])


def test_kind_chips_filter_and_a_filtered_page_posts_the_whole_feeds_newest(app_page: Any, hub: Hub) -> None:
    token = hub.new_agent("feeder")
    project = hub.new_project("chips")
    question = hub.question(token, project, "which colour?")
    newest = signals(hub, token, project, 1, "painted")[0]
    go(app_page, f"#/projects/{project}", project)
    expect(app_page.locator(".feed-row")).to_have_count(2)
    hub.wait_last_seen(project, newest)

    app_page.get_by_role("button", name="question", exact=True).click()
    expect(app_page.get_by_role("button", name="question", exact=True)).to_have_attribute("aria-pressed", "true")
    expect(app_page.locator(".feed-row")).to_have_count(1)
    expect(app_page.locator(".feed-row")).to_contain_text("which colour?")
    assert app_page.locator(".feed-row").get_attribute("data-id") == question

    # A signal arrives while only questions show: the page the app re-reads holds no new row, yet
    # the cursor moves to the newest event of the whole feed.
    after = signals(hub, token, project, 1, "unfiltered")[0]
    hub.wait_last_seen(project, after)
    expect(app_page.locator(".feed-row")).to_have_count(1)

    app_page.get_by_role("button", name="All", exact=True).click()
    expect(app_page.locator(".feed-row")).to_have_count(3)


def test_an_idea_posted_from_the_app_lands_in_the_feed(app_page: Any, hub: Hub) -> None:
    project = hub.new_project("ideas")
    go(app_page, f"#/projects/{project}", project)
    expect(app_page.locator(".feed .empty")).to_have_text("No events yet.")
    app_page.get_by_text("Post an idea").click()
    app_page.get_by_label("Idea for the agents").fill("Try the blue theme\nIt reads better at night.")
    app_page.get_by_role("button", name="Post idea").click()

    row = app_page.locator(".feed-row").first
    expect(row).to_contain_text("Try the blue theme")
    expect(row.locator(".kind")).to_have_text("idea")
    events = hub.rest("GET", f"/projects/{project}/feed", None)["events"]
    assert [(e["kind"], e["actor"], e["summary"]) for e in events] == [("idea", "human", "Try the blue theme")]
    assert events[0]["payload"]["body"] == "Try the blue theme\nIt reads better at night."
    expect(app_page.get_by_label("Idea for the agents")).to_have_value("")


def test_an_empty_idea_is_not_sent(app_page: Any, hub: Hub) -> None:
    project = hub.new_project("noidea")
    go(app_page, f"#/projects/{project}", project)
    app_page.get_by_text("Post an idea").click()
    app_page.get_by_label("Idea for the agents").fill("   ")
    app_page.get_by_role("button", name="Post idea").click()
    expect(app_page.locator(".idea .error-text")).to_have_text("Write the idea first")
    assert hub.rest("GET", f"/projects/{project}/feed", None)["events"] == []


def test_an_agents_summary_and_body_are_shown_as_text(app_page: Any, hub: Hub) -> None:
    token = hub.new_agent("feeder")
    project = hub.new_project("xss")
    hub.mcp(token, "signal_append", {"project_id": project, "summary": f"deployed {XSS}", "body": f"log {XSS}"})
    go(app_page, f"#/projects/{project}", project)
    row = app_page.locator(".feed-row").first
    expect(row.locator(".summary")).to_have_text(f"deployed {XSS}")
    row.locator(".feed-item").click()
    expect(row.locator(".feed-detail .body")).to_have_text(f"log {XSS}")
    no_script_ran(app_page)


def test_the_global_feed_shows_every_projects_events_with_their_names(app_page: Any, hub: Hub) -> None:
    token = hub.new_agent("feeder")
    one, two = hub.new_project("g"), hub.new_project("g")
    hub.rest("PATCH", f"/projects/{two}", {"display_name": f"Second {XSS}"})
    signals(hub, token, one, 1, "from one")
    signals(hub, token, two, 1, "from two")
    go(app_page, "#/feed", "Feed")
    expect(app_page.locator(".feed-row").nth(0)).to_contain_text("from two")
    expect(app_page.locator(".feed-row").nth(0).locator(".project")).to_have_text(f"Second {XSS}")
    expect(app_page.locator(".feed-row").nth(1)).to_contain_text("from one")
    expect(app_page.locator(".feed-row .new-mark")).to_have_count(0)  # the global feed has no cursor
    no_script_ran(app_page)
