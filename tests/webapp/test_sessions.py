"""Sessions: a project's list (active and ended), a session's detail (handoff, lineage), its brain
browsed as a lazy tree with an entry viewer, its replay, and the human's verbs: end, reassign, prune
with its undo. Names and entries an agent wrote are shown as text."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.webapp.conftest import Hub
from tests.webapp.seed import XSS, go, no_script_ran, session

pytestmark = pytest.mark.browser


def stored(hub: Hub, session_id: str) -> Any:
    r = hub.http.get(f"/api/v1/sessions/{session_id}")
    return r.json() if r.status_code == 200 else r.status_code


def test_the_brain_is_browsed_as_a_lazy_tree_with_entries_shown_as_text(app_page: Any, hub: Hub) -> None:
    token = hub.new_agent("thinker")
    project = hub.new_project("brain")
    sid = session(
        hub,
        token,
        project,
        "plan the shop",
        {
            "/fs/notes/plan.md": f"# Plan\n{XSS}\nstep two",
            "/fs/readme.md": "hello",
            "/kv/state": "running",
        },
    )
    go(app_page, f"#/projects/{project}?tab=sessions", project)
    app_page.get_by_role("link", name="plan the shop").click()
    expect(app_page.locator("h1")).to_have_text("Session plan the shop")

    tree = app_page.locator(".brain")
    expect(tree.locator(".tree-item")).to_have_count(2)  # the two namespaces, nothing read yet
    tree.get_by_role("button", name="Files (/fs/)").click()
    expect(tree.get_by_role("button", name="Files (/fs/)")).to_have_attribute("aria-expanded", "true")
    expect(tree.locator(".tree-item", has_text="readme.md")).to_be_visible()
    notes = tree.locator(".tree-item.dir", has_text="notes")
    expect(tree.locator(".tree-item", has_text="plan.md")).to_have_count(0)  # a level is read when opened
    notes.click()
    tree.locator(".tree-item", has_text="plan.md").click()

    viewer = app_page.locator(".entry-viewer")
    expect(viewer.locator(".entry-path")).to_have_text("/fs/notes/plan.md")
    expect(viewer.locator(".entry-path")).to_be_focused()
    expect(viewer.locator(".entry-content")).to_have_text(f"# Plan\n{XSS}\nstep two")
    no_script_ran(app_page)

    tree.get_by_role("button", name="Keys (/kv/)").click()
    tree.locator(".tree-item", has_text="state").click()
    expect(viewer.locator(".entry-content")).to_have_text("running")
    viewer.get_by_role("button", name="Close entry").click()
    expect(viewer).to_be_hidden()
    expect(tree.locator(".tree-item", has_text="state")).to_be_focused()  # back to the entry it showed
    app_page.keyboard.press("Enter")  # opened again from the keyboard, closed with Esc
    expect(viewer.locator(".entry-path")).to_be_focused()
    app_page.keyboard.press("Escape")
    expect(viewer).to_be_hidden()
    expect(tree.locator(".tree-item", has_text="state")).to_be_focused()
    assert stored(hub, sid)["status"] == "active"  # browsing changed nothing


def test_a_session_name_an_agent_chose_is_text(app_page: Any, hub: Hub) -> None:
    token = hub.new_agent("thinker")
    project = hub.new_project("names")
    name = f"fix {XSS}"
    sid = session(hub, token, project, name)
    go(app_page, f"#/projects/{project}?tab=sessions", project)
    expect(app_page.locator(".sessions .name")).to_have_text(name)
    go(app_page, f"#/sessions/{sid}", f"Session {name}")
    no_script_ran(app_page)


def test_the_list_splits_active_and_ended_and_shows_handoff_and_lineage(app_page: Any, hub: Hub) -> None:
    token = hub.new_agent("thinker")
    other = hub.new_agent("successor")
    project = hub.new_project("lineage")
    ended = session(hub, token, project, "first shift", {"/kv/x": "1"}, end=True, handoff="carry on with checkout")
    adopted = hub.mcp(other, "session_start", {"project_id": project, "name": "second shift", "from": ended})
    assert adopted["session_id"] == ended  # adopting keeps the id and the brain
    running = session(hub, token, project, "night shift")
    hub.mcp(token, "session_end", {"session_id": running, "handoff": "all quiet"})
    session(hub, token, project, "day shift")

    go(app_page, f"#/projects/{project}?tab=sessions", project)
    active = app_page.locator(".sessions section", has_text="Active")
    expect(active.locator("h2")).to_have_text("Active (2)")
    expect(app_page.locator(".sessions section", has_text="Ended").locator("h2")).to_have_text("Ended (1)")
    expect(app_page.locator(".sessions li", has_text="night shift")).to_contain_text("Handoff: all quiet")

    go(app_page, f"#/sessions/{ended}", "Session second shift")  # adopting renames it
    facts = app_page.locator(".facts")
    expect(facts).to_contain_text("successor")
    expect(facts).to_contain_text("adopted from")
    expect(app_page.locator(".handoff .body")).to_have_text("carry on with checkout")


def test_ending_a_session_with_a_handoff_then_pruning_and_undoing(app_page: Any, hub: Hub) -> None:
    token = hub.new_agent("thinker")
    project = hub.new_project("end")
    sid = session(hub, token, project, "wrap up", {"/fs/a.md": "kept"})
    go(app_page, f"#/sessions/{sid}", "Session wrap up")

    app_page.get_by_role("button", name="End session").click()
    dialog = app_page.locator("dialog")
    expect(dialog.get_by_role("button", name="Cancel")).to_be_focused()  # the safe action
    dialog.get_by_label("Handoff note (optional)").fill("done: see /fs/a.md")
    dialog.get_by_role("button", name="End session").click()
    expect(app_page.locator(".facts")).to_contain_text("ended")
    after = stored(hub, sid)
    assert (after["status"], after["handoff"]) == ("ended", "done: see /fs/a.md")

    app_page.get_by_role("button", name="Prune").click()
    toast = app_page.locator(".toast", has_text="Pruned session wrap up")
    expect(toast).to_be_visible()
    assert stored(hub, sid) == 404
    expect(app_page.locator("main .error-text")).to_be_visible()  # the screen shows it gone
    expect(app_page.locator(".brain")).to_be_hidden()

    toast.get_by_role("button", name="Undo").click()
    expect(app_page.locator(".toast", has_text="Restored 1 session")).to_be_visible()
    assert stored(hub, sid)["status"] == "ended"
    expect(app_page.locator(".facts")).to_contain_text("ended")
    expect(app_page.locator(".brain")).to_be_visible()
    entry = hub.rest("GET", f"/sessions/{sid}/brain/entry?path=/fs/a.md")
    assert entry["content"] == "kept"


def test_cancelling_the_end_dialog_ends_nothing(app_page: Any, hub: Hub) -> None:
    token = hub.new_agent("thinker")
    project = hub.new_project("cancel")
    sid = session(hub, token, project, "keep going")
    go(app_page, f"#/sessions/{sid}", "Session keep going")
    app_page.get_by_role("button", name="End session").click()
    app_page.locator("dialog").get_by_role("button", name="Cancel").click()
    expect(app_page.locator("dialog")).to_have_count(0)
    assert stored(hub, sid)["status"] == "active"


def test_reassigning_a_running_session(app_page: Any, hub: Hub) -> None:
    token = hub.new_agent("thinker")
    hub.new_agent("helper")
    project = hub.new_project("reassign")
    sid = session(hub, token, project, "hand over")
    go(app_page, f"#/sessions/{sid}", "Session hand over")
    app_page.get_by_role("button", name="Reassign").click()
    dialog = app_page.locator("dialog")
    dialog.get_by_label("New owner").select_option("helper")
    dialog.get_by_role("button", name="Reassign").click()
    expect(app_page.locator(".toast", has_text="Reassigned to helper")).to_be_visible()
    assert stored(hub, sid)["owner"] == "helper"
    expect(app_page.locator(".facts")).to_contain_text("helper")


def test_the_replay_lists_the_tool_calls_as_text(app_page: Any, hub: Hub) -> None:
    token = hub.new_agent("thinker")
    project = hub.new_project("replay")
    sid = session(hub, token, project, "recorded", {"/kv/note": XSS})
    go(app_page, f"#/sessions/{sid}", "Session recorded")
    app_page.get_by_role("button", name="Show replay").click()
    call = app_page.locator(".replay-call")
    expect(call).to_have_count(1)
    expect(call).to_contain_text("brain_put")
    expect(call.locator("pre")).to_contain_text(XSS.replace('"', '\\"'))  # the arguments as JSON text
    no_script_ran(app_page)


def test_the_detail_names_the_newest_event_with_its_age(app_page: Any, hub: Hub) -> None:
    token = hub.new_agent("thinker")
    project = hub.new_project("newest")
    sid = session(hub, token, project, "busy")
    hub.mcp(token, "signal_append", {"project_id": project, "summary": "tests green", "session_id": sid})
    go(app_page, f"#/sessions/{sid}", "Session busy")
    expect(app_page.locator(".facts")).to_contain_text("2 · newest: signal: tests green (just now)")
