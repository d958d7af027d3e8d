"""Search (issue 18 part 3): as you type over feed events, artifacts, brains and knowledge pages;
scope chips and the project pill; the semantic toggle saying when the hub answered lexically; hits
grouped by family with the query's words marked through text nodes; count and took_ms in a polite
status; each hit opening where it lives; the `/` key; stale answers never drawn over newer ones."""

from __future__ import annotations

import contextlib
import json
import re
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import expect

from tests.webapp.conftest import Hub
from tests.webapp.seed import XSS, go, no_script_ran, session
from tests.webapp.test_a11y import audit

pytestmark = pytest.mark.browser

Seeded = dict[str, str]


def seed_families(hub: Hub, word: str, prefix: str = "find") -> Seeded:
    """One hit of each family holding `word`, in a project of its own: an event, an artifact, a
    brain entry and a knowledge base page (the agents' side over MCP, the page as the admin)."""
    agent = hub.new_agent("searcher")
    project = hub.new_project(prefix)
    event = hub.mcp(agent, "signal_append", {"project_id": project, "summary": f"Shipped the {word} fix"})["event_id"]
    artifact = hub.mcp(
        agent,
        "artifact_publish",
        {"project_id": project, "kind": "markdown", "title": f"Report on {word}", "content": f"# {word}\n\nAll good."},
    )
    sid = session(hub, agent, project, "digger", {"/fs/notes/dig.md": f"Notes about {word} and more"})
    hub.rest(
        "PUT",
        f"/projects/{project}/kb/pages/fs/guides/{word}.md",
        {"content": f"---\ntype: Guide\n---\n# Using {word}\n\nHow to.\n"},
    )
    return {
        "project": project,
        "event": str(event),
        "artifact": str(artifact["artifact_id"]),
        "session": sid,
        "kb": f"/fs/guides/{word}.md",
        "brain": "/fs/notes/dig.md",
    }


def results_for(page: Any, q: str) -> Any:
    """The results container once it has drawn the answer to `q`."""
    results = page.locator(".search-results")
    expect(results).to_have_attribute("data-query", q, timeout=15_000)
    return results


def hash_of(page: Any) -> str:
    return str(page.evaluate("location.hash"))


def test_search_as_you_type_and_open_a_hit_of_each_family(app_page: Any, hub: Hub) -> None:
    seeded = seed_families(hub, "quillwort")
    go(app_page, "#/search", "Search")
    field = app_page.get_by_role("searchbox")
    expect(field).to_be_focused()  # a fresh search starts typing
    field.press_sequentially("quillw")  # a prefix finds the whole word
    results = results_for(app_page, "quillw")
    for family in ("artifact", "brain", "kb"):
        expect(results.locator(f'.hit-group[data-type="{family}"] .hit')).to_have_count(1)
    # The feed holds the signal, and the events of the artifact's publication and the page's write.
    expect(results.locator('.hit-group[data-type="feed"] .hit', has_text="Shipped the quillwort fix")).to_have_count(1)
    expect(results.locator(".hit-group h2")).to_have_count(4)
    hits = results.locator(".hit").count()
    expect(app_page.locator(".search-status")).to_have_text(re.compile(rf"^{hits} results, in [0-9.]+ ms$"))
    expect(app_page.locator(".search-status")).to_have_attribute("aria-live", "polite")
    expect(app_page.locator(".search-status")).to_have_attribute("role", "status")
    assert parse_qs(urlsplit(hash_of(app_page)[1:]).query)["q"] == ["quillw"]  # the address keeps the search
    marks = results.locator(".hit-snippet mark")
    expect(marks.first).to_have_text("quillwort")

    project = seeded["project"]
    opened = {
        "feed": f"#/projects/{project}?tab=feed&event={seeded['event']}",  # at the event (test_search_lands.py)
        "artifact": f"#/artifacts/{seeded['artifact']}",
        "brain": f"#/sessions/{seeded['session']}?path=%2Ffs%2Fnotes%2Fdig.md",
        "kb": f"#/projects/{project}/wiki?path=%2Ffs%2Fguides%2Fquillwort.md",
    }
    for family, address in opened.items():
        hit = results.locator(f'.hit-group[data-type="{family}"] a.hit-link').first
        if family == "feed":
            hit = results.locator(".hit-link", has_text="Shipped the quillwort fix")
        expect(hit).to_have_attribute("href", address)
        hit.click()
        app_page.wait_for_function("h => location.hash === h", arg=address)
        if family == "feed":  # the project's feed, the event in it
            expect(app_page.locator("h1")).to_have_text(project)
            expect(app_page.locator(".feed-item .summary", has_text="Shipped the quillwort fix")).to_be_visible()
        if family == "brain":  # the session, its entry opened
            expect(app_page.locator(".entry-viewer .entry-path")).to_have_text(seeded["brain"])
            expect(app_page.locator(".entry-viewer .entry-content")).to_have_text("Notes about quillwort and more")
        app_page.go_back()  # back to the same search, drawn again
        results = results_for(app_page, "quillw")
        expect(app_page.get_by_role("searchbox")).to_have_value("quillw")


