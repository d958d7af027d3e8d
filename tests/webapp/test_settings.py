"""Settings: theme (system, light, dark), density, shortcuts, the server's version and build commit,
sign out."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest
from playwright.sync_api import expect

from hubcore import build
from tests.webapp.conftest import Hub

pytestmark = pytest.mark.browser


def background(page: Any) -> str:
    return str(page.evaluate("getComputedStyle(document.body).backgroundColor"))


def test_theme_follows_the_system_then_the_choice_and_is_kept(opener: Any, hub: Hub) -> None:
    page = opener(color_scheme="dark", hash_="#/settings")
    expect(page.locator("#theme-system")).to_be_checked()
    assert background(page) == "rgb(17, 20, 24)"  # the system is dark
    page.locator("label[for=theme-light]").click()
    assert page.evaluate("document.documentElement.dataset.theme") == "light"
    assert background(page) == "rgb(255, 255, 255)"
    page.locator("label[for=theme-dark]").click()
    assert background(page) == "rgb(17, 20, 24)"
    page.reload()
    expect(page.locator("#theme-dark")).to_be_checked()
    assert background(page) == "rgb(17, 20, 24)"


def test_density_compact_tightens_rows(app_page: Any) -> None:
    app_page.evaluate("location.hash = '#/settings'")
    app_page.locator("label[for=density-compact]").click()
    assert app_page.evaluate("document.documentElement.dataset.density") == "compact"
    pad = app_page.evaluate("getComputedStyle(document.documentElement).getPropertyValue('--row-pad')")
    assert pad.strip() == "7px"


def test_version_and_build_commit_are_the_servers(app_page: Any, hub: Hub) -> None:
    app_page.evaluate("location.hash = '#/settings'")
    expect(app_page.locator("#server-version")).to_have_text(build.version())
    shell = httpx.get(hub.url + "/app/shell.json").json()
    expect(app_page.locator("#server-commit")).to_have_text(shell["commit"])
    # The hub read its commit when it started (others may have committed since): a short hash.
    assert re.fullmatch(r"[0-9a-f]{7,12}|unknown", shell["commit"])


def test_sign_out_forgets_the_token_and_returns_to_connect(app_page: Any) -> None:
    app_page.evaluate("location.hash = '#/settings'")
    app_page.get_by_role("button", name="Sign out").click()
    dialog = app_page.locator("dialog[open]")
    expect(dialog.get_by_role("button", name="Cancel")).to_be_focused()  # the safe action
    dialog.get_by_role("button", name="Cancel").click()
    assert app_page.evaluate("localStorage.getItem('agent-hub.token')") is not None
    app_page.get_by_role("button", name="Sign out").click()
    app_page.locator("dialog[open]").get_by_role("button", name="Sign out").click()
    expect(app_page.locator("h1")).to_have_text("Connect to your hub")
    assert app_page.evaluate("localStorage.getItem('agent-hub.token')") is None
    app_page.evaluate("location.hash = '#/inbox'")
    expect(app_page.locator("h1")).to_have_text("Connect to your hub")
