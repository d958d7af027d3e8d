"""The shell: served by the hub at / (content types, CSP, caching, no listing, no path escape, the
digest that names the worker's cache), installable (manifest, icons, service worker), offline, the
tab bar and rail, focus, the keyboard map."""

from __future__ import annotations

import gzip
import json
import re
import socket
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import expect

from hubhttp.webapp import CSP, load_shell
from tests.webapp.conftest import DESKTOP, PHONE, Hub

pytestmark = pytest.mark.browser

PWA = Path(__file__).resolve().parents[2] / "pwa"


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("/", "text/html; charset=utf-8"),
        ("/sw.js", "text/javascript; charset=utf-8"),
        ("/manifest.webmanifest", "application/manifest+json"),
        ("/app/app.css", "text/css; charset=utf-8"),
        ("/app/js/app.js", "text/javascript; charset=utf-8"),
        ("/app/icons/icon-192.png", "image/png"),
        ("/app/icons/icon.svg", "image/svg+xml"),
        ("/app/shell.json", "application/json"),
    ],
)
def test_the_shell_files_are_public_with_their_types_and_the_csp(hub: Hub, path: str, kind: str) -> None:
    r = httpx.get(hub.url + path)  # no token: the app must load before Connect
    assert r.status_code == 200
    assert r.headers["content-type"] == kind
    assert r.headers["content-security-policy"] == CSP
    assert "default-src 'self'" in CSP and "unsafe-inline" not in CSP and "frame-ancestors 'none'" in CSP
    assert r.headers["x-content-type-options"] == "nosniff"
    assert r.headers["cache-control"] == "no-cache"
    etag = r.headers["etag"]
    again = httpx.get(hub.url + path, headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b""


def test_text_files_go_gzipped_when_accepted_and_plain_otherwise(hub: Hub) -> None:
    plain = httpx.get(hub.url + "/app/js/app.js", headers={"Accept-Encoding": "identity"})
    assert "content-encoding" not in plain.headers
    assert plain.content == (PWA / "js" / "app.js").read_bytes()
    with httpx.Client() as client:
        raw = client.get(hub.url + "/app/js/app.js", headers={"Accept-Encoding": "gzip"})
        assert raw.headers["content-encoding"] == "gzip" and raw.headers["vary"] == "Accept-Encoding"
        assert raw.content == plain.content  # httpx decodes it
    png = httpx.get(hub.url + "/app/icons/icon-192.png", headers={"Accept-Encoding": "gzip"})
    assert "content-encoding" not in png.headers and png.content.startswith(b"\x89PNG")


def raw_get(hub: Hub, target: str) -> tuple[int, bytes]:
    """A request line sent exactly as written (no client normalising the path)."""
    host, port = hub.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(f"GET {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode("latin-1"))
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), body


@pytest.mark.parametrize(
    "target",
    [
        "/app/../pyproject.toml",
        "/app/js/../../pyproject.toml",
        "/app/%2e%2e/pyproject.toml",
        "/app/%2E%2E%2Fpyproject.toml",
        "/app/..%2Fhubhttp%2Fwebapp.py",
        "/app/js%2F..%2F..%2Fpyproject.toml",
        "/app/..\\pyproject.toml",
        "/app/%5c..%5cpyproject.toml",
        "/app/js/app.js%00.png",
        "/app/js/",
        "/app/",
        "/app/js",
        "/app/icons/",
        "/app//etc/passwd",
        "/app/%2Fetc%2Fpasswd",
        "/app/.keep",
        "/app/index.html",
        "/app/js/app.js/",
        "/app/JS/APP.JS",
        "/index.html",
        "/app/sw.js",
        "/app/%E2%80%AE.js",
        "/app/%ff%fe",
    ],
)
def test_odd_paths_never_reach_a_file_outside_the_shell(hub: Hub, target: str) -> None:
    status, body = raw_get(hub, target)
    assert status in (400, 401, 404), (target, status)
    assert b"[project]" not in body and b"import" not in body and b"root:" not in body


def test_no_directory_listing_and_other_methods_refused(hub: Hub) -> None:
    assert httpx.get(hub.url + "/app/js/").status_code == 404
    r = httpx.post(hub.url + "/", json={})
    assert r.status_code in (401, 405)  # the gate does not tell a stranger which methods exist
    assert httpx.head(hub.url + "/").status_code == 200


def test_the_worker_is_named_for_the_shell_digest_and_lists_the_shell(hub: Hub, tmp_path: Path) -> None:
    sw = httpx.get(hub.url + "/sw.js").text
    info = httpx.get(hub.url + "/app/shell.json").json()
    assert re.fullmatch(r"[0-9a-f]{16}", info["digest"])
    assert f'const DIGEST = "{info["digest"]}";' in sw
    files = json.loads(sw.split("const FILES = ", 1)[1].split(";\n", 1)[0])
    assert "/" in files and "/app/js/app.js" in files and "/app/app.css" in files
    assert not [f for f in files if f.startswith("/api/")] and files == info["files"]
    assert info["version"] and info["commit"]
    # A changed file is a new digest (an upgrade swaps the cache); the same files, the same one.
    copy = tmp_path / "pwa"
    for f in PWA.rglob("*"):
        if f.is_file():
            (copy / f.relative_to(PWA)).parent.mkdir(parents=True, exist_ok=True)
            (copy / f.relative_to(PWA)).write_bytes(f.read_bytes())
    same = load_shell(copy).digest
    (copy / "app.css").write_bytes((copy / "app.css").read_bytes() + b"\n/* next release */\n")
    assert load_shell(copy).digest != same
    (copy / "evil.js").symlink_to("/etc/passwd")  # a link is never served
    assert "/app/evil.js" not in load_shell(copy).files


def test_the_first_start_address_answers_with_the_app(hub: Hub) -> None:
    r = httpx.get(hub.url + "/")
    assert r.status_code == 200 and b'<script type="module" src="/app/js/app.js">' in r.content
    assert b"<script>" not in r.content  # no inline script: the CSP would refuse it


def test_installable_manifest_icons_and_a_registered_worker(opener: Any, hub: Hub) -> None:
    manifest = httpx.get(hub.url + "/manifest.webmanifest").json()
    assert manifest["display"] == "standalone" and manifest["start_url"].startswith("/")
    sizes = {i["sizes"] for i in manifest["icons"] if i["type"] == "image/png"}
    assert {"192x192", "512x512"} <= sizes
    for icon in manifest["icons"]:
        r = httpx.get(hub.url + icon["src"])
        assert r.status_code == 200 and r.headers["content-type"] == icon["type"]
        if icon["type"] == "image/png":
            width, height = int.from_bytes(r.content[16:20], "big"), int.from_bytes(r.content[20:24], "big")
            assert f"{width}x{height}" == icon["sizes"]
    page = opener(service_workers="allow")
    assert page.evaluate("document.querySelector('link[rel=manifest]').href").endswith("/manifest.webmanifest")
    scope = page.evaluate("navigator.serviceWorker.ready.then(r => r.scope)")
    assert scope == hub.url + "/"
    digest = httpx.get(hub.url + "/app/shell.json").json()["digest"]
    names = page.evaluate("caches.keys()")
    assert names == [f"agent-hub-shell-{digest}"]
    cached = page.evaluate(
        f"caches.open('agent-hub-shell-{digest}').then(c => c.keys()).then(k => k.map(r => new URL(r.url).pathname))"
    )
    assert "/" in cached and "/app/js/app.js" in cached and not any(p.startswith("/api") for p in cached)


def test_the_shell_starts_offline_from_the_worker_with_the_banner(opener: Any, hub: Hub) -> None:
    page = opener(service_workers="allow")
    page.evaluate("navigator.serviceWorker.ready")
    # Claimed on activation. (wait_for_function polls with eval, which the app's CSP refuses.)
    page.evaluate("""new Promise(claimed => navigator.serviceWorker.controller ? claimed(true)
        : navigator.serviceWorker.addEventListener('controllerchange', () => claimed(true)))""")
    page.context.set_offline(True)
    page.reload()
    expect(page.locator("h1")).to_have_text("Home")
    expect(page.locator(".offline-banner")).to_be_visible()
    expect(page.locator(".offline-banner")).to_contain_text("offline")
    # /api is never served from the cache: Home says it cannot reach the hub.
    expect(page.locator(".panel.error")).to_contain_text("cannot be reached")
    page.context.set_offline(False)


def test_the_tab_bar_on_a_phone_and_the_rail_on_a_desk(opener: Any, hub: Hub) -> None:
    phone = opener(PHONE)
    nav = phone.locator("nav.tabs")
    box = nav.bounding_box()
    assert box["y"] + box["height"] == pytest.approx(PHONE["height"], abs=2) and box["width"] == PHONE["width"]
    tabs = phone.locator(".tabs .tab:visible")  # four tabs and More (test_shell_narrow.py)
    expect(tabs).to_have_count(5)
    for tab in tabs.all():
        size = tab.bounding_box()
        assert size["height"] >= 44 and size["width"] >= 44
    desk = opener(DESKTOP)
    rail = desk.locator("nav.tabs").bounding_box()
    assert rail["x"] == 0 and rail["height"] == pytest.approx(DESKTOP["height"], abs=2) and rail["width"] < 120
    labels = desk.locator("a.tab .tab-label").all_text_contents()
    assert labels == ["Home", "Inbox", "Projects", "Search", "Storage", "Access", "Settings"]


def test_each_screen_moves_focus_to_its_heading_and_marks_its_tab(app_page: Any) -> None:
    for label, title in (("Inbox", "Inbox"), ("Settings", "Settings"), ("Home", "Home")):
        if label == "Settings":  # behind More on a phone
            app_page.locator("nav.tabs button.more-tab").click()
            app_page.locator("a.more-link", has_text=label).click()
        else:
            app_page.locator("a.tab", has_text=label).click()
        expect(app_page.locator("h1")).to_have_text(title)
        expect(app_page.locator("h1")).to_be_focused()
        expect(app_page.locator("a.tab[aria-current=page] .tab-label")).to_have_text(label)
        assert app_page.title() == f"{title} · Agent Hub"


def test_the_keyboard_map_and_no_shortcut_while_typing(app_page: Any, hub: Hub) -> None:
    app_page.keyboard.press("?")
    dialog = app_page.locator("dialog[open]")
    expect(dialog.locator("h2")).to_have_text("Keyboard shortcuts")
    keys = dialog.locator("kbd").all_text_contents()
    assert keys == ["j", "k", "Enter", "a", "r", "/", "Esc", "?"]
    app_page.keyboard.press("Escape")
    expect(dialog).to_have_count(0)
    agent = hub.new_agent("typist")
    project = hub.new_project("keys")
    qid = hub.question(agent, project, "Typed into?")
    app_page.evaluate(f"location.hash = '#/inbox?project={project}'")
    expect(app_page.locator("h1")).to_have_text("Inbox")
    app_page.locator(f'li.row[data-event-id="{qid}"] summary', has_text="Answer").click()  # a phone's compact row
    answer = app_page.locator(f'li.row[data-event-id="{qid}"] textarea.answer')
    answer.click()
    answer.type("jk?a")  # typed as text, not taken as shortcuts
    expect(answer).to_have_value("jk?a")
    expect(app_page.locator("dialog[open]")).to_have_count(0)
    expect(app_page.locator("li.row[aria-selected=true]")).to_have_count(0)


def test_shortcuts_off_in_settings_stop_the_single_keys(app_page: Any, hub: Hub) -> None:
    agent = hub.new_agent("typist")
    project = hub.new_project("keys")
    hub.question(agent, project, "Select me?")
    app_page.evaluate("location.hash = '#/settings'")
    app_page.locator("#set-shortcuts").uncheck()
    app_page.evaluate(f"location.hash = '#/inbox?project={project}'")
    expect(app_page.locator("li.row")).to_have_count(1)
    app_page.locator("h1").focus()
    app_page.keyboard.press("j")
    expect(app_page.locator("li.row[aria-selected=true]")).to_have_count(0)
    assert app_page.evaluate("JSON.parse(localStorage.getItem('agent-hub.settings')).shortcuts") is False


def test_an_unknown_screen_says_so(app_page: Any) -> None:
    app_page.evaluate("location.hash = '#/nowhere/at/all'")
    expect(app_page.locator("h1")).to_have_text("Nothing here")
    expect(app_page.locator("main code")).to_have_text("#/nowhere/at/all")


def test_the_sync_line_shows_only_when_the_stream_is_down(app_page: Any) -> None:
    expect(app_page.locator("html[data-live=live]")).to_have_count(1)
    expect(app_page.locator(".sync")).to_be_hidden()
    app_page.route("**/api/v1/stream", lambda route: route.abort())
    app_page.evaluate("location.reload()")
    expect(app_page.locator(".sync")).to_be_visible()
    expect(app_page.locator(".sync")).to_contain_text("hub")
    app_page.unroute("**/api/v1/stream")
    expect(app_page.locator(".sync")).to_be_hidden(timeout=15000)


def test_gzip_sizes_are_what_the_shell_costs(hub: Hub) -> None:
    shell = load_shell()
    for url, f in shell.files.items():
        if f.gzipped is not None:
            assert gzip.decompress(f.gzipped) == f.data, url


def test_a_refresh_from_the_stream_re_reads_the_screen(opener: Any, hub: Hub) -> None:
    page = opener(hash_="#/inbox")
    # The hub sends `event: refresh` to a stream that fell behind: the client re-reads everything.
    # Only the first stream answers (with the refresh); later ones fail, so no reconnect (which
    # re-reads by itself) can be what re-read the screen.
    streams: list[str] = []

    def stream(route: Any) -> None:
        streams.append(route.request.url)
        if len(streams) > 1:
            route.abort()
            return
        route.fulfill(
            status=200,
            headers={"Content-Type": "text/event-stream"},
            body=": connected\n\nevent: refresh\ndata: {}\n\n",
        )

    page.route("**/api/v1/stream", stream)
    page.reload()
    expect(page.locator("h1")).to_have_text("Inbox")
    # Three reads to draw the screen, three more when the refresh arrives (however soon it does).
    page.wait_for_function(
        "() => performance.getEntriesByType('resource').filter(e => e.name.includes('/api/v1/inbox?')).length >= 6"
    )
    assert len(streams) >= 1