def test_a_snippet_holding_markup_is_shown_as_text_with_marks_of_text(app_page: Any, hub: Hub) -> None:
    agent = hub.new_agent("searcher")
    project = hub.new_project("markup")
    hub.mcp(agent, "signal_append", {"project_id": project, "summary": f"gnarlwick {XSS} gnarlwick-two"})
    go(app_page, f"#/search?q=gnarlwick&scope=project&project={project}", "Search")
    results = results_for(app_page, "gnarlwick")
    snippet = results.locator(".hit-snippet")
    expect(snippet).to_have_text(f"gnarlwick {XSS} gnarlwick-two")
    expect(snippet.locator("mark")).to_have_count(2)
    # Each mark holds one text node, and the snippet holds only text nodes and marks.
    shape = app_page.evaluate("""() => [...document.querySelectorAll('.hit-snippet')].map(s =>
        [...s.childNodes].map(n => n.nodeType === 3 ? 'text'
          : n.nodeName + ':' + [...n.childNodes].map(c => c.nodeType).join(',')))""")
    assert shape == [["MARK:3", "text", "MARK:3", "text"]]
    no_script_ran(app_page)


def test_scope_chips_and_the_project_pill_narrow_the_search(app_page: Any, hub: Hub) -> None:
    one = seed_families(hub, "brambleton", "scope")
    other = hub.new_project("scope-other")
    agent = hub.new_agent("searcher")
    hub.mcp(agent, "signal_append", {"project_id": other, "summary": "brambleton elsewhere"})
    asked: list[dict[str, list[str]]] = []
    app_page.on(
        "request", lambda r: asked.append(parse_qs(urlsplit(r.url).query)) if "/api/v1/search?" in r.url else None
    )
    go(app_page, "#/search?q=brambleton", "Search")
    results = results_for(app_page, "brambleton")
    expect(results.locator('.hit-group[data-type="feed"] .hit', has_text="brambleton elsewhere")).to_have_count(1)
    expect(results.locator(".hit-group")).to_have_count(4)
    everything = results.locator(".hit").count()

    pages = app_page.locator(".search-scope").get_by_role("button", name="Pages")
    pages.click()
    expect(pages).to_have_attribute("aria-pressed", "true")
    expect(results.locator(".hit-group")).to_have_count(1)
    expect(results.locator('.hit-group[data-type="kb"] .hit')).to_have_count(1)
    assert asked[-1]["type"] == ["kb"]

    app_page.locator(".search-scope").get_by_role("button", name="Everything").click()
    expect(results.locator(".hit-group")).to_have_count(4)
    app_page.get_by_label("Project").select_option(other)
    expect(results.locator(".hit")).to_have_count(1)
    expect(results.locator(".hit-meta")).to_contain_text(other)
    assert asked[-1]["scope"] == ["project"] and asked[-1]["project"] == [other] and "type" not in asked[-1]
    assert f"project={other}" in hash_of(app_page)
    app_page.get_by_label("Project").select_option("")
    expect(results.locator(".hit")).to_have_count(everything)
    app_page.get_by_label("Project").select_option(one["project"])
    expect(results.locator(".hit")).to_have_count(everything - 1)


