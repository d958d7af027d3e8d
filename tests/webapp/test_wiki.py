"""The wiki (issue 18 part 1): a project's knowledge base in the app. Review a page and see its
trust change; edit a page while an agent writes it and resolve the conflict (never overwritten
unasked); revert to an older version; forget history; lint and the needs-review queue; a page whose
title and body hold markup shown as text or rendered safely, with no script run."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.webapp.conftest import Hub
from tests.webapp.test_a11y import audit

pytestmark = pytest.mark.browser

XSS = '<img src=x onerror="window.__pwned = 1"><script>window.__pwned = 2</script>'


def page_text(title: str, body: str, **fields: str) -> str:
    extra = "".join(f"{k}: {v}\n" for k, v in fields.items())
    return f"---\ntype: Concept\ntitle: {title}\nstatus: draft\n{extra}---\n{body}"


def put(hub: Hub, project: str, path: str, content: str, **extra: Any) -> dict[str, Any]:
    got: dict[str, Any] = hub.rest("PUT", f"/projects/{project}/kb/pages/{path}", {"content": content, **extra})
    return got


def read(hub: Hub, project: str, path: str) -> dict[str, Any]:
    got: dict[str, Any] = hub.rest("GET", f"/projects/{project}/kb/pages/{path}")
    return got


def agent_put(hub: Hub, agent: str, project: str, path: str, content: str) -> None:
    hub.mcp(agent, "brain_put", {"project_id": project, "store": "project", "path": f"/fs/{path}", "content": content})


def open_page(page: Any, project: str, path: str) -> Any:
    page.evaluate("h => { location.hash = h }", f"#/projects/{project}/wiki?path=/fs/{path}")
    article = page.locator("article.wiki-page")
    expect(article.locator("h2.wiki-title")).to_be_visible()
    return article


def test_a_page_shows_its_meta_line_rendered_body_and_backlinks_and_review_changes_its_trust(
    app_page_desktop: Any, hub: Hub
) -> None:
    project = hub.new_project("wiki-review")
    put(
        hub,
        project,
        "guides/deploy.md",
        page_text("Deploying", "# Steps\n\nRun **make**. See [the other](other.md).\n"),
    )
    put(hub, project, "guides/other.md", page_text("Other", "Back to [deploy](deploy.md).\n"))
    page = app_page_desktop
    article = open_page(page, project, "guides/deploy.md")
    expect(article.locator("h2.wiki-title")).to_have_text("Deploying")
    meta = article.locator(".wiki-meta")
    expect(meta).to_contain_text("Concept")
    expect(meta).to_contain_text("draft")
    expect(meta.locator(".trust")).to_have_text("unverified")
    expect(meta).to_contain_text("last written by human")
    expect(article.locator(".rich h3")).to_have_text("Steps")  # the page's # under the screen's h1 and title
    expect(article.locator(".rich strong")).to_have_text("make")
    expect(article.locator(".wiki-backlinks")).to_contain_text("Other")
    # The tree shows the page with its trust in words.
    tree_row = page.locator(".wiki-tree a.wiki-leaf", has_text="Deploying")
    expect(tree_row.locator(".trust")).to_have_text("unverified")

    article.get_by_role("button", name="Review", exact=True).click()
    expect(article.locator(".wiki-meta .trust")).to_have_text("human reviewed")
    expect(article.get_by_role("button", name="Review again")).to_be_visible()
    stored = read(hub, project, "guides/deploy.md")["content"]
    assert "verified:" in stored and "by: human" in stored
    # A link to another page opens it in the wiki.
    article.locator(".rich a", has_text="the other").click()
    expect(page.locator("article.wiki-page h2.wiki-title")).to_have_text("Other")
    assert "path=%2Ffs%2Fguides%2Fother.md" in page.url or "path=/fs/guides/other.md" in page.url


def test_an_edit_racing_an_agent_write_is_a_conflict_showing_both_versions(app_page_desktop: Any, hub: Hub) -> None:
    agent = hub.new_agent("wiki-writer")
    project = hub.new_project("wiki-edit")
    put(hub, project, "plan.md", page_text("Plan", "First plan.\n"))
    page = app_page_desktop
    article = open_page(page, project, "plan.md")
    article.get_by_role("button", name="Edit").click()
    editor = article.locator("textarea[name=content]")
    editor.fill(page_text("Plan", "The human's plan.\n"))
    agent_put(hub, agent, project, "plan.md", page_text("Plan", "The agent's plan.\n"))
    article.get_by_role("button", name="Save").click()

    conflict = article.locator(".wiki-conflict")
    expect(conflict.locator("h3")).to_contain_text("Conflict")
    expect(conflict.locator(".wiki-theirs")).to_contain_text("The agent's plan.")
    expect(conflict.locator("textarea[name=mine]")).to_have_value(page_text("Plan", "The human's plan.\n"))
    expect(conflict).to_contain_text("wiki-writer")
    assert "The agent's plan." in read(hub, project, "plan.md")["content"]  # nothing overwritten
    assert audit(page) == []

    conflict.get_by_role("button", name="Save mine over theirs").click()
    expect(article.locator(".rich")).to_contain_text("The human's plan.")
    assert "The human's plan." in read(hub, project, "plan.md")["content"]


def test_revert_to_an_older_version_and_forget_history(app_page_desktop: Any, hub: Hub) -> None:
    project = hub.new_project("wiki-history")
    first = put(hub, project, "notes.md", page_text("Notes", "Version one.\n"))
    put(hub, project, "notes.md", page_text("Notes", "Version two.\n"))
    page = app_page_desktop
    page.evaluate("h => { location.hash = h }", f"#/projects/{project}/wiki?path=/fs/notes.md&view=history")
    history = page.locator("section.wiki-history")
    rows = history.locator("li.wiki-version")
    expect(rows).to_have_count(2)
    old = rows.nth(1)
    old.get_by_role("button", name="View").click()
    expect(history.locator(".wiki-version-view .rich")).to_contain_text("Version one.")
    assert audit(page) == []
    old.get_by_role("button", name="Revert to this").click()
    page.locator("dialog").get_by_role("button", name="Revert").click()
    expect(rows).to_have_count(3)
    expect(rows.first).to_contain_text("revert")
    stored = read(hub, project, "notes.md")
    assert stored["version"] == first["version"] and "Version one." in stored["content"]

    history.get_by_role("button", name="Forget history").click()
    dialog = page.locator("dialog")
    expect(dialog.get_by_role("button", name="Forget history")).to_be_disabled()
    dialog.locator("input").fill("notes.md")
    dialog.get_by_role("button", name="Forget history").click()
    expect(history.locator("li.wiki-version", has_text="bytes forgotten")).to_have_count(1)
    versions = hub.rest("GET", f"/projects/{project}/kb/versions?path=fs/notes.md")["versions"]
    assert [v["kept"] for v in versions] == [True, False, True]  # the held bytes (one and three) stay


def test_markup_in_a_page_title_and_body_is_text_and_no_script_runs(app_page: Any, hub: Hub) -> None:
    project = hub.new_project("wiki-xss")
    title = '"<b>bold</b><img src=x onerror=window.__pwned=3>"'
    put(hub, project, "evil.md", page_text(title, f"{XSS}\n\n[click](javascript:window.__pwned=4)\n"))
    page = app_page
    article = open_page(page, project, "evil.md")
    expect(article.locator("h2.wiki-title")).to_have_text("<b>bold</b><img src=x onerror=window.__pwned=3>")
    expect(article.locator(".rich")).to_contain_text("<script>window.__pwned = 2</script>")
    assert article.locator(".rich img, .rich script, .rich b, .wiki-title b").count() == 0
    assert article.locator(".rich a[href^='javascript']").count() == 0
    # The phone shows a breadcrumb to the page.
    expect(page.locator(".wiki-crumbs [aria-current=page]")).to_have_text("evil.md")
    page.evaluate("location.hash = location.hash")  # a round trip through the router
    assert page.evaluate("window.__pwned") is None


def test_lint_findings_and_the_needs_review_queue_link_to_their_pages(app_page: Any, hub: Hub) -> None:
    project = hub.new_project("wiki-lint")
    put(hub, project, "lonely.md", "# No frontmatter\n\n[gone](missing.md)\n")
    put(hub, project, "fine.md", page_text("Fine page", "ok\n"))
    hub.rest("POST", f"/projects/{project}/kb/pages/fs/fine.md/review", {})
    page = app_page
    page.evaluate("h => { location.hash = h }", f"#/projects/{project}/wiki?view=lint")
    lint = page.locator("section.wiki-lint")
    expect(lint.locator("li.wiki-finding", has_text="missing_frontmatter")).to_have_count(1)
    page.evaluate("h => { location.hash = h }", f"#/projects/{project}/wiki?view=review")
    queue = page.locator("section.wiki-review")
    expect(queue.locator("li")).to_have_count(1)
    expect(queue.locator("li")).to_contain_text("lonely.md")
    expect(page.locator(".subtabs a", has_text="Needs review")).to_have_text("Needs review (1)")
    queue.locator("li a").first.click()
    expect(page.locator("article.wiki-page .wiki-path")).to_have_text("/fs/lonely.md")


def test_rich_copies_hub_html_through_its_allow_list(app_page: Any) -> None:
    """rich.js is the second wall behind the hub's renderer: fed hostile HTML directly, it keeps no
    script, handler, frame, style, other origin's image or unsafe link, and nothing runs."""
    hostile = (
        '<h1 onclick="window.__pwned=1">T</h1><script>window.__pwned=2</script>'
        '<img src=x onerror="window.__pwned=3"><img src="https://elsewhere.example/t.png" alt="pixel">'
        '<a href="javascript:window.__pwned=4">j</a><a href="data:text/html,x">d</a>'
        '<a href="https://e.org/" onmouseover="x" target="_self">out</a><a href="other.md">in</a>'
        '<a href="#fn1">f</a><p id="fn1" style="color:red">foot</p><svg><script>window.__pwned=5</script></svg>'
        '<iframe src="/"></iframe><form><button>b</button></form><input type=text value=v>'
        '<input type=checkbox checked><custom-el>kept text</custom-el><td style="text-align:right">x</td>'
    )
    got = app_page.evaluate(
        """async (html) => {
      const { richContent } = await import('/app/js/rich.js');
      const el = richContent(html, { resolve: (h) => h === 'other.md' ? '#/x' : null });
      document.querySelector('main').appendChild(el);
      el.querySelector('a[data-to]').click();
      await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
      const links = [...el.querySelectorAll('a')].map((a) => [a.textContent, a.getAttribute('href'),
        a.getAttribute('rel'), a.getAttribute('target')]);
      const attrs = [...el.querySelectorAll('*')].flatMap((n) => [...n.attributes].map((a) => a.name));
      const imgs = [...el.querySelectorAll('img')].map((i) => new URL(i.src).origin === location.origin);
      return { imgs, tags: [...new Set([...el.querySelectorAll('*')].map((n) => n.localName))].sort(), links, attrs,
               text: el.textContent, pwned: window.__pwned ?? null, focused: document.activeElement.textContent };
    }""",
        hostile,
    )
    assert got["pwned"] is None
    assert set(got["tags"]) <= {"h2", "a", "span", "p", "input", "img"}, got["tags"]
    assert got["imgs"] == [True]  # the hub's own image only (src=x), without its onerror
    assert not {"onclick", "onerror", "onmouseover", "style", "id"} & set(got["attrs"])
    assert ["out", "https://e.org/", "noopener noreferrer nofollow", "_blank"] in got["links"]
    assert ["in", "#/x", None, None] in got["links"]
    assert ["Image: pixel", "https://elsewhere.example/t.png", "noopener noreferrer nofollow", "_blank"] in got["links"]
    assert not any(href and href.startswith(("javascript:", "data:")) for _, href, _, _ in got["links"])
    assert "kept text" in got["text"] and "window.__pwned" not in got["text"]
    assert got["focused"] == "foot"  # the footnote link scrolled to its mark inside the block
