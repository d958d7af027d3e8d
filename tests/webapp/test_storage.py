"""Storage: used against capacity, a bar by kind, a row per project, and pruning ended sessions per
session, per project or all, each with its undo (the toast's Undo restores what the prune took)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.webapp.conftest import Hub
from tests.webapp.seed import XSS, go, no_script_ran, session

pytestmark = pytest.mark.browser


def status(hub: Hub, session_id: str) -> Any:
    r = hub.http.get(f"/api/v1/sessions/{session_id}")
    return r.json()["status"] if r.status_code == 200 else r.status_code


def ended_sessions(hub: Hub, project: str, count: int, token: str) -> list[str]:
    return [
        session(hub, token, project, f"done {i}", {"/fs/notes.md": "x" * 2000}, end=True) for i in range(1, count + 1)
    ]


def test_the_report_shows_usage_kinds_and_a_row_per_project(app_page: Any, hub: Hub) -> None:
    project = hub.new_project("weigh")
    hub.rest("PATCH", f"/projects/{project}", {"display_name": f"Heavy {XSS}"})
    go(app_page, "#/storage", "Storage")
    report = hub.rest("GET", "/storage")
    expect(app_page.locator(".storage-row")).to_have_count(len(report["projects"]))
    expect(app_page.locator(f'.storage-row[data-project="{project}"] .name')).to_have_text(f"Heavy {XSS}")
    expect(app_page.locator(".meter")).to_have_attribute("aria-label", re.compile(r"^\S+ \w+ used of \S+ \w+$"))
    legend = app_page.locator(".legend li")
    expect(legend).to_have_count(4)
    for i, label in enumerate(("Feeds", "Session brains", "Artifacts", "Knowledge bases")):
        expect(legend.nth(i)).to_contain_text(f"{label}: ")
    no_script_ran(app_page)


def test_pruning_a_projects_ended_sessions_and_undoing(app_page: Any, hub: Hub) -> None:
    token = hub.new_agent("pruner")
    project = hub.new_project("prune")
    ended = ended_sessions(hub, project, 2, token)
    active = session(hub, token, project, "still working", {"/kv/k": "v"})
    go(app_page, "#/storage", "Storage")
    row = app_page.locator(f'.storage-row[data-project="{project}"]')
    row.get_by_role("button", name="Prune 2 ended").click()

    toast = app_page.locator(".toast", has_text="Pruned 2 sessions")
    expect(toast).to_be_visible()
    assert [status(hub, s) for s in ended] == [404, 404]
    assert status(hub, active) == "active"  # never an active session
    expect(row.get_by_role("button", name="Prune 2 ended")).to_have_count(0)  # the report is re-read

    toast.get_by_role("button", name="Undo").click()
    expect(app_page.locator(".toast", has_text="Restored 2 sessions")).to_be_visible()
    assert [status(hub, s) for s in ended] == ["ended", "ended"]
    expect(row.get_by_role("button", name="Prune 2 ended")).to_be_visible()


def test_pruning_one_session_from_a_projects_row(app_page: Any, hub: Hub) -> None:
    token = hub.new_agent("pruner")
    project = hub.new_project("one")
    first, second = ended_sessions(hub, project, 2, token)
    go(app_page, "#/storage", "Storage")
    row = app_page.locator(f'.storage-row[data-project="{project}"]')
    row.get_by_role("button", name="Ended sessions").click()
    panel = row.locator(".sessions-panel")
    expect(panel.locator("li")).to_have_count(2)
    panel.locator("li", has_text="done 1").get_by_role("button", name="Prune").click()
    toast = app_page.locator(".toast", has_text="Pruned session done 1")
    expect(toast).to_be_visible()
    assert (status(hub, first), status(hub, second)) == (404, "ended")
    toast.get_by_role("button", name="Undo").click()
    expect(app_page.locator(".toast", has_text="Restored 1 session")).to_be_visible()
    assert status(hub, first) == "ended"


def test_prune_all_asks_first_and_undoes(app_page: Any, hub: Hub) -> None:
    token = hub.new_agent("pruner")
    project = hub.new_project("all")
    ended = ended_sessions(hub, project, 1, token)
    go(app_page, "#/storage", "Storage")
    before = hub.rest("GET", "/storage")["prunable"]["sessions"]
    assert before >= 1

    expect(app_page.locator(".panel", has_text="Prunable")).to_contain_text(f"{before} ended session")
    prune_all = app_page.get_by_role("button", name="Prune all ended sessions")
    prune_all.click()
    dialog = app_page.locator("dialog")
    expect(dialog.get_by_role("button", name="Cancel")).to_be_focused()
    dialog.get_by_role("button", name="Cancel").click()
    assert hub.rest("GET", "/storage")["prunable"]["sessions"] == before  # cancelled: nothing pruned
    assert status(hub, ended[0]) == "ended"

    prune_all.click()
    app_page.locator("dialog").get_by_role("button", name="Prune all").click()
    toast = app_page.locator(".toast", has_text="Pruned")
    expect(toast).to_be_visible()
    assert hub.rest("GET", "/storage")["prunable"]["sessions"] == 0
    assert status(hub, ended[0]) == 404
    toast.get_by_role("button", name="Undo").click()
    expect(app_page.locator(".toast", has_text="Restored")).to_be_visible()
    assert hub.rest("GET", "/storage")["prunable"]["sessions"] == before
    assert status(hub, ended[0]) == "ended"
