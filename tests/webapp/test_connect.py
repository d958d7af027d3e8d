"""Connect: the token is checked against the hub before it is kept; a refused token at any point
returns to Connect and then back to the interrupted screen."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.webapp.conftest import ADMIN_TOKEN, Hub

pytestmark = pytest.mark.browser


def stored(page: Any) -> Any:
    return page.evaluate("localStorage.getItem('agent-hub.token')")


def test_a_wrong_token_is_refused_and_not_kept_then_the_right_one_connects(opener: Any, hub: Hub) -> None:
    page = opener(token=None, hash_="#/inbox")
    expect(page.locator("h1")).to_have_text("Connect to your hub")
    assert "next=" in page.url  # the screen asked for comes back after connecting
    field = page.locator("#token")
    expect(field).to_have_attribute("type", "password")
    expect(page.locator("input[autocomplete=username]")).to_have_count(1)  # for password managers

    field.fill("not-the-admin-token")
    page.get_by_role("button", name="Connect").click()
    expect(page.locator("#token-error")).to_contain_text("did not accept")
    assert stored(page) is None
    expect(field).to_be_focused()

    field.fill(ADMIN_TOKEN)
    page.get_by_role("button", name="Show").click()
    expect(field).to_have_attribute("type", "text")
    page.get_by_role("button", name="Connect").click()
    expect(page.locator("h1")).to_have_text("Inbox")
    assert page.url.endswith("#/inbox")
    assert stored(page) == ADMIN_TOKEN


def test_an_agent_token_is_not_the_admin_token(opener: Any, hub: Hub) -> None:
    agent = hub.new_agent("connect-agent")
    page = opener(token=None, hash_="#/connect")
    page.locator("#token").fill(agent)
    page.get_by_role("button", name="Connect").click()
    expect(page.locator("#token-error")).not_to_be_empty()
    assert stored(page) is None


def test_the_first_start_address_lands_on_connect(opener: Any, hub: Hub) -> None:
    page = opener(token=None, hash_="#connect")  # as hub-cli serve prints it
    expect(page.locator("h1")).to_have_text("Connect to your hub")
    expect(page.locator("h1")).to_be_focused()


def test_a_token_refused_later_returns_to_connect_then_back(opener: Any, hub: Hub) -> None:
    page = opener(token="a-token-the-hub-revoked", hash_="#/settings")
    expect(page.locator("h1")).to_have_text("Connect to your hub")
    assert stored(page) is None
    assert "next=%23%2Fsettings" in page.url
    page.locator("#token").fill(ADMIN_TOKEN)
    page.locator("#token").press("Enter")
    expect(page.locator("h1")).to_have_text("Settings")


def test_no_token_never_reaches_a_screen(opener: Any, hub: Hub) -> None:
    page = opener(token=None, hash_="#/storage")
    expect(page.locator("h1")).to_have_text("Connect to your hub")
    expect(page.locator("nav.tabs")).to_be_hidden()
