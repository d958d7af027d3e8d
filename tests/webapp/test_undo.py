"""Undo (issue 25 part 2): an answer or a decision is held five seconds with a visible Undo before it
is sent (Playwright's fake clock runs the seconds); Undo sends nothing; leaving the screen, hiding
the tab or closing it sends at once; a live redraw keeps the held line. Admitting an enrolled agent
from the Inbox asks first, naming the agent and its reason."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from playwright.sync_api import expect

from tests.webapp.conftest import DESKTOP, PHONE, Hub

pytestmark = pytest.mark.browser
VIEWPORTS = pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["390", "1280"])


def row(page: Any, event_id: str) -> Any:
    return page.locator(f'li.row[data-event-id="{event_id}"]')


def held_page(opener: Any, viewport: dict[str, int], project: str) -> Any:
    page = opener(viewport=viewport, undo_seconds=5, clock=True, hash_=f"#/inbox?project={project}")
    expect(page.locator(".inbox-lists .muted", has_text="Loading")).to_have_count(0)
    return page


def unfold(page: Any, item: Any, label: str, viewport: dict[str, int]) -> None:
    if viewport == PHONE:
        item.locator("summary", has_text=label).click()


def answers(hub: Hub, project: str) -> list[dict[str, Any]]:
    return [e for e in hub.rest("GET", f"/projects/{project}/feed")["events"] if e["kind"] == "answer"]


@VIEWPORTS
def test_an_answer_waits_five_seconds_and_undo_sends_nothing(opener: Any, hub: Hub, viewport: dict[str, int]) -> None:
    agent = hub.new_agent("undoer")
    project = hub.new_project("undo")
    qid = hub.question(agent, project, "Which colour?", options=["Red", "Blue"])
    page = held_page(opener, viewport, project)
    item = row(page, qid)
    item.get_by_role("button", name="Red").click()
    held = item.locator(".held")
    expect(held).to_contain_text("Answer “Red”: sending in 5 s.")
    expect(item.get_by_role("button", name="Red")).to_be_hidden()
    page.clock.run_for(3000)
    expect(held).to_contain_text("sending in 2 s.")
    assert hub.item(qid)["status"] == "waiting" and answers(hub, project) == []
    item.get_by_role("button", name="Undo").click()
    expect(held).to_have_count(0)
    expect(item.get_by_role("button", name="Red")).to_be_enabled()
    page.clock.run_for(10_000)
    assert hub.item(qid)["status"] == "waiting" and answers(hub, project) == []  # undone: never sent

    item.get_by_role("button", name="Blue").click()
    expect(held).to_contain_text("Answer “Blue”")
    page.clock.run_for(4000)
    assert hub.item(qid)["status"] == "waiting"
    page.clock.run_for(1100)
    expect(row(page, qid)).to_have_attribute("data-status", "resolved")
    assert hub.item(qid)["answer"]["body"] == "Blue" and len(answers(hub, project)) == 1


@VIEWPORTS
def test_a_decision_is_held_and_send_now_skips_the_wait(opener: Any, hub: Hub, viewport: dict[str, int]) -> None:
    agent = hub.new_agent("undoer")
    project = hub.new_project("undo")
    aid = hub.approval(agent, project, "Merge the branch?")
    page = held_page(opener, viewport, project)
    item = row(page, aid)
    unfold(page, item, "Decide", viewport)
    item.locator("textarea.note").fill("After lunch.")
    item.get_by_role("button", name="Approve").click()
    expect(item.locator(".held")).to_contain_text("Approve: sending in 5 s.")
    assert hub.item(aid)["status"] == "waiting"
    item.get_by_role("button", name="Send now").click()
    expect(row(page, aid)).to_have_attribute("data-status", "resolved")
    decision = hub.item(aid)["decision"]
    assert decision["decision"] == "approved" and decision["note"] == "After lunch."


@VIEWPORTS
def test_a_live_redraw_keeps_the_held_answer_and_undo_returns_the_draft(
    opener: Any, hub: Hub, viewport: dict[str, int]
) -> None:
    agent = hub.new_agent("undoer")
    project = hub.new_project("undo")
    qid = hub.question(agent, project, "Release name?")
    page = held_page(opener, viewport, project)
    item = row(page, qid)
    unfold(page, item, "Answer", viewport)
    item.locator("textarea.answer").fill("Heron")
    item.get_by_role("button", name="Send answer").click()
    expect(item.locator(".held")).to_contain_text("Answer “Heron”")
    later = hub.question(agent, project, "Arrives while held")  # the list redraws every row
    expect(row(page, later)).to_have_count(1)
    expect(row(page, qid).locator(".held")).to_contain_text("Answer “Heron”")
    row(page, qid).get_by_role("button", name="Undo").click()
    if viewport == PHONE and not row(page, qid).locator("textarea.answer").is_visible():
        row(page, qid).locator("summary", has_text="Answer").click()
    expect(row(page, qid).locator("textarea.answer")).to_have_value("Heron")
    page.clock.run_for(10_000)
    assert hub.item(qid)["status"] == "waiting"


@VIEWPORTS
def test_leaving_the_screen_sends_at_once(opener: Any, hub: Hub, viewport: dict[str, int]) -> None:
    agent = hub.new_agent("undoer")
    project = hub.new_project("undo")
    qid = hub.question(agent, project, "Leave now?", options=["Yes", "No"])
    page = held_page(opener, viewport, project)
    row(page, qid).get_by_role("button", name="Yes").click()
    expect(row(page, qid).locator(".held")).to_be_visible()
    page.evaluate("() => { location.hash = '#/settings'; }")  # no clock time passes
    expect(page.locator("h1")).to_have_text("Settings")
    for _ in range(50):
        if hub.item(qid)["status"] == "resolved":
            break
        page.wait_for_timeout(50)
    assert hub.item(qid)["answer"]["body"] == "Yes"


@VIEWPORTS
def test_hiding_or_closing_the_tab_sends_at_once(opener: Any, hub: Hub, viewport: dict[str, int]) -> None:
    agent = hub.new_agent("undoer")
    project = hub.new_project("undo")
    hidden_q = hub.question(agent, project, "Hidden tab?", options=["Yes", "No"])
    closed_q = hub.question(agent, project, "Closed tab?", options=["Yes", "No"])
    page = held_page(opener, viewport, project)
    row(page, hidden_q).get_by_role("button", name="No").click()
    expect(row(page, hidden_q).locator(".held")).to_be_visible()
    page.evaluate(
        "() => { Object.defineProperty(document, 'visibilityState', {value: 'hidden', configurable: true});"
        " document.dispatchEvent(new Event('visibilitychange')); }"
    )
    expect(row(page, hidden_q)).to_have_attribute("data-status", "resolved")
    assert hub.item(hidden_q)["answer"]["body"] == "No"
    page.evaluate("() => Object.defineProperty(document, 'visibilityState', {value: 'visible', configurable: true})")
    row(page, closed_q).get_by_role("button", name="Yes").click()
    expect(row(page, closed_q).locator(".held")).to_be_visible()
    page.close(run_before_unload=True)  # pagehide: the held answer goes out as a keepalive request
    for _ in range(100):
        if hub.item(closed_q)["status"] == "resolved":
            break
        httpx.get(f"{hub.url}/healthz")
    assert hub.item(closed_q)["answer"]["body"] == "Yes"


@VIEWPORTS
def test_admitting_from_the_inbox_names_the_agent_and_its_reason(
    opener: Any, hub: Hub, viewport: dict[str, int]
) -> None:
    suffix = "p" if viewport == PHONE else "d"
    r = httpx.post(
        f"{hub.url}/api/v1/enrol",
        json={"display_name": "Joiner", "why": "<i>to index</i> the docs", "suggested_id": f"joiner-{suffix}"},
        timeout=10,
    )
    assert r.status_code == 202, r.text
    agent_id = r.json()["agent_id"]
    page = opener(viewport=viewport, hash_=f"#/inbox?project=space-{agent_id}")
    item = page.locator("li.row.kind-enrol_request")
    expect(item).to_have_count(1)
    unfold(page, item, "Decide", viewport)
    item.get_by_role("button", name="Admit").click()
    dialog = page.locator("dialog[open]")
    expect(dialog.locator("h2")).to_have_text(f"Admit Joiner ({agent_id})?")
    expect(dialog.locator(".admit-why")).to_have_text("<i>to index</i> the docs")
    assert dialog.locator("i").count() == 0
    dialog.get_by_role("button", name="Cancel").click()
    assert hub.item(item.get_attribute("data-event-id"))["status"] == "waiting"
    agents = {a["id"]: a for a in hub.rest("GET", "/agents")["agents"]}
    assert agents[agent_id]["status"] == "pending"
    item.get_by_role("button", name="Admit").click()
    page.locator("dialog[open]").get_by_role("button", name="Admit").click()
    expect(page.locator("li.row.kind-enrol_request")).to_have_attribute("data-status", "resolved")
    agents = {a["id"]: a for a in hub.rest("GET", "/agents")["agents"]}
    assert agents[agent_id]["status"] == "active"
