"""Inbox: answer a question by option and by text, decide an approval with a note, read and unread,
mark all read, filters, deadlines; every answer checked in what the hub stored afterwards."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.webapp.conftest import Hub

pytestmark = pytest.mark.browser


def row(page: Any, event_id: str) -> Any:
    return page.locator(f'li.row[data-event-id="{event_id}"]')


def idea(hub: Hub, agent: str, project: str, summary: str) -> str:
    return str(hub.mcp(agent, "signal_append", {"project_id": project, "kind": "idea", "summary": summary})["event_id"])


def unfold(item: Any, label: str) -> None:
    """A phone's compact row folds its answer form behind Answer (or Decide): open it."""
    item.locator("summary", has_text=label).click()


def open_inbox(page: Any, query: str = "") -> None:
    page.evaluate("q => { location.hash = '#/inbox' + q; }", query)
    expect(page.locator("h1")).to_have_text("Inbox")
    expect(page.locator(".inbox-lists .muted", has_text="Loading")).to_have_count(0)


def test_a_question_answered_by_an_option_is_sent_once(app_page: Any, hub: Hub) -> None:
    agent = hub.new_agent("asker")
    project = hub.new_project("inbox")
    qid = hub.question(agent, project, "Which database?", options=["Postgres", "SQLite"], body="We need one.")
    open_inbox(app_page)
    item = row(app_page, qid)
    expect(item.locator(".row-body")).to_have_text("We need one.")
    button = item.get_by_role("button", name="SQLite")
    button.dblclick()  # a double tap sends one answer
    expect(row(app_page, qid)).to_have_attribute("data-status", "resolved")
    expect(row(app_page, qid).locator(".resolution")).to_contain_text("SQLite")
    stored = hub.item(qid)
    assert stored["status"] == "resolved" and stored["answer"]["body"] == "SQLite"
    feed = hub.rest("GET", f"/projects/{project}/feed", None)["events"]
    assert sum(1 for e in feed if e["kind"] == "answer") == 1


def test_a_question_answered_in_free_text(app_page: Any, hub: Hub) -> None:
    agent = hub.new_agent("asker")
    project = hub.new_project("inbox")
    qid = hub.question(agent, project, "What should the release be called?")
    open_inbox(app_page)
    item = row(app_page, qid)
    expect(item.locator("textarea.answer")).to_be_hidden()  # compact on a phone
    unfold(item, "Answer")
    send = item.get_by_role("button", name="Send answer")
    send.click()
    expect(item.locator(".error-text")).to_have_text("Write an answer first.")
    assert hub.item(qid)["status"] == "waiting"  # nothing sent
    item.locator("textarea.answer").fill("  Blue Heron  ")
    send.click()
    expect(row(app_page, qid).locator(".resolution")).to_contain_text("Blue Heron")
    assert hub.item(qid)["answer"]["body"] == "Blue Heron"


def test_an_approval_decided_with_a_note_and_the_counter(app_page: Any, hub: Hub) -> None:
    agent = hub.new_agent("asker")
    project = hub.new_project("inbox")
    aid = hub.approval(agent, project, "Deploy to production?")
    open_inbox(app_page)
    item = row(app_page, aid)
    unfold(item, "Decide")
    note = item.locator("textarea.note")
    counter = item.locator(".counter")
    note.fill("x" * 1799)
    expect(counter).to_be_hidden()
    note.fill("x" * 2001)
    expect(counter).to_be_visible()
    expect(counter).to_have_text("2,001 / 2,000 characters")
    item.get_by_role("button", name="Approve").click()
    expect(item.locator(".error-text")).to_contain_text("over 2,000")
    assert hub.item(aid)["status"] == "waiting"  # the over-long note decided nothing
    note.fill("Go ahead after the backup.")
    item.get_by_role("button", name="Approve").click()  # the fold stays open: the row kept its state
    expect(row(app_page, aid).locator(".resolution")).to_contain_text("Approved")
    expect(row(app_page, aid).locator(".resolution")).to_contain_text("Note: Go ahead after the backup.")
    decision = hub.item(aid)["decision"]
    assert decision["decision"] == "approved" and decision["note"] == "Go ahead after the backup."


