"""What an agent wrote is text, never HTML: no innerHTML (or its kin) anywhere in the app's code,
no native alert/confirm/prompt, and a hostile summary, body, option and project name shown as the
characters they are, with no script run."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.webapp.conftest import Hub

pytestmark = pytest.mark.browser

PWA = Path(__file__).resolve().parents[2] / "pwa"
HTML_SINKS = re.compile(
    r"\b(innerHTML|outerHTML|insertAdjacentHTML|document\.write|createContextualFragment|"
    r"srcdoc|DOMParser|setHTMLUnsafe|parseHTMLUnsafe)\b"
)
NATIVE_DIALOGS = re.compile(r"(?<![\w.])(window\.)?(alert|confirm|prompt)\s*\(")
EVAL = re.compile(r"\beval\s*\(|\bnew\s+Function\s*\(|setTimeout\s*\(\s*[\"'`]")
INERT_PARSE = re.compile(
    r"js/rich\.js:\d+: const inert = new DOMParser\(\)"
    r'\.parseFromString\(String\(html \?\? ""\), "text/html"\);'
)
XSS = '<img src=x onerror="window.__pwned = 1"><script>window.__pwned = 2</script>'


def app_sources() -> list[Path]:
    files = sorted(p for p in PWA.rglob("*.js") if "vendor" not in p.parts)
    assert len(files) >= 10  # the app's modules, not an empty match
    return files


def test_no_html_sink_in_the_app_code() -> None:
    found = [
        f"{p.relative_to(PWA)}:{n}: {line.strip()}"
        for p in app_sources()
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if HTML_SINKS.search(line) and not line.lstrip().startswith("//")
    ]
    # The one parse of hub-rendered HTML: rich.js's inert DOMParser document, copied through an allow-list.
    assert [f for f in found if not INERT_PARSE.fullmatch(f)] == []


def test_no_native_dialog_and_no_eval_in_the_app_code() -> None:
    found = [
        f"{p.relative_to(PWA)}:{n}: {line.strip()}"
        for p in app_sources()
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if (NATIVE_DIALOGS.search(line) or EVAL.search(line)) and not line.lstrip().startswith("//")
    ]
    assert found == []


def test_the_grep_would_catch_a_sink() -> None:
    assert HTML_SINKS.search("node.innerHTML = summary")
    assert HTML_SINKS.search("el.insertAdjacentHTML('beforeend', x)")
    assert NATIVE_DIALOGS.search("if (confirm('sure?'))") and NATIVE_DIALOGS.search("window.alert(x)")
    assert not NATIVE_DIALOGS.search("app.confirmTyped({})") and not NATIVE_DIALOGS.search("app.dialog.prompt")


def test_an_agent_written_summary_is_shown_as_text_with_no_script_run(app_page: Any, hub: Hub) -> None:
    agent = hub.new_agent("mallory")
    project = "xss-" + hub.new_project("p").split("-")[1]
    hub.rest("POST", "/projects", {"id": project, "display_name": XSS}, expect=201)
    qid = hub.question(agent, project, XSS, body=XSS, options=["<b>bold</b>", '"><svg onload=alert(1)>'])
    aid = hub.approval(agent, project, XSS)
    hub.mcp(agent, "signal_append", {"project_id": project, "summary": XSS})
    for hash_ in (f"#/inbox?project={project}", "#/"):
        app_page.evaluate("h => { location.hash = h; }", hash_)
        item = app_page.locator(f'li.row[data-event-id="{qid}"]')
        expect(item.locator(".row-title")).to_have_text(XSS)
        if hash_ != "#/":
            expect(item.locator(".row-body")).to_have_text(XSS)
            expect(item.get_by_role("button", name="<b>bold</b>")).to_be_visible()
            expect(item.get_by_role("button", name='"><svg onload=alert(1)>')).to_be_visible()
        expect(item.locator("a").first).to_have_text(XSS)  # the project's display name
        expect(app_page.locator(f'li.row[data-event-id="{aid}"] .row-title')).to_have_text(XSS)
        assert app_page.locator("main img, main script:not([src]), main svg, main b").count() == 0
    expect(app_page.locator(".panel", has_text="Recent events").locator(".row-title").first).to_have_text(XSS)
    assert app_page.evaluate("window.__pwned") is None
    assert app_page.page_errors == []  # no native dialog opened either (the fixture fails on one)


DISGUISED = "invoice\u202egnp.exe"  # U+202E would show it as "invoiceexe.png"
SHOWN = "invoice\u27e8U+202E\u27e9gnp.exe"


def test_bidi_controls_an_agent_wrote_are_shown_not_applied(app_page: Any, hub: Hub) -> None:
    """On the inbox, Home, the feed, the artifact gallery and viewer, a wiki page and the public
    artifact page, a title with U+202E shows a visible mark where the override would be, and the
    document holds no bidi control at all."""
    agent = hub.new_agent("mallory")
    project = hub.new_project("bidi")
    qid = hub.question(agent, project, DISGUISED, body=f"body {DISGUISED}")
    done = hub.mcp(
        agent,
        "artifact_publish",
        {"project_id": project, "title": DISGUISED, "kind": "html", "content": "<p>x</p>", "label": "v\u2067x"},
    )
    hub.rest("PUT", f"/projects/{project}/kb/pages/fs/page.md", {"content": f"# Page\n\nsee {DISGUISED}\n"})
    checks = {
        f"#/inbox?project={project}": f'li.row[data-event-id="{qid}"] .row-title',
        "#/": f'li.row[data-event-id="{qid}"] .row-title',
        f"#/projects/{project}/artifacts": ".art-title",
        f"#/artifacts/{done['artifact_id']}": "h1",
        f"#/projects/{project}/wiki?path=/fs/page.md": "main .rich p",
    }
    for hash_, selector in checks.items():
        app_page.evaluate("h => { location.hash = h; }", hash_)
        expect(app_page.locator(selector).first).to_contain_text(SHOWN)
        assert (
            app_page.evaluate(r"/[\u202a-\u202e\u2066-\u2069]/.test(document.body.innerText + document.title)") is False
        ), hash_
    public = app_page.context.new_page()
    public.goto(f"{hub.url}/artifacts/{done['artifact_id']}")
    expect(public.locator("#title")).to_have_text(SHOWN)
    assert SHOWN in public.title() and "\u202e" not in public.content()
    expect(public.locator("#version-line")).to_contain_text("v\u27e8U+2067\u27e9x")
