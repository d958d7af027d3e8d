"""Home from one GET /api/v1/home: waiting items (newest five, inline approve and reply on wide
screens, N more in the Inbox), unread, agents active, recent events, unseen per project, storage
against capacity with what a prune would free, the node line."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from hubcore import build
from tests.webapp.conftest import DESKTOP, Hub

pytestmark = pytest.mark.browser


def test_home_shows_every_block_from_one_request(opener: Any, hub: Hub) -> None:
    agent = hub.new_agent("homebody")
    project = hub.new_project("home")
    asked = [hub.question(agent, project, f"Question {n}?") for n in range(7)]
    page = opener(DESKTOP)
    calls: list[str] = []
    page.on("request", lambda r: calls.append(r.url) if "/api/v1/" in r.url and "/stream" not in r.url else None)
    page.reload()
    expect(page.locator("h1")).to_have_text("Home")
    home = hub.rest("GET", "/home")
    waiting = page.locator(".panel", has_text="Waiting on you")
    expect(waiting.locator("li.row")).to_have_count(5)
    expect(waiting.locator("li.row").first).to_have_attribute("data-event-id", asked[-1])  # newest first
    expect(waiting.get_by_role("link", name=f"{home['waiting'] - 5} more in the Inbox")).to_be_visible()
    stats = page.locator(".stat-row")
    expect(stats.locator(".stat", has_text="waiting on you").locator(".num")).to_have_text(str(home["waiting"]))
    expect(stats.locator(".stat", has_text="unread").locator(".num")).to_have_text(str(home["unread"]))
    expect(stats.locator(".stat", has_text="agents active").locator(".num")).to_have_text(str(home["agents_active"]))
    assert home["agents_active"] >= 1
    expect(page.locator(".panel", has_text="Recent events").locator("li.row").first).to_contain_text("Question 6?")
    expect(page.locator(".panel", has_text="Unseen by project")).to_contain_text(project)
    storage = page.locator(".panel", has_text="Storage")
    expect(storage).to_contain_text("used of")
    expect(storage.locator(".meter")).to_be_visible()
    expect(page.locator(".node-line")).to_contain_text(home["node"]["host"])
    expect(page.locator(".node-line")).to_contain_text(f"Agent Hub {build.version()}")
    home_calls = [c for c in calls if c.endswith("/api/v1/home")]
    # Home reads one route (the app reads the hub's limits once a connection, whatever the screen).
    assert len(home_calls) >= 1 and all("/api/v1/home" in c for c in calls if not c.endswith("/api/v1/limits")), calls
    expect(page.locator("a.tab[data-tab=inbox] .badge")).to_have_text(str(home["waiting"]))


def test_approve_inline_on_a_wide_screen(opener: Any, hub: Hub) -> None:
    agent = hub.new_agent("homebody")
    project = hub.new_project("home")
    aid = hub.approval(agent, project, "Merge the branch?")
    page = opener(DESKTOP)
    item = page.locator(f'li.row[data-event-id="{aid}"]')
    expect(item.get_by_role("button", name="Approve")).to_be_visible()  # inline, not folded
    item.locator("textarea.note").fill("Squash it.")
    item.get_by_role("button", name="Approve").click()
    expect(page.locator(f'li.row[data-event-id="{aid}"]')).to_have_count(0)  # no longer waiting
    decision = hub.item(aid)["decision"]
    assert decision["decision"] == "approved" and decision["note"] == "Squash it."


def test_reply_from_home_on_a_phone(app_page: Any, hub: Hub) -> None:
    agent = hub.new_agent("homebody")
    project = hub.new_project("home")
    qid = hub.question(agent, project, "Lunch?")
    app_page.reload()
    item = app_page.locator(f'li.row[data-event-id="{qid}"]')
    expect(item.locator("textarea.answer")).to_be_hidden()  # folded on a phone
    item.locator("summary", has_text="Answer").click()
    item.locator("textarea.answer").fill("Noodles")
    item.get_by_role("button", name="Send answer").click()
    expect(app_page.locator(f'li.row[data-event-id="{qid}"]')).to_have_count(0)
    assert hub.item(qid)["answer"]["body"] == "Noodles"


def test_home_refreshes_when_a_question_arrives(app_page: Any, hub: Hub) -> None:
    agent = hub.new_agent("homebody")
    project = hub.new_project("home")
    expect(app_page.locator("html[data-live=live]")).to_have_count(1)
    qid = hub.question(agent, project, "Arrived live?")
    expect(app_page.locator(f'li.row[data-event-id="{qid}"]')).to_be_visible()


def test_a_live_change_keeps_a_half_typed_reply_on_a_phone(app_page: Any, hub: Hub) -> None:
    """Home redraws on every inbox change: the reply being typed stays, unfolded and focused, and
    nothing is sent by the redraw."""
    agent = hub.new_agent("homebody")
    project = hub.new_project("home")
    qid = hub.question(agent, project, "Which branch?")
    app_page.reload()
    item = app_page.locator(f'li.row[data-event-id="{qid}"]')
    item.locator("summary", has_text="Answer").click()
    item.locator("textarea.answer").click()
    item.locator("textarea.answer").type("The release")
    later = hub.question(agent, project, "Arriving while a reply is typed")
    expect(app_page.locator(f'li.row[data-event-id="{later}"]')).to_be_visible()
    answer = app_page.locator(f'li.row[data-event-id="{qid}"] textarea.answer')
    expect(answer).to_be_visible()
    expect(answer).to_have_value("The release")
    expect(answer).to_be_focused()
    app_page.keyboard.type(" branch")
    expect(answer).to_have_value("The release branch")
    assert hub.item(qid)["status"] == "waiting"
