"""Projects: the list with unseen and waiting badges and personal spaces folded away; create,
rename, password policy, confidential, and delete behind a typed confirmation (never offered for a
personal space)."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.webapp.conftest import Hub
from tests.webapp.seed import XSS, go, no_script_ran, signals

pytestmark = pytest.mark.browser


def project_ids(hub: Hub) -> list[str]:
    return [p["id"] for p in hub.rest("GET", "/projects")["projects"]]


def test_the_list_shows_unseen_and_waiting_badges_and_folds_personal_spaces(app_page: Any, hub: Hub) -> None:
    token = hub.new_agent("lister")
    project = hub.new_project("badges")
    hub.rest("PATCH", f"/projects/{project}", {"display_name": f"Shop {XSS}"})
    signals(hub, token, project, 2)
    hub.question(token, project, "ship it?")
    go(app_page, "#/projects", "Projects")

    row = app_page.locator(".row-link", has_text=project)
    expect(row.locator(".name")).to_have_text(f"Shop {XSS}")
    expect(row.locator(".badge.unseen")).to_have_text("3 unseen")  # two signals and the question
    expect(row.locator(".badge.waiting")).to_have_text("1 waiting")
    spaces = app_page.locator("details.spaces")
    expect(spaces.locator("summary")).to_contain_text("Personal spaces")
    space = spaces.locator(".row-link", has_text="space-lister")
    expect(space).to_be_hidden()
    spaces.locator("summary").click()
    expect(space).to_be_visible()
    no_script_ran(app_page)


def test_the_personal_spaces_fold_is_the_same_and_stays_open_across_a_live_redraw(app_page: Any, hub: Hub) -> None:
    """A redraw that rebuilt the fold lost a click on its summary that straddled it (pressed on the
    old summary, released on the new): the fold and its summary are kept, only their rows redrawn."""
    token = hub.new_agent("folder")
    project = hub.new_project("fold")
    go(app_page, "#/projects", "Projects")
    spaces = app_page.locator("details.spaces")
    spaces.locator("summary").click()
    expect(spaces.locator(".row-link", has_text="space-folder")).to_be_visible()
    spaces.evaluate("el => { el.__kept = el.querySelector('summary'); }")
    signals(hub, token, project, 1)  # a live change: the list redraws
    expect(app_page.locator(".row-link", has_text=project).locator(".badge.unseen")).to_have_text("1 unseen")
    assert spaces.evaluate("el => el.open && el.__kept === el.querySelector('summary')")
    expect(spaces.locator(".row-link", has_text="space-folder")).to_be_visible()


def test_create_rename_and_delete_with_typed_confirmation(app_page: Any, hub: Hub) -> None:
    go(app_page, "#/projects", "Projects")
    app_page.get_by_label("Id", exact=True).fill("garden-plan")
    app_page.get_by_label("Display name", exact=True).fill("Garden plan")
    app_page.get_by_role("button", name="Create project").click()
    expect(app_page.locator("h1")).to_have_text("Garden plan")
    assert "#/projects/garden-plan" in app_page.url
    made = hub.rest("GET", "/projects/garden-plan")
    assert (made["display_name"], made["confidential"]) == ("Garden plan", False)

    app_page.get_by_role("link", name="Settings").last.click()
    app_page.get_by_label("Display name", exact=True).fill("Vegetable garden")
    app_page.get_by_label("Artifact password").select_option("required")
    app_page.get_by_role("button", name="Save").click()
    expect(app_page.locator("h1")).to_have_text("Vegetable garden")
    after = hub.rest("GET", "/projects/garden-plan")
    assert (after["display_name"], after["artifact_password_policy"]) == ("Vegetable garden", "required")
    app_page.get_by_label("Display name", exact=True).fill("Garden plan")  # back again: compared with the saved name
    app_page.get_by_role("button", name="Save").click()
    expect(app_page.locator("h1")).to_have_text("Garden plan")
    assert hub.rest("GET", "/projects/garden-plan")["display_name"] == "Garden plan"

    app_page.get_by_role("button", name="Delete project").click()
    dialog = app_page.locator("dialog")
    confirm = dialog.get_by_role("button", name="Delete")
    expect(confirm).to_be_disabled()
    dialog.get_by_label("Confirmation").fill("garden")
    expect(confirm).to_be_disabled()
    dialog.get_by_role("button", name="Cancel").click()
    assert "garden-plan" in project_ids(hub)  # cancelled: nothing deleted

    app_page.get_by_role("button", name="Delete project").click()
    app_page.locator("dialog").get_by_label("Confirmation").fill("garden-plan")
    app_page.locator("dialog").get_by_role("button", name="Delete").click()
    expect(app_page.locator("h1")).to_have_text("Projects")
    assert "garden-plan" not in project_ids(hub)
    assert hub.http.get("/api/v1/projects/garden-plan").status_code == 404


def test_a_refused_create_says_why_and_creates_nothing(app_page: Any, hub: Hub) -> None:
    go(app_page, "#/projects", "Projects")
    before = project_ids(hub)
    app_page.get_by_label("Id", exact=True).fill("space-taken")  # the personal spaces' prefix is reserved
    app_page.get_by_role("button", name="Create project").click()
    expect(app_page.locator("form .error-text")).to_contain_text("invalid_argument")
    assert project_ids(hub) == before
    expect(app_page.locator("h1")).to_have_text("Projects")


def test_confidential_is_set_from_settings(app_page: Any, hub: Hub) -> None:
    project = hub.new_project("secret")
    go(app_page, f"#/projects/{project}?tab=settings", project)
    app_page.get_by_label("Confidential").check()
    app_page.get_by_role("button", name="Save").click()
    expect(app_page.locator(".toast", has_text="Saved")).to_be_visible()
    assert hub.rest("GET", f"/projects/{project}")["confidential"] is True


def test_a_personal_space_offers_no_delete(app_page: Any, hub: Hub) -> None:
    hub.new_agent("spacey")
    go(app_page, "#/projects/space-spacey?tab=settings")
    expect(app_page.locator(".panel.form")).to_be_visible()
    expect(app_page.get_by_text("A personal space cannot be deleted.")).to_be_visible()
    expect(app_page.get_by_role("button", name="Delete project")).to_have_count(0)


def test_j_and_k_move_through_the_rows_and_enter_opens_one(app_page: Any, hub: Hub) -> None:
    first, second = hub.new_project("keys"), hub.new_project("keys")
    go(app_page, "#/projects", "Projects")
    rows = app_page.locator("ul[aria-label=Projects] .row-link")
    expect(app_page.locator(f'a[href="#/projects/{second}"]')).to_be_visible()
    ids = [rows.nth(i).get_attribute("href") for i in range(rows.count())]
    at = ids.index(f"#/projects/{first}")
    assert ids[at + 1] == f"#/projects/{second}"
    app_page.keyboard.press("j")
    expect(rows.first).to_be_focused()
    for _ in range(at + 1):
        app_page.keyboard.press("j")
    expect(rows.nth(at + 1)).to_be_focused()
    app_page.keyboard.press("k")
    expect(rows.nth(at)).to_be_focused()
    app_page.keyboard.press("Enter")
    expect(app_page.locator("h1")).to_have_text(first)
    expect(app_page.locator("h1")).to_be_focused()


def test_an_unknown_project_says_so(app_page: Any, hub: Hub) -> None:
    go(app_page, "#/projects/no-such-project", "no-such-project")
    expect(app_page.locator("main .error-text")).to_contain_text("not_found")
    expect(app_page.locator(".feed")).to_have_count(0)
    go(app_page, "#/sessions/ses_nothing", "Session")
    expect(app_page.locator("main .error-text")).to_contain_text("not_found")
    expect(app_page.locator(".brain")).to_have_count(0)