def test_the_semantic_toggle_says_when_the_hub_answered_lexically(app_page: Any, hub: Hub) -> None:
    hub.mcp(
        hub.new_agent("searcher"),
        "signal_append",
        {"project_id": hub.new_project("meaning"), "summary": "wobblecrank tuned"},
    )
    go(app_page, "#/search?q=wobblecrank", "Search")
    results_for(app_page, "wobblecrank")
    note = app_page.locator(".backend-note")
    expect(note).to_be_hidden()  # lexical: nothing to say
    semantic = app_page.get_by_label("By meaning (semantic)")
    with app_page.expect_response(lambda r: "mode=semantic" in r.url) as answered:
        semantic.check()
    backend = answered.value.json()["backend"]
    if answered.value.json().get("semantic") == "warming":  # the hub's model is still warming up
        expect(note).to_contain_text("warming up")
    else:
        expect(note).to_have_attribute("data-backend", backend)
        expect(note).to_contain_text(
            {"hybrid": "blended with matches by meaning", "fts-fallback": "word matches (fts-fallback)"}[backend]
        )
    expect(app_page.locator(".hit", has_text="wobblecrank tuned")).to_have_count(1)
    assert "mode=semantic" in hash_of(app_page)
    semantic.uncheck()
    expect(note).to_be_hidden()

    # A hub without the embedding model answers fts-fallback (this one may hold it, so its own
    # answer is rewritten to what such a hub says).
    def fallback(route: Any) -> None:
        response = route.fetch()
        body = response.json()
        body["backend"] = "fts-fallback"
        body["semantic"] = "unavailable"
        route.fulfill(response=response, body=json.dumps(body))

    app_page.route("**/api/v1/search?*mode=semantic*", fallback)
    semantic.check()
    expect(note).to_be_visible()
    expect(note).to_have_text("Meaning search is not available on this hub: these are word matches (fts-fallback).")
    expect(app_page.locator(".hit", has_text="wobblecrank tuned")).to_have_count(1)


STALE = {
    "query": "stalemate",
    "count": 1,
    "truncated": False,
    "took_ms": 1,
    "backend": "fts",
    "groups": [
        {
            "type": "feed",
            "count": 1,
            "hits": [
                {
                    "type": "feed",
                    "project_id": "x",
                    "project_display_name": "x",
                    "snippet": "STALE ANSWER",
                    "event_id": "e",
                    "event_kind": "signal",
                    "actor": "a",
                    "session_id": None,
                }
            ],
        }
    ],
}


def held_search(page: Any, hub: Hub, *, abort: bool) -> tuple[Any, Any]:
    """The search screen with the query "stalemate" held at the network, then "freshwater" typed
    and drawn; (the held route, the results). With `abort` False the page's AbortController does
    nothing, so only the screen's own check can keep the late answer out."""
    project = hub.new_project("stale")
    hub.mcp(hub.new_agent("searcher"), "signal_append", {"project_id": project, "summary": "stalemate and freshwater"})
    if not abort:
        page.add_init_script("AbortController.prototype.abort = function () {};")
        page.reload()
    go(page, f"#/search?scope=project&project={project}", "Search")
    held: list[Any] = []

    def hold_stale(route: Any) -> None:
        if parse_qs(urlsplit(route.request.url).query)["q"] == ["stalemate"]:
            held.append(route)  # answered later, after the newer query's answer is drawn
        else:
            route.continue_()

    page.route("**/api/v1/search?*", hold_stale)
    field = page.get_by_role("searchbox")
    with page.expect_request(lambda r: "q=stalemate" in r.url):
        field.fill("stalemate")
    if abort:  # the newer query's request aborts the one in flight
        with page.expect_event("requestfailed", lambda r: "q=stalemate" in r.url):
            field.fill("freshwater")
    else:
        field.fill("freshwater")
    results = results_for(page, "freshwater")
    expect(results.locator(".hit")).to_have_count(1)
    assert len(held) == 1
    return held[0], results


