"""Debian's Chromium driven by Playwright's sync API (DESIGN section 8): one launch shared by the
browser test packages' `browser` fixtures (never `playwright install`: tools/setup installs the
browser with apt-get)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"


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