def test_the_keyboard_a_asks_first_with_the_safe_action_focused(app_page: Any, hub: Hub) -> None:
    agent = hub.new_agent("asker")
    project = hub.new_project("inbox")
    aid = hub.approval(agent, project, "Delete the staging bucket?")
    open_inbox(app_page, f"?project={project}")
    app_page.keyboard.press("j")
    expect(row(app_page, aid)).to_be_focused()
    app_page.keyboard.press("a")
    dialog = app_page.locator("dialog[open]")
    expect(dialog.get_by_role("button", name="Decline")).to_be_focused()
    app_page.keyboard.press("Escape")
    expect(dialog).to_have_count(0)
    assert hub.item(aid)["status"] == "waiting"
    app_page.keyboard.press("a")
    dialog.locator("textarea").fill("Not this week.")
    dialog.get_by_role("button", name="Decline").press("Enter")
    expect(row(app_page, aid).locator(".resolution")).to_contain_text("Declined")
    decision = hub.item(aid)["decision"]
    assert decision["decision"] == "declined" and decision["note"] == "Not this week."


def test_read_unread_and_mark_all_read_within_a_project(app_page: Any, hub: Hub) -> None:
    agent = hub.new_agent("thinker")
    project, other = hub.new_project("ideas"), hub.new_project("ideas")
    first, second = idea(hub, agent, project, "Cache the home"), idea(hub, agent, project, "Rename it")
    elsewhere = idea(hub, agent, other, "Keep me")
    open_inbox(app_page)
    row(app_page, first).get_by_role("button", name="Mark read").click()
    expect(row(app_page, first)).to_have_attribute("data-status", "read")
    assert hub.item(first)["status"] == "read"
    row(app_page, first).get_by_role("button", name="Mark unread").click()
    expect(row(app_page, first)).to_have_attribute("data-status", "unread")
    assert hub.item(first)["status"] == "unread"

    app_page.locator("#filter-project").select_option(project)
    expect(app_page.get_by_role("button", name="Mark all read in this project")).to_be_visible()
    app_page.get_by_role("button", name="Mark all read in this project").click()
    expect(app_page.locator(".toast")).to_contain_text("Marked 2 items read")
    assert hub.item(first)["status"] == "read" and hub.item(second)["status"] == "read"
    assert hub.item(elsewhere)["status"] == "unread"  # another project's item is untouched


def test_filters_unread_only_and_status(app_page: Any, hub: Hub) -> None:
    agent = hub.new_agent("thinker")
    project = hub.new_project("filters")
    an_idea = idea(hub, agent, project, "An idea")
    qid = hub.question(agent, project, "A question")
    open_inbox(app_page, f"?project={project}")
    expect(row(app_page, an_idea)).to_be_visible()
    expect(row(app_page, qid)).to_be_visible()
    app_page.locator("#filter-unread").check()
    expect(row(app_page, qid)).to_have_count(0)
    expect(row(app_page, an_idea)).to_be_visible()
    expect(app_page.locator("#filter-status")).to_be_disabled()
    app_page.locator("#filter-unread").uncheck()
    app_page.locator("#filter-status").select_option("waiting")
    expect(row(app_page, an_idea)).to_have_count(0)
    expect(row(app_page, qid)).to_be_visible()
    assert "status=waiting" in app_page.url


def test_a_new_question_appears_live_and_a_deadline_counts_down(app_page: Any, hub: Hub) -> None:
    agent = hub.new_agent("asker")
    project = hub.new_project("live")
    open_inbox(app_page, f"?project={project}")
    # Asked the way an agent's shell asks: `hub-cli call` over /mcp with the agent's token.
    qid = hub.agent_call(
        agent, "question_post", {"project_id": project, "summary": "Ship it tonight?", "expires_in_seconds": 3600}
    )["event_id"]
    expect(row(app_page, qid)).to_be_visible()  # no reload: the stream told the screen
    expect(row(app_page, qid).locator(".countdown")).to_contain_text("min")
    expect(row(app_page, qid).locator(".countdown")).to_contain_text("left")


