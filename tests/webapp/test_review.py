"""The diff review screen (issue 29) in Chromium at 390 and 1280 px: the file list with counts,
hunks unified on a phone and side by side on a desk, folded context with Expand, word marks, a line
comment posted by tapping a line number (what the hub stores checked), outdated comments after the
agent's update, the verdict round trip to the agent's `inbox_wait`, hostile paths and lines shown
as text, and the public share page rendering the diff with no script."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.webapp.conftest import Hub
from tests.webapp.test_a11y import audit

pytestmark = pytest.mark.browser
SHOTS = Path("/tmp/review-shots")  # screenshots for a person to look at, when the folder exists

HOSTILE = '<img src=x onerror="window.__pwned = 1">.py'
CONTEXT = "".join(f" line {n}\n" for n in range(3, 23))  # 20 unchanged lines: folded
DIFF = (
    f"diff --git a/src/app.py b/src/app.py\n--- a/src/app.py\n+++ b/src/app.py\n@@ -1,23 +1,23 @@\n"
    f" import os\n-def greet():\n+def greet(name):\n{CONTEXT}-x = 1\n+x = 2\n"
    f"diff --git a/{HOSTILE} b/{HOSTILE}\nnew file mode 100644\n--- /dev/null\n+++ b/{HOSTILE}\n"
    "@@ -0,0 +1,2 @@\n+<script>window.__pwned = 2</script>\n+<b>bold</b>\n"
)


@pytest.fixture(scope="module")
def reviewer(hub: Hub) -> str:
    return hub.new_agent("reviewee")


def publish(hub: Hub, token: str, project: str, content: str = DIFF) -> str:
    done = hub.mcp(
        token,
        "artifact_publish",
        {"project_id": project, "title": "Greeting change", "kind": "diff", "content": content},
    )
    return str(done["artifact_id"])


def open_diff(page: Any, artifact_id: str, query: str = "") -> Any:
    page.evaluate("([id, q]) => { location.hash = '#/artifacts/' + encodeURIComponent(id) + q; }", [artifact_id, query])
    main = page.locator("main")
    expect(main.locator(".diff-view")).to_be_visible()
    return main


def test_file_list_and_tap_to_comment_on_a_phone(hub: Hub, reviewer: str, app_page: Any) -> None:
    project = hub.new_project("rev")
    aid = publish(hub, reviewer, project)
    main = open_diff(app_page, aid)
    files = main.locator(".diff-files li")
    expect(files).to_have_count(2)
    expect(files.nth(0)).to_contain_text("src/app.py")
    expect(files.nth(0)).to_contain_text("+2")
    expect(files.nth(0)).to_contain_text("−2")
    expect(files.nth(1).locator(".diff-file-link")).to_have_text(HOSTILE)  # markup in a path is text
    first = main.locator("section.diff-file").nth(0)
    expect(first.locator(".dl.split")).to_have_count(0)  # unified on a phone
    expect(first.locator(".dl.add .wd")).to_have_text(["name", "2"])  # the changed words marked
    expand = first.get_by_role("button", name="Expand 14 unchanged lines")
    expect(expand).to_be_visible()
    expand.click()
    expect(first.get_by_text("line 10", exact=True)).to_be_visible()
    second = main.locator("section.diff-file").nth(1)
    second.scroll_into_view_if_needed()
    expect(second.locator(".dl.add .dc")).to_have_text(["+<script>window.__pwned = 2</script>", "+<b>bold</b>"])
    assert app_page.evaluate("window.__pwned") is None

    first.get_by_role("button", name="Comment on new line 2", exact=True).click()
    form = first.locator("form.diff-form")
    form.get_by_role("textbox").fill("Say <i>who</i>")
    form.get_by_role("button", name="Comment").click()
    expect(first.locator(".diff-comment-body")).to_have_text("Say <i>who</i>")
    [stored] = hub.rest("GET", f"/artifacts/{aid}/comments")["comments"]
    assert stored["anchor"] == {"mode": "line", "file": "src/app.py", "side": "new", "line": 2}
    assert stored["author"] == "human" and stored["anchor_version"] == 1
    expect(main.locator(".art-comment .art-line")).to_contain_text("src/app.py:2 (new side)")
    if SHOTS.exists():
        first.scroll_into_view_if_needed()
        app_page.screenshot(path=str(SHOTS / "review-phone.png"))


def test_side_by_side_and_outdated_after_an_update_on_a_desk(hub: Hub, reviewer: str, app_page_desktop: Any) -> None:
    page = app_page_desktop
    project = hub.new_project("rev-wide")
    aid = publish(hub, reviewer, project)
    for line, body in ((2, "keeps its line"), (23, "this line changes")):
        hub.rest(
            "POST",
            f"/artifacts/{aid}/comments",
            {"body": body, "anchor": {"mode": "line", "file": "src/app.py", "side": "new", "line": line}},
            expect=201,
        )
    hub.mcp(reviewer, "artifact_update", {"artifact_id": aid, "content": DIFF.replace("+x = 2", "+x = 3")})
    main = open_diff(page, aid)
    first = main.locator("section.diff-file").nth(0)
    expect(first.locator(".dl.split").first).to_be_visible()  # side by side from 1024 px
    expect(first.locator(".diff-comment-body")).to_have_text(["keeps its line"])
    outdated = main.locator(".art-comment.outdated")
    expect(outdated).to_have_count(1)
    expect(outdated).to_contain_text("this line changes")
    expect(outdated.locator(".tag.outdated")).to_contain_text("outdated")
    assert audit(page) == []  # axe at desk width too (the a11y suite audits the phone layout)
    if SHOTS.exists():
        page.screenshot(path=str(SHOTS / "review-desktop.png"))
    since = main.locator("#diff-since")
    since.select_option("1")
    expect(main.locator(".diff-files li:visible")).to_have_count(1)
    expect(main.locator("section.diff-file:visible")).to_have_count(1)


def test_verdict_round_trip_to_the_agents_wait(hub: Hub, app_page: Any) -> None:
    agent = hub.new_agent("waiting-reviewee")
    project = hub.new_project("rev-verdict")
    aid = publish(hub, agent, project)
    asked = hub.mcp(
        agent,
        "signal_append",
        {"project_id": project, "kind": "approval", "summary": "Review my change", "artifact_id": aid},
    )
    # The package's hub is shared: other tests' approvals wait in the same Inbox (oldest first, a
    # page at a time), so the Inbox is opened on this test's project.
    app_page.evaluate(f"location.hash = '#/inbox?project={project}'")
    item = app_page.locator("main li.item").filter(has_text="Review my change")
    item.get_by_role("link", name="Open the diff to review").click()
    main = app_page.locator("main")
    verdict = main.locator(".diff-verdict")
    expect(verdict).to_contain_text("Review my change")
    first = main.locator("section.diff-file").nth(0)
    first.get_by_role("button", name="Comment on old line 2", exact=True).click()
    first.locator("form.diff-form").get_by_role("textbox").fill("keep the old name")
    first.locator("form.diff-form").get_by_role("button", name="Comment").click()
    expect(first.locator(".diff-comment-body")).to_have_text("keep the old name")
    verdict.get_by_label("Note (optional)").fill("two things")
    verdict.get_by_role("button", name="Request changes").click()
    expect(verdict).to_contain_text("You asked for changes")
    waited = hub.mcp(agent, "inbox_wait", {"wait_seconds": 10})
    [item] = [i for i in waited["items"] if i["event_id"] == asked["event_id"]]
    review = item["decision"]["review"]
    assert item["decision"]["decision"] == "declined" and item["decision"]["note"] == "two things"
    assert review["verdict"] == "changes_requested" and review["artifact_id"] == aid
    assert [(c["file"], c["side"], c["line"], c["body"]) for c in review["comments"]] == [
        ("src/app.py", "old", 2, "keep the old name")
    ]


def test_public_share_page_renders_the_diff_without_script(hub: Hub, reviewer: str, browser: Any) -> None:
    project = hub.new_project("rev-share")
    aid = publish(hub, reviewer, project)
    token = hub.rest("POST", f"/artifacts/{aid}/share", expect=201)["token"]
    frame = hub.http.get(f"/s/{token}/frame")
    assert frame.status_code == 200
    assert "<script" not in frame.text and "&lt;script&gt;" in frame.text and "&lt;img src=x" in frame.text
    context = browser.new_context(viewport={"width": 390, "height": 844})
    try:
        page = context.new_page()
        page.goto(f"{hub.url}/s/{token}")
        doc = page.frame_locator("iframe")
        expect(doc.locator(".files li")).to_have_count(2)
        expect(doc.locator("tr.add td.code").first).to_have_text("+def greet(name):")
        expect(doc.locator("h2").nth(1)).to_have_text(HOSTILE)
        assert page.evaluate("window.__pwned") is None
    finally:
        context.close()


def hunk(old: int, new: int, lines: list[str]) -> str:
    """One hunk with the counts its lines make (each line starts with ' ', '-' or '+')."""
    olds = sum(1 for line in lines if line[0] != "+")
    news = sum(1 for line in lines if line[0] != "-")
    return f"@@ -{old},{olds} +{new},{news} @@\n" + "".join(line + "\n" for line in lines)


def changed(path: str, *hunks: str) -> str:
    return f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n" + "".join(hunks)


def test_changes_since_the_last_review_show_only_the_changed_hunks(hub: Hub, app_page: Any) -> None:
    agent = hub.new_agent("since-reviewee")
    project = hub.new_project("rev-since")
    first_hunk = [" import os", "-def greet():", "+def greet(name):", " return"]
    v1 = (
        changed("src/a.py", hunk(1, 1, first_hunk), hunk(40, 40, [" x", "-y = 1", "+y = 2", " z"]))
        + changed("src/b.py", hunk(5, 5, [" keep", "-b = 1", "+b = 2"]))
        + changed("src/c.py", hunk(9, 9, [" c", "-c = 1", "+c = 2"]))
    )
    aid = publish(hub, agent, project, v1)
    asked = hub.approval(agent, project, "First look", artifact_id=aid)
    hub.rest("POST", f"/approvals/{asked}/decision", {"decision": "decline", "note": "y is wrong"}, expect=200)
    # Version 2: a.py's first hunk moved down two lines but reads the same, its second changed;
    # b.py as it was; c.py no longer changed; d.py new.
    v2 = (
        changed("src/a.py", hunk(3, 3, first_hunk), hunk(42, 42, [" x", "-y = 1", "+y = 3", " z"]))
        + changed("src/b.py", hunk(5, 5, [" keep", "-b = 1", "+b = 2"]))
        + changed("src/d.py", hunk(1, 1, ["+d = 4"]).replace("-1,0", "-0,0"))
    )
    hub.mcp(agent, "artifact_update", {"artifact_id": aid, "content": v2})
    hub.approval(agent, project, "Second look", artifact_id=aid)
    main = open_diff(app_page, aid)
    since = main.locator("#diff-since")
    expect(since.locator("option:checked")).to_have_text("Changed since version 1 (your last review)")
    expect(main.locator(".diff-files li:visible .diff-file-link")).to_have_text(["src/a.py", "src/d.py"])
    expect(main.locator("section.diff-file:visible")).to_have_count(2)
    a = main.locator("section.diff-file").nth(0)
    expect(a.locator(".diff-hunk:visible .diff-hunk-head")).to_have_text(["@@ -42,3 +42,3 @@"])
    expect(a.locator(".diff-hunk:visible .dl.add .dc")).to_have_text(["+y = 3"])
    expect(a.locator(".diff-kept")).to_have_text("1 unchanged hunk hidden")
    expect(main.locator(".diff-gone")).to_have_text("No longer changed since version 1: src/c.py")
    since.select_option("")  # all changes again
    expect(main.locator("section.diff-file:visible")).to_have_count(3)
    expect(a.locator(".diff-hunk:visible")).to_have_count(2)
    expect(a.locator(".diff-kept")).to_be_hidden()
    expect(main.locator(".diff-gone")).to_be_hidden()


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("width", [390, 1280])
def test_review_screen_is_axe_clean(hub: Hub, reviewer: str, opener: Any, width: int, theme: str) -> None:
    """The whole review screen (verdict panel, file list, hunks unified or side by side, a line
    comment under its line, an open comment form, an outdated comment, "changes since") at both
    widths in both themes."""
    project = hub.new_project("rev-axe")
    aid = publish(hub, reviewer, project)
    hub.rest(
        "POST",
        f"/artifacts/{aid}/comments",
        {"body": "Name it", "anchor": {"mode": "line", "file": "src/app.py", "side": "new", "line": 23}},
        expect=201,
    )
    hub.mcp(reviewer, "artifact_update", {"artifact_id": aid, "content": DIFF.replace("+x = 2", "+x = 3")})
    hub.rest(
        "POST",
        f"/artifacts/{aid}/comments",
        {"body": "Who is greeted?", "anchor": {"mode": "line", "file": "src/app.py", "side": "new", "line": 2}},
        expect=201,
    )
    asked = hub.approval(reviewer, project, "Review the greeting", artifact_id=aid)
    page = opener(
        viewport={"width": width, "height": 900}, color_scheme=theme, hash_=f"#/artifacts/{aid}?approval={asked}"
    )
    main = page.locator("main")
    expect(main.locator(".diff-verdict")).to_contain_text("Review the greeting")
    first = main.locator("section.diff-file").nth(0)
    expect(first.locator(".diff-comment-body")).to_have_text(["Who is greeted?"])
    expect(first.locator(".dl.split").first if width >= 1024 else first.locator(".dl").first).to_be_visible()
    expect(main.locator(".art-comment.outdated")).to_have_count(1)
    first.get_by_role("button", name="Comment on new line 3", exact=True).click()
    expect(first.locator("form.diff-form")).to_be_visible()
    main.locator("section.diff-file").nth(1).scroll_into_view_if_needed()
    expect(main.locator("section.diff-file[data-drawn]")).to_have_count(2)
    assert page.evaluate("getComputedStyle(document.body).colorScheme") == theme
    assert audit(page) == []


def test_a_long_file_list_shows_ten_until_asked(hub: Hub, reviewer: str, app_page: Any) -> None:
    """On a phone a long list would push the code screens down: the first ten files show, the
    first file's lines are drawn without scrolling, and the rest of the list is one tap away."""
    project = hub.new_project("rev-long")
    aid = publish(
        hub, reviewer, project, "".join(changed(f"src/f{n:02d}.py", hunk(1, 1, ["-a", "+b"])) for n in range(12))
    )
    main = open_diff(app_page, aid)
    links = main.locator(".diff-files li .diff-file-link")
    expect(links.locator("visible=true")).to_have_count(10)
    expect(main.locator("section.diff-file").nth(0).locator(".dl.add .dc")).to_be_visible()
    more = main.get_by_role("button", name="Show all 12 files")
    expect(more).to_have_attribute("aria-expanded", "false")
    more.click()
    expect(links.locator("visible=true")).to_have_count(12)
    expect(main.get_by_role("button", name="Show the first 10 files")).to_have_attribute("aria-expanded", "true")
    main.locator(".diff-files li .diff-file-link", has_text="src/f11.py").click()
    expect(main.locator("section.diff-file").nth(11).locator(".dl.add .dc")).to_be_in_viewport()
