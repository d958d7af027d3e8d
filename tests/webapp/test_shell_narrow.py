"""The shell on a narrow phone (issue 25 part 5): at 320 px four tabs and More, nothing cut or
clipped; More opens the rest (Storage, Access, Settings) and stands for them when one is open; the
rail at 1280 px keeps every tab; a project's tabs scroll with the current one in view."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.webapp.conftest import DESKTOP, PHONE, Hub

pytestmark = pytest.mark.browser
NARROW = {"width": 320, "height": 640}


def inside(box: dict[str, float], width: float) -> bool:
    return box["x"] >= 0 and box["x"] + box["width"] <= width + 0.5


@pytest.mark.parametrize("viewport", [NARROW, PHONE], ids=["320", "390"])
def test_four_tabs_and_more_nothing_cut(opener: Any, viewport: dict[str, int]) -> None:
    page = opener(viewport=viewport)
    tabs = page.locator(".tabs .tab:visible")
    expect(tabs).to_have_count(5)
    assert tabs.locator(".tab-label").all_text_contents() == ["Home", "Inbox", "Projects", "Search", "More"]
    for tab in tabs.all():
        box = tab.bounding_box()
        assert inside(box, viewport["width"]) and box["width"] >= 44 and box["height"] >= 44
        label = tab.locator(".tab-label")
        assert label.evaluate("l => l.scrollWidth <= l.clientWidth + 1")  # the label is not clipped
        assert inside(label.bounding_box(), viewport["width"])
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]  # no sideways page
    more = page.locator("nav.tabs button.more-tab")
    expect(more).to_have_attribute("aria-expanded", "false")
    more.click()
    expect(more).to_have_attribute("aria-expanded", "true")
    links = page.locator("#more-menu a.more-link")
    assert links.all_text_contents() == ["Storage", "Access", "Settings"]
    expect(links.first).to_be_focused()
    for link in links.all():
        assert inside(link.bounding_box(), viewport["width"]) and link.bounding_box()["height"] >= 44
    page.keyboard.press("Escape")
    expect(page.locator("#more-menu")).to_be_hidden()
    expect(more).to_be_focused()
    for label, title in (("Storage", "Storage"), ("Access", "Access"), ("Settings", "Settings")):
        more.click()
        page.locator("#more-menu a.more-link", has_text=label).click()
        expect(page.locator("h1")).to_have_text(title)
        expect(page.locator("#more-menu")).to_be_hidden()
        expect(more).to_have_class("tab more-tab current")  # More stands for the open tab
        expect(more).to_have_attribute("aria-label", f"More ({label} is open)")
        more.click()
        expect(page.locator("#more-menu a.more-link[aria-current=page]")).to_have_text(label)
        page.locator("main h1").click()  # a tap elsewhere closes the menu
        expect(page.locator("#more-menu")).to_be_hidden()
    page.locator("a.tab", has_text="Inbox").click()
    expect(page.locator("h1")).to_have_text("Inbox")
    expect(more).not_to_have_class("tab more-tab current")


def test_the_rail_keeps_every_tab_and_no_more(opener: Any) -> None:
    page = opener(viewport=DESKTOP)
    labels = page.locator(".tabs a.tab:visible .tab-label").all_text_contents()
    assert labels == ["Home", "Inbox", "Projects", "Search", "Storage", "Access", "Settings"]
    expect(page.locator("nav.tabs button.more-tab")).to_be_hidden()


@pytest.mark.parametrize("viewport", [NARROW, PHONE, DESKTOP], ids=["320", "390", "1280"])
def test_a_projects_tabs_scroll_with_the_current_one_visible(opener: Any, hub: Hub, viewport: dict[str, int]) -> None:
    project = hub.new_project("narrow")
    page = opener(viewport=viewport, hash_=f"#/projects/{project}/wiki")
    current = page.locator("nav.subtabs[aria-label=Project] a[aria-current=page]")
    expect(current).to_have_text("Wiki")
    nav = page.locator("nav.subtabs[aria-label=Project]")
    page.wait_for_function(
        "() => { const n = document.querySelector('nav.subtabs[aria-label=Project]'); const a = n &&"
        " n.querySelector('[aria-current=page]'); if (!a) return false;"
        " const r = a.getBoundingClientRect(), b = n.getBoundingClientRect();"
        " return r.left >= b.left - 0.5 && r.right <= b.right + 0.5; }"
    )
    box = current.bounding_box()
    assert inside(box, viewport["width"])
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
    if viewport == NARROW:  # five tabs do not fit in 320 px: the row scrolls instead of being cut
        assert nav.evaluate("n => n.scrollWidth > n.clientWidth && n.scrollLeft > 0")
