"""Access: agents with status, personal space and last seen; creating one; issuing its token (shown
once, with copy) and revoking it; grants on confidential projects."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from playwright.sync_api import expect

from tests.webapp.conftest import Hub
from tests.webapp.seed import XSS, go, no_script_ran

pytestmark = pytest.mark.browser


def token_works(hub: Hub, token: str) -> bool:
    """Whether the hub accepts the token (an agent may list projects)."""
    r = httpx.get(f"{hub.url}/api/v1/projects", headers={"Authorization": f"Bearer {token}"}, timeout=10)
    return r.status_code == 200


def agent(hub: Hub, agent_id: str) -> dict[str, Any]:
    found = [a for a in hub.rest("GET", "/agents")["agents"] if a["id"] == agent_id]
    return dict(found[0]) if found else {}


def test_create_an_agent_and_issue_its_token_shown_once_with_copy(app_page: Any, hub: Hub) -> None:
    app_page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    go(app_page, "#/access", "Access")
    app_page.get_by_label("Id", exact=True).fill("courier")
    app_page.get_by_label("Display name", exact=True).fill("Courier")
    app_page.get_by_role("button", name="Create agent").click()
    row = app_page.locator('.agent-row[data-agent="courier"]')
    expect(row).to_contain_text("no token")
    expect(row).to_contain_text("last seen never")
    expect(row.get_by_role("link", name="personal space")).to_have_attribute("href", "#/projects/space-courier")
    made = agent(hub, "courier")
    assert (made["display_name"], made["status"], made["has_token"]) == ("Courier", "active", False)

    row.get_by_role("button", name="Issue token").click()
    dialog = app_page.locator("dialog")
    expect(dialog).to_contain_text("only time the token is shown")
    token = dialog.locator("input.token-field").input_value()
    assert len(token) >= 32
    assert token_works(hub, token)
    dialog.get_by_role("button", name="Copy token").click()
    expect(dialog.get_by_role("status")).to_have_text("Copied to the clipboard.")
    assert app_page.evaluate("navigator.clipboard.readText()") == token
    dialog.get_by_role("button", name="Done").click()
    expect(app_page.locator("dialog")).to_have_count(0)
    expect(row.get_by_role("button", name="New token")).to_be_focused()  # back where the human was
    assert token not in app_page.content()  # shown once: gone with the dialog
    expect(row).to_contain_text("has a token")


def test_a_new_token_replaces_the_old_and_revoke_stops_it(app_page: Any, hub: Hub) -> None:
    old = hub.new_agent("rotator")
    go(app_page, "#/access", "Access")
    row = app_page.locator('.agent-row[data-agent="rotator"]')
    row.get_by_role("button", name="New token").click()
    dialog = app_page.locator("dialog")
    expect(dialog).to_contain_text("stops working at once")
    dialog.get_by_role("button", name="Cancel").click()
    assert token_works(hub, old)  # cancelled: the old token still works

    row.get_by_role("button", name="New token").click()
    app_page.locator("dialog").get_by_role("button", name="Issue new token").click()
    new = app_page.locator("dialog input.token-field").input_value()
    app_page.locator("dialog").get_by_role("button", name="Done").click()
    assert not token_works(hub, old)
    assert token_works(hub, new)

    row.get_by_role("button", name="Revoke token").click()
    app_page.locator("dialog").get_by_role("button", name="Revoke").click()
    expect(row).to_contain_text("no token")
    assert not token_works(hub, new)
    assert agent(hub, "rotator")["has_token"] is False


def test_grants_on_confidential_projects(app_page: Any, hub: Hub) -> None:
    hub.new_agent("trusted")
    secret = hub.new_project("vault")
    hub.rest("PATCH", f"/projects/{secret}", {"confidential": True})
    go(app_page, "#/access", "Access")
    row = app_page.locator('.agent-row[data-agent="trusted"]')
    row.get_by_role("button", name="Grants").click()
    panel = row.locator(".grants-panel")
    expect(panel).to_contain_text("No grants")
    panel.get_by_label("Confidential project").select_option(secret)
    panel.get_by_role("button", name="Grant").click()
    expect(panel.locator("li", has_text=secret)).to_be_visible()
    assert [g["project_id"] for g in hub.rest("GET", "/agents/trusted/grants")["grants"]] == [secret]

    panel.get_by_role("button", name=f"Remove grant on {secret}").click()
    expect(panel).to_contain_text("No grants")
    assert hub.rest("GET", "/agents/trusted/grants")["grants"] == []


def test_a_refused_agent_id_says_why_and_creates_nothing(app_page: Any, hub: Hub) -> None:
    go(app_page, "#/access", "Access")
    before = hub.rest("GET", "/agents")["agents"]
    app_page.get_by_label("Id", exact=True).fill("hub")  # reserved
    app_page.get_by_role("button", name="Create agent").click()
    expect(app_page.locator("form .error-text")).to_be_visible()
    assert hub.rest("GET", "/agents")["agents"] == before


def test_an_agents_display_name_is_text(app_page: Any, hub: Hub) -> None:
    hub.rest("POST", "/agents", {"id": "mallory", "display_name": f"Mallory {XSS}"}, expect=201)
    go(app_page, "#/access", "Access")
    expect(app_page.locator('.agent-row[data-agent="mallory"] .name')).to_have_text(f"Mallory {XSS}")
    no_script_ran(app_page)


def enrol(hub: Hub, agent_id: str, why: str) -> str:
    r = httpx.post(
        f"{hub.url}/api/v1/enrol",
        json={"display_name": agent_id.title(), "why": why, "suggested_id": agent_id},
        timeout=10,
    )
    assert r.status_code == 202, r.text
    return str(r.json()["token"])


def test_a_pending_agent_is_admitted_or_refused_from_access(app_page: Any, hub: Hub) -> None:
    token = enrol(hub, "hopeful", f"to help {XSS}")
    assert not token_works(hub, token)
    go(app_page, "#/access", "Access")
    row = app_page.locator('.agent-row[data-agent="hopeful"]')
    expect(row.locator(".status")).to_have_text("pending")
    expect(row).to_contain_text(f"Asked to enrol: to help {XSS}")
    expect(row.get_by_role("button", name="Issue token")).to_have_count(0)
    row.get_by_role("button", name="Admit").click()
    dialog = app_page.locator("dialog")  # admitting asks first, naming the agent and its reason (as text)
    expect(dialog.locator("h2")).to_have_text("Admit Hopeful (hopeful)?")
    expect(dialog.locator(".admit-why")).to_have_text(f"to help {XSS}")
    dialog.get_by_role("button", name="Cancel").click()
    assert agent(hub, "hopeful")["status"] == "pending" and not token_works(hub, token)  # cancelled: nothing sent
    row.get_by_role("button", name="Admit").click()
    app_page.locator("dialog").get_by_role("button", name="Admit").click()
    expect(row.locator(".status")).to_have_text("active")
    assert agent(hub, "hopeful")["status"] == "active"
    assert token_works(hub, token)

    refused = enrol(hub, "gatecrasher", "let me in")  # one pending request per peer: the first is decided
    go(app_page, "#/projects", "Projects")
    go(app_page, "#/access", "Access")
    row = app_page.locator('.agent-row[data-agent="gatecrasher"]')
    row.get_by_role("button", name="Refuse").click()
    app_page.locator("dialog").get_by_role("button", name="Cancel").click()
    assert agent(hub, "gatecrasher")["status"] == "pending"  # cancelled: still waiting
    row.get_by_role("button", name="Refuse").click()
    app_page.locator("dialog").get_by_role("button", name="Refuse").click()
    expect(app_page.locator(".toast", has_text="Refused gatecrasher")).to_be_visible()
    assert agent(hub, "gatecrasher")["status"] == "pending"  # kept as a record, its token gone
    assert agent(hub, "gatecrasher")["has_token"] is False
    assert not token_works(hub, refused)
    expect(row.locator(".status")).to_have_text("refused")
    expect(row.get_by_role("button")).to_have_count(0)  # nothing left to decide
    no_script_ran(app_page)
