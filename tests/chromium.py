"""Debian's Chromium driven by Playwright's sync API (DESIGN section 8), one browser for each pytest
process (so one for each xdist worker): the `browser` fixture launches it for the first test that
asks, and it stays until the session ends; each test opens its own context. Never `playwright
install`: tools/setup installs the browsers with apt-get. Registered by tests/conftest.py.

Two builds of the same Chromium (docs/decisions.md, "The browser tests run Chromium's headless
shell"): `browser` is Debian's `chromium-headless-shell`, the old headless mode, which draws the
same Blink pages for about half the CPU of the full browser in its new headless mode; `full_browser`
is Debian's `chromium`, for the tests that need what only the full browser has: a notification
permission (the shell reports `Notification.permission` "denied" whatever the context grants, so
the service worker cannot show a push). Both come from one Playwright driver per process, started
by the first test that asks for either.

Playwright's sync API runs its event loop in a greenlet of the main thread and, between two of its
calls, leaves that loop marked as the thread's running loop (playwright/_impl/_greenlets.py,
`wait_for_future`). An async test (anyio) or an `asyncio.run` that ran after the first browser
test on the same worker could not start its own loop while that mark stands. So for every test that
does not use a browser the mark is lifted before it starts and put back once it is done; the next
Playwright call finds the loop as it left it (Playwright does the same when a signal interrupts its
loop). A browser test never runs a loop of its own while Playwright's is open.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Generator, Iterator
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"
HEADLESS_SHELL = "/usr/bin/chromium-headless-shell"
PLAYWRIGHT_LOOP = pytest.StashKey[asyncio.AbstractEventLoop]()
# Playwright's own switches already turn off extensions, background networking, component updates,
# the first-run and default-browser checks, and mute audio; others measured and not kept:
# docs/benchmarks.md, "Fourth session: the browser tests' CPU".
LAUNCH_ARGS = ["--no-sandbox"]
# The fixtures that hold Playwright's loop; a test using none of them runs with the mark lifted.
BROWSER_FIXTURES = frozenset({"playwright_driver", "browser", "full_browser"})


def launch(pw: Any, executable: str) -> Any:
    """Chromium from `executable` (Debian's package, never Playwright's download), headless."""
    if not os.path.exists(executable):
        pytest.fail(
            f"{executable} is missing: tools/setup --dev installs Debian's chromium and chromium-headless-shell"
        )
    return pw.chromium.launch(executable_path=executable, args=LAUNCH_ARGS)


@contextlib.contextmanager
def loop_marked(config: pytest.Config) -> Iterator[None]:
    """Playwright's loop marked as running for the block, as its calls need: a session fixture's
    teardown runs inside the last test's protocol, where the mark is lifted when that test uses no
    browser (a Playwright call made without it loses the driver's connection)."""
    held = config.stash.get(PLAYWRIGHT_LOOP, None)
    lifted = asyncio.events._get_running_loop() is None and held is not None and not held.is_closed()
    if lifted:
        asyncio.events._set_running_loop(held)
    try:
        yield
    finally:
        if lifted:
            asyncio.events._set_running_loop(None)


@pytest.fixture(scope="session")
def playwright_driver(request: pytest.FixtureRequest) -> Iterator[Any]:
    """This process's Playwright driver, shared by its browsers (the sync API allows one per thread)."""
    from playwright.sync_api import sync_playwright

    driver = sync_playwright().start()
    request.config.stash[PLAYWRIGHT_LOOP] = asyncio.events._get_running_loop()  # Playwright's, now running
    yield driver
    with loop_marked(request.config):
        driver.stop()


@pytest.fixture(scope="session")
def browser(playwright_driver: Any, request: pytest.FixtureRequest) -> Iterator[Any]:
    """This process's headless shell (a fixture made once per worker binds no tests together: tests/suite.py)."""
    launched = launch(playwright_driver, HEADLESS_SHELL)
    yield launched
    with loop_marked(request.config):
        launched.close()


@pytest.fixture(scope="session")
def full_browser(playwright_driver: Any, request: pytest.FixtureRequest) -> Iterator[Any]:
    """This process's full Chromium (new headless), for what the shell lacks: notifications."""
    launched = launch(playwright_driver, CHROMIUM)
    yield launched
    with loop_marked(request.config):
        launched.close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, object, object]:
    """Lift the mark of Playwright's loop for a test that does not use a browser (module docstring)."""
    held = item.config.stash.get(PLAYWRIGHT_LOOP, None)
    if held is None or held.is_closed() or BROWSER_FIXTURES.intersection(getattr(item, "fixturenames", ())):
        return (yield)
    marked = asyncio.events._get_running_loop()
    asyncio.events._set_running_loop(None)
    try:
        return (yield)
    finally:
        if marked is not None and not marked.is_closed():
            asyncio.events._set_running_loop(marked)
