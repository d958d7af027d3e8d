"""The artifacts screens (issue 18 part 2): a project's gallery and the viewer. Artifacts are published
by an agent over MCP (the protected one through `hub-cli call`, which encrypts on the agent's side);
what the human does in the app is checked against what the hub stores afterwards. Tests that leave the
page as a screen does take an open app page in turn (tests/webapp/shared_pages.py)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from playwright.sync_api import expect

from tests.webapp.conftest import DESKTOP, Hub
from tests.webapp.shared_pages import page_pool_fixture, shared_fixture  # noqa: F401 (fixtures)

pytestmark = pytest.mark.browser

PASSWORD = "correct horse battery staple 42"
XSS_TITLE = '<img src=x onerror="window.__pwned = 1"><b>Bold plan</b>'


@pytest.fixture(scope="module")
def artist(hub: Hub) -> str:
    return hub.new_agent("artist")


def publish(hub: Hub, token: str, project: str, title: str, content: str, kind: str = "html") -> str:
    done = hub.mcp(token, "artifact_publish", {"project_id": project, "title": title, "kind": kind, "content": content})
    return str(done["artifact_id"])


def viewer(page: Any, artifact_id: str) -> Any:
    page.evaluate("id => { location.hash = '#/artifacts/' + encodeURIComponent(id); }", artifact_id)
    return page.locator("main")


def comments(hub: Hub, artifact_id: str) -> list[dict[str, Any]]:
    return list(hub.rest("GET", f"/artifacts/{artifact_id}/comments")["comments"])


def test_gallery_groups_and_lock_tile(hub: Hub, artist: str, shared: Any) -> None:
    app_page = shared()
    project = hub.new_project("gal")
    publish(hub, artist, project, "Release notes", "# Notes\n\nShipped.", kind="markdown")
    publish(hub, artist, project, "Landing page", "<h1>Hi</h1>")
    hub.agent_call(
        artist,
        "artifact_publish",
        {
            "project_id": project,
            "title": "Locked plan",
            "kind": "html",
            "content": "<p>secret</p>",
            "password": PASSWORD,
        },
    )
    app_page.evaluate("p => { location.hash = '#/projects/' + p + '/artifacts?group=kind'; }", project)
    gallery = app_page.locator("main .art-gallery")
    expect(gallery.locator(".art-group")).to_have_count(2)  # HTML and Markdown
    expect(gallery.locator(".art-group", has_text="Markdown").locator(".art-title")).to_have_text(["Release notes"])
    locked = gallery.locator(".art-tile.locked")
    expect(locked).to_have_count(1)
    expect(locked).to_contain_text("Locked plan")
    expect(locked).to_contain_text("Protected")
    app_page.get_by_role("link", name="Agent").click()
    expect(gallery.locator(".art-group")).to_have_count(1)
    expect(gallery.locator(".art-group h2")).to_contain_text("artist")
    gallery.locator(".art-link", has_text="Landing page").click()
    expect(app_page.locator("h1")).to_have_text("Landing page")
    expect(app_page.frame_locator("main iframe.art-frame").locator("h1")).to_have_text("Hi")


def test_frame_is_sandboxed_without_same_origin(hub: Hub, artist: str, shared: Any) -> None:
    app_page = shared()
    project = hub.new_project("sbx")
    aid = publish(hub, artist, project, "Probe", "<p id=probe>probe</p>")
    main = viewer(app_page, aid)
    frame = main.locator("iframe.art-frame")
    expect(frame).to_have_attribute("sandbox", "allow-scripts")
    src = frame.get_attribute("src")
    assert src.startswith(f"/artifacts/{aid}/frame?version=1&pass=")
    expect(app_page.frame_locator("main iframe.art-frame").locator("#probe")).to_have_text("probe")


def test_comment_on_a_quote_resolve_and_reopen(hub: Hub, artist: str, shared: Any) -> None:
    app_page = shared()
    project = hub.new_project("cmt")
    aid = publish(hub, artist, project, "Copy", "<p>The quick brown fox jumps</p>")
    main = viewer(app_page, aid)
    expect(main.get_by_text("No comments yet.")).to_be_visible()
    form = main.locator("form.art-comment-form")
    form.get_by_label("Comment", exact=True).fill("Say <b>slow</b> instead")
    form.get_by_label("Anchored to").select_option("text")
    form.get_by_label("Quote").fill("quick brown fox")
    form.get_by_role("button", name="Comment").click()
    item = main.locator(".art-comment")
    expect(item).to_have_count(1)
    expect(item.locator(".art-quote")).to_have_text("quick brown fox")
    expect(item.locator(".art-comment-body")).to_have_text("Say <b>slow</b> instead")  # text, not markup
    stored = comments(hub, aid)
    assert [(c["author"], c["body"], c["anchor"], c["anchor_version"], c["done"]) for c in stored] == [
        ("human", "Say <b>slow</b> instead", {"mode": "text", "quote": "quick brown fox"}, 1, False)
    ]
    item.get_by_role("button", name="Resolve").click()
    expect(item.get_by_role("button", name="Reopen")).to_be_visible()
    expect(item).to_contain_text("resolved")
    assert comments(hub, aid)[0]["done"] is True
    item.get_by_role("button", name="Reopen").click()
    expect(item.get_by_role("button", name="Resolve")).to_be_visible()
    assert comments(hub, aid)[0]["done"] is False


def test_comment_on_a_point_and_delete(hub: Hub, artist: str, shared: Any) -> None:
    page = shared(viewport=DESKTOP)
    project = hub.new_project("pnt")
    aid = publish(hub, artist, project, "Chart", "<div style='height:600px'>chart</div>")
    main = viewer(page, aid)
    form = main.locator("form.art-comment-form")
    form.get_by_label("Comment", exact=True).fill("This bar is wrong")
    form.get_by_label("Anchored to").select_option("point")
    form.get_by_role("button", name="Pick a point on the artifact").click()
    layer = main.locator(".art-pick")
    box = layer.bounding_box()
    layer.click(position={"x": box["width"] * 0.25, "y": box["height"] * 0.5})
    expect(layer).to_have_count(0)
    form.get_by_role("button", name="Comment").click()
    expect(main.locator(".art-comment")).to_contain_text("25% across, 50% down")
    [stored] = comments(hub, aid)
    assert stored["anchor"]["mode"] == "point"
    assert abs(stored["anchor"]["x"] - 0.25) < 0.02 and abs(stored["anchor"]["y"] - 0.5) < 0.02
    main.locator(".art-comment").get_by_role("button", name="Delete").click()
    page.locator("dialog.dialog").get_by_role("button", name="Delete").click()
    expect(main.get_by_text("No comments yet.")).to_be_visible()
    assert comments(hub, aid) == []


def test_share_link_created_copied_and_revoked(hub: Hub, artist: str, shared: Any) -> None:
    page = shared(viewport=DESKTOP, clipboard=True)
    project = hub.new_project("shr")
    aid = publish(hub, artist, project, "Shared page", "<p id=shared>for everyone</p>")
    main = viewer(page, aid)
    expect(page.frame_locator("main iframe.art-frame").locator("#shared")).to_be_visible()
    main.get_by_role("button", name="Share").click()
    sheet = page.locator("dialog.dialog")
    sheet.get_by_role("button", name="Create a link").click()
    address = sheet.locator(".art-share-url")
    expect(address).to_contain_text("/s/")
    url = address.text_content()
    token = hub.rest("GET", f"/artifacts/{aid}/share")["token"]
    assert url == f"{hub.url}/s/{token}"
    sheet.get_by_role("button", name="Copy link").click()
    assert page.evaluate("navigator.clipboard.readText()") == url
    with httpx.Client(timeout=30) as public:
        assert public.get(url).status_code == 200
        # While the link is live the artifact's own page needs the viewer pass: the app's frame has one.
        assert public.get(f"{hub.url}/artifacts/{aid}").status_code == 404
        sheet.get_by_role("button", name="Close").click()
        page.evaluate("location.hash = '#/inbox'")
        expect(page.locator("h1")).to_have_text("Inbox")
        viewer(page, aid)
        expect(page.frame_locator("main iframe.art-frame").locator("#shared")).to_have_text("for everyone")
        main.get_by_role("button", name="Share").click()
        sheet.get_by_role("button", name="Revoke link").click()
        expect(sheet.get_by_role("button", name="Create a link")).to_be_visible()
        assert public.get(url).status_code == 404
        assert public.get(f"{hub.url}/s/{token}/frame").status_code == 404
    hub.rest("GET", f"/artifacts/{aid}/share", expect=404)
    sheet.get_by_role("button", name="Close").click()


def test_protected_artifact_opens_with_its_password_never_sent(hub: Hub, artist: str, app_page: Any) -> None:
    project = hub.new_project("lock")
    done = hub.agent_call(
        artist,
        "artifact_publish",
        {
            "project_id": project,
            "title": "Secret plan",
            "kind": "html",
            "content": "<p id=plan>Ship on Friday</p>",
            "password": PASSWORD,
        },
    )
    aid = done["artifact_id"]
    hub.rest("POST", f"/artifacts/{aid}/share", {}, expect=201)  # the frame then opens only with a viewer pass
    sent: list[str] = []
    app_page.on("request", lambda r: sent.append(f"{r.url} {r.post_data or ''} {json.dumps(r.headers)}"))
    main = viewer(app_page, aid)
    gate = main.locator("form.art-gate")
    gate.get_by_label("Password").fill("not the password")
    gate.get_by_role("button", name="Unlock").click()
    expect(gate.get_by_role("alert")).to_have_text("Wrong password: this password does not open the artifact.")
    assert main.locator("iframe").count() == 0
    gate.get_by_label("Password").fill(PASSWORD)
    gate.get_by_role("button", name="Unlock").click()
    frame = main.locator("iframe.art-frame")
    expect(frame).to_have_attribute("sandbox", "allow-scripts")
    # Written into the loader's frame, whose CSP lets only the hub's loader run (scripts are not on).
    inner = app_page.frame_locator("main iframe.art-frame")
    expect(inner.locator("#plan")).to_have_text("Ship on Friday")
    assert sent and not [
        s for s in sent if PASSWORD in s or PASSWORD.replace(" ", "%20") in s or PASSWORD.replace(" ", "+") in s
    ]
    assert "Ship on Friday" not in (main.text_content() or "")  # only inside the frame


def test_markup_in_a_title_is_text(hub: Hub, artist: str, shared: Any) -> None:
    app_page = shared()
    project = hub.new_project("xss")
    aid = publish(hub, artist, project, XSS_TITLE, "<p>body</p>")
    app_page.evaluate("p => { location.hash = '#/projects/' + p + '/artifacts'; }", project)
    tile = app_page.locator("main .art-title")
    expect(tile).to_have_text(XSS_TITLE)
    viewer(app_page, aid)
    expect(app_page.locator("h1")).to_have_text(XSS_TITLE)
    assert app_page.locator("main img, main b").count() == 0
    assert app_page.evaluate("window.__pwned") is None


def test_live_band_follows_the_stream(hub: Hub, artist: str, shared: Any) -> None:
    app_page = shared()
    project = hub.new_project("live")
    aid = publish(hub, artist, project, "Draft page", "<p id=v>one</p>")
    main = viewer(app_page, aid)
    expect(app_page.frame_locator("main iframe.art-frame").locator("#v")).to_have_text("one")
    band = main.locator(".art-live")
    expect(band).to_be_hidden()
    hub.mcp(artist, "artifact_draft", {"artifact_id": aid, "content": "<p id=v>two</p>"})
    expect(band).to_be_visible()
    expect(band).to_contain_text("artist")
    expect(band).to_contain_text("version 2")
    band.get_by_role("link", name="Follow the draft").click()
    expect(app_page.frame_locator("main iframe.art-frame").locator("#v")).to_have_text("two")
    hub.mcp(artist, "artifact_draft", {"artifact_id": aid, "content": "<p id=v>three</p>"})
    expect(app_page.frame_locator("main iframe.art-frame").locator("#v")).to_have_text("three")


def test_copy_raw_and_delete(hub: Hub, artist: str, shared: Any) -> None:
    page = shared(viewport=DESKTOP, clipboard=True)
    project = hub.new_project("del")
    aid = publish(hub, artist, project, "Notes", "# Raw *markdown*\n", kind="markdown")
    main = viewer(page, aid)
    main.get_by_role("button", name="Copy raw").click()
    expect(page.locator("#toasts")).to_contain_text("Raw text copied")
    assert page.evaluate("navigator.clipboard.readText()") == "# Raw *markdown*\n"
    main.get_by_role("button", name="Delete").first.click()
    page.locator("dialog.dialog").get_by_role("button", name="Delete artifact").click()
    expect(page.locator("h1")).to_have_text("Artifacts")
    expect(page.locator("main .art-gallery")).to_contain_text("No artifacts yet")
    hub.rest("GET", f"/artifacts/{aid}", expect=404)


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_share_sheet_and_point_picker_have_no_serious_violation(hub: Hub, artist: str, shared: Any, theme: str) -> None:
    from tests.webapp.test_a11y import audit

    project = hub.new_project("axe")
    aid = publish(hub, artist, project, "Audited", "<p>words</p>")
    page = shared(f"#/artifacts/{aid}", theme=theme)
    main = page.locator("main")
    expect(page.frame_locator("main iframe.art-frame").locator("p")).to_have_text("words")
    main.get_by_role("button", name="Share").click()
    page.locator("dialog.dialog").get_by_role("button", name="Create a link").click()
    expect(page.locator("dialog.dialog .art-share-url")).to_be_visible()
    assert audit(page) == []
    page.locator("dialog.dialog").get_by_role("button", name="Close").click()
    form = main.locator("form.art-comment-form")
    form.get_by_label("Anchored to").select_option("point")
    form.get_by_role("button", name="Pick a point on the artifact").click()
    expect(main.locator(".art-pick")).to_be_focused()
    assert audit(page) == []
    page.keyboard.press("Escape")
    expect(main.locator(".art-pick")).to_have_count(0)


def test_protected_markdown_is_shown_as_text(hub: Hub, artist: str, shared: Any) -> None:
    app_page = shared()
    project = hub.new_project("lockmd")
    text = "# Terms\n\n<script>parent.postMessage('pwned', '*')</script> & <b>not bold</b>"
    done = hub.agent_call(
        artist,
        "artifact_publish",
        {"project_id": project, "title": "Terms", "kind": "markdown", "content": text, "password": PASSWORD},
    )
    main = viewer(app_page, done["artifact_id"])
    gate = main.locator("form.art-gate")
    expect(gate.get_by_label("Anchored to")).to_have_count(0)  # the gate, not yet the frame
    # A quote is offered: on ciphertext it rides in the comment's text (test_artifact_phone.py).
    expect(main.locator("form.art-comment-form option[value=text]")).to_have_count(1)
    gate.get_by_label("Password").fill(PASSWORD)
    gate.get_by_role("button", name="Unlock").click()
    inner = app_page.frame_locator("main iframe.art-frame")
    expect(inner.locator("pre")).to_have_text(text)
    assert inner.locator("script, b").count() == 0
