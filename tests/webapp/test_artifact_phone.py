"""Artifacts on a phone (issue 25 part 4), at 390 and 1280 px: text selected in the viewer's frame
opens the comment form with that passage as the quote (HTML with its scripts off, markdown, and
protected versions after unlock), read back over REST; the platform share sheet beside Copy; toasts
above an open dialog; the public share page's Back only when there is somewhere to go back to; a
missing artifact read as a sentence in the app and on the public pages; axe in both themes. Tests that
leave the page as a screen does take an open app page in turn (tests/webapp/shared_pages.py)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from playwright.sync_api import expect

from hubmcp.protect import protect_arguments
from tests.webapp.conftest import DESKTOP, PHONE, Hub
from tests.webapp.shared_pages import page_pool_fixture, shared_fixture  # noqa: F401 (fixtures)
from tests.webapp.test_a11y import audit
from tests.webapp.test_artifacts import PASSWORD, comments, publish, viewer

pytestmark = pytest.mark.browser

WIDTHS = [pytest.param(PHONE, id="phone"), pytest.param(DESKTOP, id="desktop")]
PASSAGE = "Ship the checkout on Friday after the review"
HTML = f"""<!doctype html><html><body><h1>Plan</h1><p id=passage>{PASSAGE}</p><p>Other words.</p>
<script>parent.postMessage({{hubSelection: {{text: "forged by the artifact", x: 0, y: 0}}}}, "*")</script>
</body></html>"""
MARKDOWN = f"# Plan\n\n{PASSAGE}\n\nA <b>tag</b> is text here.\n"
# A fake platform share sheet: records what it was handed (headless Chromium on Linux has none).
FAKE_SHARE = """window.__shared = [];
Object.defineProperty(navigator, "share", {configurable: true, value: (data) => {
  window.__shared.push(data); return Promise.resolve(); }});