def test_an_expired_item_is_shown_resolved_by_the_hub(app_page: Any, hub: Hub) -> None:
    agent = hub.new_agent("asker")
    project = hub.new_project("expiry")
    # An hour away: the real hub never lets it expire while the worker's later tests count what
    # waits in this shared hub (a minute, the shortest deadline, could pass in one of them).
    aid = hub.approval(agent, project, "Rotate keys?", expires_in_seconds=3600, on_expiry="decline")
    open_inbox(app_page, f"?project={project}")
    expect(row(app_page, aid).locator(".countdown")).to_be_visible()
    # The browser's clock runs ahead past the deadline (the row says so and re-reads), and the hub's
    # answer after its sweep is the one it gives for such an item (resolved, expired, decided by the
    # hub per on_expiry), written into the real response.
    done = hub.item(aid)
    done.update(
        status="resolved",
        expired=True,
        decision={
            "decision": "declined",
            "note": None,
            "actor": "hub",
            "event_id": "x",
            "decided_at": done["expires_at"],
        },
    )

    def expired(route: Any) -> None:
        response = route.fetch()
        body = response.json()
        if "status=waiting" in route.request.url:
            body["items"] = [i for i in body["items"] if i["event_id"] != aid]
            body["total"] -= 1
        if "settled=true" in route.request.url:  # the list of earlier items gains it
            body["items"].insert(0, done)
            body["total"] += 1
        route.fulfill(response=response, json=body)

    app_page.route("**/api/v1/inbox?*", expired)
    app_page.clock.install()
    app_page.clock.fast_forward("01:00:05")
    resolved = row(app_page, aid)
    expect(resolved).to_have_attribute("data-status", "resolved")
    expect(resolved.locator(".tag.expired")).to_have_text("Expired")
    expect(resolved.locator(".resolution")).to_contain_text("Declined by the hub when the deadline passed")
    expect(resolved.get_by_role("button", name="Approve")).to_have_count(0)


def test_keys_j_k_r_and_enter_reach_the_rows_controls(app_page: Any, hub: Hub) -> None:
    agent = hub.new_agent("asker")
    project = hub.new_project("keys")
    qid = hub.question(agent, project, "Older question?")  # oldest waiting first: the question is row one
    aid = hub.approval(agent, project, "Newer approval?")
    open_inbox(app_page, f"?project={project}")
    app_page.keyboard.press("j")
    expect(row(app_page, qid)).to_have_attribute("aria-selected", "true")
    app_page.keyboard.press("r")  # unfolds the compact row's answer form
    expect(row(app_page, qid).locator("textarea.answer")).to_be_focused()
    app_page.keyboard.press("Escape")  # typing: Esc is the field's, no shortcut fires
    row(app_page, qid).focus()
    app_page.keyboard.press("j")
    expect(row(app_page, aid)).to_have_attribute("aria-selected", "true")
    expect(row(app_page, aid)).to_be_focused()
    app_page.keyboard.press("Enter")
    expect(row(app_page, aid).get_by_role("button", name="Decline")).to_be_focused()  # the safe action
    app_page.locator("h1").focus()
    app_page.keyboard.press("k")
    expect(row(app_page, qid)).to_be_focused()
    assert hub.item(aid)["status"] == "waiting" and hub.item(qid)["status"] == "waiting"  # keys decided nothing


def test_a_live_change_keeps_the_answer_being_typed_and_its_focus(app_page: Any, hub: Hub) -> None:
    """Every inbox change redraws the rows: the half-typed answer, its focus and a note's text are
    carried over, never lost."""
    agent = hub.new_agent("asker")
    project = hub.new_project("drafts")
    qid = hub.question(agent, project, "What should the release be called?")
    open_inbox(app_page, f"?project={project}")
    unfold(row(app_page, qid), "Answer")
    answer = row(app_page, qid).locator("textarea.answer")
    answer.click()
    answer.type("Half typed")
    later = hub.question(agent, project, "Another question arrives")  # a live change: the list redraws
    expect(row(app_page, later)).to_have_count(1)
    answer = row(app_page, qid).locator("textarea.answer")
    expect(answer).to_have_value("Half typed")
    expect(answer).to_be_focused()
    app_page.keyboard.type(" and finished")
    expect(answer).to_have_value("Half typed and finished")
    assert hub.item(qid)["status"] == "waiting"  # nothing was sent by the redraw


def test_a_live_redraw_keeps_an_opened_form_open(app_page: Any, hub: Hub) -> None:
    """The human tapped Decide and has typed nothing yet; an item arriving meanwhile redraws the
    Inbox, and the form they opened is still open (a live change never folds it away)."""
    agent = hub.new_agent("asker")
    project = hub.new_project("inbox")
    aid = hub.approval(agent, project, "Rotate the keys?")
    open_inbox(app_page, f"?project={project}")
    unfold(row(app_page, aid), "Decide")
    note = row(app_page, aid).locator("textarea.note")
    expect(note).to_be_visible()
    node = note.element_handle()
    later = hub.approval(agent, project, "And the certificates?")
    expect(row(app_page, later)).to_have_count(1)  # the redraw happened
    assert not node.evaluate("n => n.isConnected")  # a new row, not the old one left standing
    expect(row(app_page, aid).locator("textarea.note")).to_be_visible()
    assert hub.item(aid)["status"] == "waiting"