def test_a_newer_query_aborts_the_one_in_flight(app_page: Any, hub: Hub) -> None:
    route, results = held_search(app_page, hub, abort=True)
    with contextlib.suppress(Exception):  # the browser dropped it already: nothing left to answer
        route.fulfill(status=200, content_type="application/json", body=json.dumps(STALE))
    expect(results).to_have_attribute("data-query", "freshwater")
    expect(results.locator(".hit-snippet", has_text="STALE ANSWER")).to_have_count(0)


def test_a_late_answer_to_an_older_query_is_never_drawn(app_page: Any, hub: Hub) -> None:
    route, results = held_search(app_page, hub, abort=False)
    with app_page.expect_event("requestfinished", lambda r: "q=stalemate" in r.url):
        route.fulfill(status=200, content_type="application/json", body=json.dumps(STALE))
    # The answer was delivered to the page: give its reading a few tasks, then it must not show.
    app_page.evaluate("() => new Promise(r => setTimeout(r, 150))")
    expect(results).to_have_attribute("data-query", "freshwater")
    expect(results.locator(".hit-snippet", has_text="STALE ANSWER")).to_have_count(0)
    expect(results.locator(".hit-snippet", has_text="stalemate and freshwater")).to_have_count(1)


def test_typing_fast_sends_one_request(app_page: Any, hub: Hub) -> None:
    go(app_page, "#/search", "Search")
    asked: list[str] = []
    app_page.on("request", lambda r: asked.append(r.url) if "/api/v1/search?" in r.url else None)
    # Nine keystrokes inside one task: the debounce sends only what the field says at the end.
    app_page.evaluate("""() => { const f = document.getElementById('search-q');
        for (const c of 'debounced') { f.value += c; f.dispatchEvent(new Event('input')); } }""")
    results_for(app_page, "debounced")
    assert [parse_qs(urlsplit(u).query)["q"] for u in asked] == [["debounced"]]


def test_punctuation_alone_asks_nothing_and_a_refusal_is_shown(app_page: Any) -> None:
    go(app_page, "#/search", "Search")
    asked: list[str] = []
    app_page.on("request", lambda r: asked.append(r.url) if "/api/v1/search?" in r.url else None)
    app_page.get_by_role("searchbox").fill('"" -- ??')
    expect(app_page.locator(".search-results .empty")).to_contain_text("punctuation alone")
    # 7,400 characters, 9,600 bytes of UTF-8: over the hub's limit in bytes (read from GET /limits),
    # so the app says so and asks nothing.
    app_page.get_by_role("searchbox").fill("x" * 3000 + " é" * 2200)
    expect(app_page.locator(".search-results .empty")).to_contain_text("limit of 8,192 bytes")
    assert asked == []


def test_the_slash_key_opens_search_from_anywhere_but_not_while_typing(app_page: Any) -> None:
    expect(app_page.locator("h1")).to_have_text("Home")
    app_page.keyboard.press("/")
    expect(app_page.locator("h1")).to_have_text("Search")
    field = app_page.get_by_role("searchbox")
    expect(field).to_be_focused()
    field.type("a/b")  # typed into the field, not taken as the shortcut
    expect(field).to_have_value("a/b")
    app_page.locator("h1").focus()
    app_page.keyboard.press("/")  # on the search screen it goes back to the field
    expect(field).to_be_focused()


def test_search_is_on_the_tab_bar_and_the_rail(opener: Any) -> None:
    from tests.webapp.conftest import DESKTOP, PHONE

    for viewport in (PHONE, DESKTOP):
        page = opener(viewport)
        tab = page.locator("a.tab", has_text="Search")
        expect(tab).to_be_visible()
        tab.click()
        expect(page.locator("h1")).to_have_text("Search")
        expect(page.locator("a.tab[aria-current=page] .tab-label")).to_have_text("Search")


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_search_has_no_serious_violation(opener: Any, hub: Hub, theme: str) -> None:
    seed_families(hub, f"auditword{theme}", f"a11y-search-{theme}")
    page = opener(color_scheme=theme, hash_=f"#/search?q=auditword{theme}&mode=semantic")
    results_for(page, f"auditword{theme}")
    expect(page.locator(".hit-group")).to_have_count(4)
    assert audit(page) == []
