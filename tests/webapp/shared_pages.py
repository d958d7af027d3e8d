"""Open app pages a module's tests take turns on, instead of a fresh context each.

Opening the app costs about 1.1 s of CPU (a context's first page, two visits to store the token and
the settings, the app's load: docs/benchmarks.md, "Fourth session: the heaviest browser files");
moving an open app to another screen costs 0.05 to 0.1 s. The audits and the artifact tests open a
screen, act on it and check it, so a module keeps one connected page per viewport and settings and
each test moves it to its screen as the human would (the hash changes and the app mounts the screen
afresh: the old screen's element is gone before the test goes on, even for the same address) and in
the theme it audits (the app follows `prefers-color-scheme` as it changes).

A test that fails gives its page up (it is closed, and the next test opens a new one), and so does a
page left with a dialog or the More menu open or with an uncaught error: no test starts from a state
another test left broken, and a failure stays in the test that caused it. Uncaught errors in a page
fail the test that was using it (as `app_page` does). A module takes the fixtures `page_pool` and
`shared` by importing `page_pool_fixture` and `shared_fixture`."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.webapp.conftest import PHONE, Hub, open_app

Key = tuple[int, int, int, bool]


class PagePool:
    """Idle app pages, one per (viewport, undo seconds, clipboard granted)."""

    def __init__(self, browser: Any, hub: Hub) -> None:
        self.browser, self.hub = browser, hub
        self.idle: dict[Key, Any] = {}

    def take(self, viewport: dict[str, int], theme: str, undo_seconds: int, clipboard: bool) -> tuple[Key, Any]:
        key = (viewport["width"], viewport["height"], undo_seconds, clipboard)
        page = self.idle.pop(key, None)
        if page is None:
            page = open_app(self.browser, self.hub, viewport, color_scheme=theme, undo_seconds=undo_seconds)
            if clipboard:
                page.context.grant_permissions(["clipboard-read", "clipboard-write"])
        else:
            page.emulate_media(color_scheme=theme)
        return key, page

    def put(self, key: Key, page: Any) -> None:
        """Keep the page for the next test if it stands as a screen left it, else close it."""
        clean = (
            not page.is_closed()
            and not page.page_errors
            and page.locator("dialog[open]").count() == 0
            and page.locator("#more-menu").is_hidden()
        )
        if clean and key not in self.idle:
            self.idle[key] = page
        else:
            page.context.close()

    def close(self) -> None:
        for page in self.idle.values():
            page.context.close()
        self.idle.clear()


def go(page: Any, hash_: str) -> None:
    """Move the app to `hash_` and wait until the screen there is mounted anew (the old one is marked,
    so a screen still shown from before never passes for the new one)."""
    page.evaluate(
        """h => { const old = document.querySelector('main > .screen'); if (old) old.dataset.left = '1';
        if (location.hash === h) window.dispatchEvent(new HashChangeEvent('hashchange')); else location.hash = h; }""",
        hash_,
    )
    page.wait_for_selector("main > .screen:not([data-left]) h1.screen-title")


@pytest.fixture(scope="module", name="page_pool")
def page_pool_fixture(browser: Any, hub: Hub) -> Iterator[PagePool]:
    pool = PagePool(browser, hub)
    yield pool
    pool.close()


@pytest.fixture(name="shared")
def shared_fixture(page_pool: PagePool, request: pytest.FixtureRequest) -> Iterator[Callable[..., Any]]:
    """`shared(hash_=None, *, theme, viewport, undo_seconds, clipboard)`: a connected app page in that
    theme, at `hash_` when given. Given back after the test unless the test failed (module docstring)."""
    lent: list[tuple[Key, Any]] = []
    failed_before = request.session.testsfailed

    def borrow(
        hash_: str | None = None,
        *,
        theme: str = "light",
        viewport: dict[str, int] = PHONE,
        undo_seconds: int = 0,
        clipboard: bool = False,
    ) -> Any:
        key, page = page_pool.take(viewport, theme, undo_seconds, clipboard)
        lent.append((key, page))
        if hash_ is not None:
            go(page, hash_)
        return page

    yield borrow
    # The call's report is logged before teardown: a failure of this test is counted by now.
    passed = request.session.testsfailed == failed_before
    errors = [error for _, page in lent for error in page.page_errors]
    for key, page in lent:
        if passed:
            page_pool.put(key, page)
        else:
            page.context.close()
    assert errors == [], errors