Object.defineProperty(navigator, "canShare", {configurable: true, value: () => true});"""


@pytest.fixture(scope="module")
def writer(hub: Hub) -> str:
    return hub.new_agent("writer")


def select_passage(page: Any, selector: str) -> None:
    """Select the passage as a reader does: a triple click on its paragraph inside the frame."""
    frame = page.frame_locator("main iframe.art-frame")
    frame.locator(selector).click(click_count=3)


def comment_on_selection(page: Any, body: str) -> Any:
    main = page.locator("main")
    bar = main.locator(".art-selection")
    expect(bar).to_be_visible()
    expect(bar.get_by_role("status")).to_contain_text(PASSAGE)
    bar.get_by_role("button", name="Comment on this passage").click()
    form = main.locator("form.art-comment-form")
    expect(form.get_by_label("Anchored to")).to_have_value("text")
    expect(form.get_by_label("Comment", exact=True)).to_be_focused()
    form.get_by_label("Comment", exact=True).fill(body)
    return form


@pytest.mark.parametrize("viewport", WIDTHS)
@pytest.mark.parametrize("kind", ["html", "markdown"])
def test_selected_text_becomes_the_quote(
    hub: Hub, writer: str, shared: Any, viewport: dict[str, int], kind: str
) -> None:
    project = hub.new_project("sel")
    aid = publish(hub, writer, project, "Plan", HTML if kind == "html" else MARKDOWN, kind=kind)
    page = shared(f"#/artifacts/{aid}", viewport=viewport)
    main = page.locator("main")
    bar = main.locator(".art-selection")
    frame = page.frame_locator("main iframe.art-frame")
    expect(frame.locator("h1")).to_have_text("Plan")
    # The HTML artifact's own script (it would forge a selection) does not run: its scripts are off.
    expect(bar).to_be_hidden()
    select_passage(page, "#passage" if kind == "html" else "p >> nth=0")
    form = comment_on_selection(page, "Make it Thursday")
    expect(form.get_by_label("Quote", exact=False)).to_have_value(PASSAGE)
    form.get_by_role("button", name="Comment").click()
    item = main.locator(".art-comment")
    expect(item.locator(".art-quote")).to_have_text(PASSAGE)
    expect(item.locator(".art-comment-body")).to_have_text("Make it Thursday")
    [stored] = comments(hub, aid)
    assert (stored["author"], stored["body"], stored["anchor"], stored["anchor_version"]) == (
        "human",
        "Make it Thursday",
        {"mode": "text", "quote": PASSAGE},
        1,
    )
    assert "forged" not in (main.text_content() or "")


@pytest.mark.parametrize("viewport", WIDTHS)
@pytest.mark.parametrize("kind", ["html", "markdown"])
def test_a_protected_version_takes_its_quote_after_unlock(
    hub: Hub, writer: str, shared: Any, viewport: dict[str, int], kind: str
) -> None:
    project = hub.new_project("selock")
    content = f"<p id=passage>{PASSAGE}</p><p>More.</p>" if kind == "html" else f"{PASSAGE}\n\nMore.\n"
    # Encrypted on the agent's side as `hub-cli call` does it (test_artifacts.py goes through the
    # command itself), then posted straight to /mcp: the password is never sent.
    args = {"project_id": project, "title": "Locked", "kind": kind, "content": content, "password": PASSWORD}
    aid = hub.mcp(writer, "artifact_publish", protect_arguments("artifact_publish", args))["artifact_id"]
    page = shared(f"#/artifacts/{aid}", viewport=viewport)
    main = page.locator("main")
    gate = main.locator("form.art-gate")
    gate.get_by_label("Password").fill(PASSWORD)
    gate.get_by_role("button", name="Unlock").click()
    target = "#passage" if kind == "html" else "pre"
    expect(page.frame_locator("main iframe.art-frame").locator(target)).to_contain_text(PASSAGE)
    if kind == "html":
        select_passage(page, target)
    else:  # the <pre> holds both paragraphs: the passage's words alone, as a drag would select them
        page.frame_locator("main iframe.art-frame").locator("pre").evaluate(
            """(pre, passage) => { const r = document.createRange(); const t = pre.firstChild;
            r.setStart(t, 0); r.setEnd(t, passage.length);
            getSelection().removeAllRanges(); getSelection().addRange(r); }""",
            PASSAGE,
        )
    form = comment_on_selection(page, "Not before the review")
    expect(form.get_by_label("Quote", exact=False)).to_have_value(PASSAGE)
    expect(form).to_contain_text("stored as plain text on the hub")
    form.get_by_role("button", name="Comment").click()
    expect(main.locator(".art-comment .art-comment-body")).to_have_text(
        f"\u201c{PASSAGE}\u201d\n\nNot before the review"
    )
    [stored] = comments(hub, aid)
    # The hub refuses a quote anchor on ciphertext: the passage rides in the text, anchored where it sits.
    assert stored["body"] == f"\u201c{PASSAGE}\u201d\n\nNot before the review"
    assert stored["anchor"]["mode"] == "point"
    assert 0 <= stored["anchor"]["x"] <= 1 and 0 < stored["anchor"]["y"] < 0.5


def test_a_selection_longer_than_a_quote_is_cut_and_says_so(hub: Hub, writer: str, shared: Any) -> None:
    app_page = shared()
    project = hub.new_project("sellong")
    words = " ".join(f"word{n}" for n in range(500))  # 3,390 characters
    aid = publish(hub, writer, project, "Long", f"<p id=long>{words}</p>")
    viewer(app_page, aid)
    select_passage(app_page, "#long")
    main = app_page.locator("main")
    main.get_by_role("button", name="Comment on this passage").click()
    form = main.locator("form.art-comment-form")
    limit = hub.rest("GET", "/limits")["comment_quote_chars"]
    expect(form.get_by_label("Quote", exact=False)).to_have_value(words[:limit])
    expect(form).to_contain_text(f"its first {limit} characters are kept")
    form.get_by_label("Comment", exact=True).fill("Too long")
    form.get_by_role("button", name="Comment").click()
    expect(main.locator(".art-comment")).to_have_count(1)
    [stored] = comments(hub, aid)
    assert stored["anchor"] == {"mode": "text", "quote": words[:limit].strip()}


def test_a_selection_with_markup_is_shown_as_text(hub: Hub, writer: str, shared: Any) -> None:
    app_page = shared()
    project = hub.new_project("selx")
    aid = publish(
        hub, writer, project, "Tags", '# Tags\n\nA <img src=x onerror="window.__pwned=1"> here\n', kind="markdown"
    )
    viewer(app_page, aid)
    select_passage(app_page, "p >> nth=0")
    bar = app_page.locator("main .art-selection")
    expect(bar.get_by_role("status")).to_contain_text('<img src=x onerror="window.__pwned=1">')
    assert app_page.locator("main img").count() == 0
    assert app_page.evaluate("window.__pwned") is None


def test_mermaid_is_fetched_only_when_the_diagram_nears_the_screen(hub: Hub, writer: str, browser: Any) -> None:
    project = hub.new_project("lazy")
    far = "".join(f"Paragraph {n} of the report.\n\n" for n in range(150))
    content = f"# Report\n\n{far}```mermaid\ngraph TD\n  A[Plan] --> B[Ship]\n```\n"
    aid = publish(hub, writer, project, "Report", content, kind="markdown")
    url = hub.rest("POST", f"/artifacts/{aid}/share", {}, expect=201)["url"]
    address = url if url.startswith("http") else f"{hub.url}/{url.lstrip('/')}"
    context = browser.new_context(viewport=PHONE)
    try:
        page = context.new_page()
        fetched: list[str] = []
        page.on("request", lambda r: fetched.append(r.url) if "/assets/mermaid-" in r.url else None)
        page.goto(address)
        frame = page.frame_locator("#artifact-frame")
        expect(frame.locator("h1")).to_have_text("Report")
        page.wait_for_load_state("load")
        page.wait_for_timeout(300)  # a diagram screens away: still nothing fetched
        assert fetched == []
        assert frame.locator("pre.mermaid svg").count() == 0
        frame.locator("pre.mermaid").scroll_into_view_if_needed()
        expect(frame.locator("pre.mermaid svg")).to_have_count(1)
        assert len(fetched) == 1
    finally:
        context.close()


@pytest.mark.parametrize("viewport", WIDTHS)
def test_share_sheet_beside_copy_and_toasts_above_the_dialog(
    hub: Hub, writer: str, opener: Any, viewport: dict[str, int]
) -> None:
    project = hub.new_project("shs")
    aid = publish(hub, writer, project, "Shared plan", "<p>for everyone</p>")
    page = opener(viewport=viewport, hash_="#/")
    page.add_init_script(FAKE_SHARE)
    page.reload()
    viewer(page, aid)
    page.locator("main").get_by_role("button", name="Share").click()
    sheet = page.locator("dialog.dialog")
    sheet.get_by_role("button", name="Create a link").click()
    # The toast is raised while the sheet is modal: in the sheet's own live region, on top, not inert.
    toast = sheet.locator(".toasts .toast", has_text="Link created")
    expect(toast).to_be_visible()
    expect(toast).to_have_attribute("role", "status")
    assert toast.evaluate("""t => { const r = t.getBoundingClientRect();
        return t.contains(document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2)); }""")
    share = sheet.get_by_role("button", name="Share via…")
    expect(sheet.get_by_role("button", name="Copy link")).to_be_visible()
    share.click()
    url = hub.rest("GET", f"/artifacts/{aid}/share")["url"]
    expected = url if url.startswith("http") else f"{hub.url}/{url.lstrip('/')}"
    assert page.evaluate("window.__shared") == [{"title": "Shared plan", "url": expected}]
    sheet.get_by_role("button", name="Close").click()
    expect(page.locator("#toasts .toast", has_text="Link created")).to_be_visible()  # moved out, still shown


def test_no_share_sheet_where_the_browser_has_none(hub: Hub, writer: str, app_page: Any) -> None:
    project = hub.new_project("shn")
    aid = publish(hub, writer, project, "Plain", "<p>words</p>")
    hub.rest("POST", f"/artifacts/{aid}/share", {}, expect=201)
    app_page.evaluate("() => { delete Navigator.prototype.share; delete Navigator.prototype.canShare; }")
    viewer(app_page, aid).get_by_role("button", name="Share").click()
    sheet = app_page.locator("dialog.dialog")
    expect(sheet.get_by_role("button", name="Copy link")).to_be_visible()
    expect(sheet.get_by_role("button", name="Share via…")).to_have_count(0)


@pytest.mark.parametrize("viewport", WIDTHS)
def test_share_page_back_only_with_somewhere_to_go(
    hub: Hub, writer: str, browser: Any, viewport: dict[str, int]
) -> None:
    project = hub.new_project("back")
    aid = publish(hub, writer, project, "Public plan", "<p id=w>words</p>")
    url = hub.rest("POST", f"/artifacts/{aid}/share", {}, expect=201)["url"]
    address = url if url.startswith("http") else f"{hub.url}/{url.lstrip('/')}"
    context = browser.new_context(viewport=viewport)
    try:
        page = context.new_page()
        page.goto(address)  # opened on its own, as from a chat: nothing to go back to
        expect(page.frame_locator("iframe").locator("#w")).to_have_text("words")
        expect(page.get_by_role("button", name="← Back")).to_have_count(0)
        expect(page.locator("#back")).to_be_hidden()
        other = context.new_page()
        other.goto(f"{hub.url}/artifacts/nope")
        other.goto(address)  # came from another page in this tab: Back returns to it
        back = other.get_by_role("button", name="← Back")
        expect(back).to_be_visible()
        back.click()
        expect(other).to_have_url(f"{hub.url}/artifacts/nope")
    finally:
        context.close()


@pytest.mark.parametrize("viewport", WIDTHS)
def test_a_missing_artifact_reads_as_a_sentence(
    hub: Hub, writer: str, shared: Any, browser: Any, viewport: dict[str, int]
) -> None:
    project = hub.new_project("gone")
    aid = publish(hub, writer, project, "Soon gone", "<p>words</p>")
    url = hub.rest("POST", f"/artifacts/{aid}/share", {}, expect=201)["url"]
    address = url if url.startswith("http") else f"{hub.url}/{url.lstrip('/')}"
    hub.rest("DELETE", f"/artifacts/{aid}")
    page = shared(f"#/artifacts/{aid}", viewport=viewport)
    alert = page.locator("main [role=alert]")
    expect(alert).to_contain_text("This artifact is not here any more: it was deleted")
    assert "not_found" not in (page.locator("main").text_content() or "")
    page.evaluate("id => { location.hash = '#/artifacts/' + id + '?version=4'; }", aid)
    expect(page.locator("main [role=alert]")).to_contain_text("Version 4 of this artifact is not kept")
    context = browser.new_context(viewport=viewport)
    try:
        public = context.new_page()
        answer = public.goto(address)
        assert answer is not None and answer.status == 404
        expect(public.locator("h1")).to_have_text("Nothing to show here")
        expect(public.locator("main p")).to_contain_text("This link no longer opens anything")
        text = public.locator("body").text_content() or ""
        assert "404" not in text and "not_found" not in text
        answer = public.goto(f"{hub.url}/artifacts/{aid}")
        assert answer is not None and answer.status == 404
        expect(public.locator("main p")).to_contain_text("There is no artifact at this address")
    finally:
        context.close()
    with httpx.Client(timeout=30) as client:  # a client that is not a browser keeps the problem document
        assert client.get(address).json()["code"] == "not_found"


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_changed_screens_have_no_serious_violation(
    hub: Hub, writer: str, shared: Any, browser: Any, theme: str
) -> None:
    project = hub.new_project("axe25")
    aid = publish(hub, writer, project, "Audited plan", MARKDOWN, kind="markdown")
    page = shared(f"#/artifacts/{aid}", theme=theme)
    expect(page.frame_locator("main iframe.art-frame").locator("h1")).to_have_text("Plan")
    select_passage(page, "p >> nth=0")
    expect(page.locator("main .art-selection")).to_be_visible()
    assert audit(page) == []
    comment_on_selection(page, "A note")
    assert audit(page) == []
    page.locator("main").get_by_role("button", name="Share").click()
    page.locator("dialog.dialog").get_by_role("button", name="Create a link").click()
    toast = page.locator("dialog.dialog .toast")
    expect(toast).to_be_visible()
    toast.evaluate("t => Promise.all(t.getAnimations().map((a) => a.finished))")  # risen: full contrast
    assert audit(page) == []
    page.locator("dialog.dialog").get_by_role("button", name="Close").click()
    url = hub.rest("GET", f"/artifacts/{aid}/share")["url"]
    address = url if url.startswith("http") else f"{hub.url}/{url.lstrip('/')}"
    context = browser.new_context(color_scheme=theme, viewport=PHONE)
    try:
        public = context.new_page()
        public.goto(address)
        expect(public.frame_locator("iframe").locator("h1")).to_have_text("Plan")
        assert audit(public) == []
        public.goto(f"{hub.url}/s/{'z' * 43}")
        expect(public.locator("h1")).to_have_text("Nothing to show here")
        assert audit(public) == []
    finally:
        context.close()
