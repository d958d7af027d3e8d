"""Debian's Chromium driven by Playwright's sync API (DESIGN section 8), one browser for each pytest
process (so one for each xdist worker): the `browser` fixture launches it for the first test that
asks, and it stays until the session ends; each test opens its own context. Never `playwright
install`: tools/setup installs the browser with apt-get. Registered by tests/conftest.py.

Playwright's sync API runs its event loop in a greenlet of the main thread and, between two of its
calls, leaves that loop marked as the thread's running loop (playwright/_impl/_greenlets.py,
`wait_for_future`). An async test (anyio) or an `asyncio.run` that ran after the first browser
test on the same worker could not start its own loop while that mark stands. So for every test that
does not use the browser the mark is lifted before it starts and put back once it is done; the next
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
PLAYWRIGHT_LOOP = pytest.StashKey[asyncio.AbstractEventLoop]()


@contextlib.contextmanager
def launched_chromium() -> Iterator[Any]:
    """A headless Chromium for as long as the block runs."""
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"{CHROMIUM} is missing: tools/setup installs Debian's chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture(scope="session")
def browser(request: pytest.FixtureRequest) -> Iterator[Any]:
    """This process's Chromium (a fixture made once per worker binds no tests together: tests/suite.py)."""
    with launched_chromium() as launched:
        request.config.stash[PLAYWRIGHT_LOOP] = asyncio.events._get_running_loop()  # Playwright's, now running
        yield launched


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, object, object]:
    """Lift the mark of Playwright's loop for a test that does not use the browser (module docstring)."""
    held = item.config.stash.get(PLAYWRIGHT_LOOP, None)
    if held is None or held.is_closed() or "browser" in getattr(item, "fixturenames", ()):
        return (yield)
    marked = asyncio.events._get_running_loop()
    asyncio.events._set_running_loop(None)
    try:
        return (yield)
    finally:
        if marked is not None and not marked.is_closed():
            asyncio.events._set_running_loop(marked)
