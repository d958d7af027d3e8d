"""The public artifact page in Chromium: HTML and markdown render (a table, a callout, a mermaid
diagram), the version picker and the theme toggle work, a protected artifact hub-cli encrypted opens
with the right password and refuses a wrong one, and a hostile HTML artifact can neither fetch nor
open a WebSocket nor read storage nor reach the shell, with no request reaching a loopback listener."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import PASSWORD, Hub
from tests.catchers import Catcher

pytestmark = pytest.mark.browser

MARKDOWN = """# Field report

| city | temp |
|------|------|
| Oslo | 4 |

> [!WARNING]
> The numbers are early.

```mermaid
graph TD; Start-->Finish
```
"""

HOSTILE = """<!doctype html><pre id="out">{}</pre><script>
const out = {}, target = "http://127.0.0.1:PORT";
function note(key, value) { out[key] = value; document.getElementById("out").textContent = JSON.stringify(out); }
function attempt(key, fn) { try { fn(); } catch (e) { note(key, "blocked"); } }
attempt("storage", () => { localStorage.setItem("k", "v"); note("storage", "written"); });
attempt("session", () => { sessionStorage.getItem("k"); note("session", "read"); });
attempt("cookie", () => { document.cookie = "a=b"; note("cookie", document.cookie ? "read" : "blocked"); });
attempt("shell", () => { note("shell", "read " + parent.document.title); });
attempt("popup", () => { note("popup", window.open(target + "/popup") ? "opened" : "blocked"); });
fetch(target + "/fetch").then(() => note("fetch", "sent"), () => note("fetch", "blocked"));
fetch("HUB/api/v1/projects").then(() => note("hub", "sent"), () => note("hub", "blocked"));
attempt("ws", () => { const ws = new WebSocket("ws://127.0.0.1:PORT/ws");
  ws.onopen = () => note("ws", "open"); ws.onerror = () => note("ws", "blocked"); });
attempt("beacon", () => { note("beacon", navigator.sendBeacon(target + "/beacon", "x") ? "queued" : "blocked"); });
const img = new Image(); img.onload = () => note("img", "loaded"); img.onerror = () => note("img", "blocked");
img.src = target + "/img";
</script>"""
ATTEMPTS = ("storage", "session", "cookie", "shell", "popup", "fetch", "hub", "ws", "beacon", "img")


def frame_of(page: Any) -> Any:
    handle = page.wait_for_selector("#artifact-frame", state="attached")
    frame = handle.content_frame()
    assert frame is not None
    return frame


def stored(data_dir: Path) -> bytes:
    """Every byte the hub keeps: hub.db and its log, brains, blobs."""
    return b"".join(p.read_bytes() for p in data_dir.rglob("*") if p.is_file())


def test_html_and_markdown_render_with_table_callout_and_diagram(hub: Hub, page: Any) -> None:
    html = hub.call(
        "artifact_publish",
        {"project_id": "gallery", "kind": "html", "title": "Hello", "content": "<h1 id='hello'>Hello from HTML</h1>"},
    )
    page.goto(f"{hub.url}/artifacts/{html['artifact_id']}")
    assert page.text_content("#title") == "Hello"
    frame_of(page).wait_for_selector("#hello:has-text('Hello from HTML')")

    md = hub.call("artifact_publish", {"project_id": "gallery", "kind": "markdown", "title": "", "content": MARKDOWN})
    page.goto(f"{hub.url}/artifacts/{md['artifact_id']}")
    assert page.text_content("#title") == "Field report"
    frame = frame_of(page)
    assert frame.wait_for_selector("table td").text_content() == "Oslo"
    assert "The numbers are early." in frame.wait_for_selector(".markdown-alert-warning").text_content()
    diagram = frame.wait_for_selector("pre.mermaid svg")
    assert "Finish" in diagram.text_content()
    assert page.get_attribute('meta[property="og:image"]', "content").endswith("/og.svg")


def test_version_picker_and_theme_toggle(hub: Hub, page: Any) -> None:
    first = hub.call(
        "artifact_publish",
        {
            "project_id": "gallery",
            "kind": "markdown",
            "title": "Plan",
            "content": "# Plan\n\n<p id=x>one</p>\n\nversion one",
        },
    )
    aid = first["artifact_id"]
    hub.call("artifact_update", {"artifact_id": aid, "content": "# Plan\n\nversion two"})
    page.goto(f"{hub.url}/artifacts/{aid}")
    frame_of(page).wait_for_selector("text=version two")
    page.select_option("#version-picker", "1")
    page.wait_for_url(re.compile(r"\?version=1$"))
    frame = frame_of(page)
    frame.wait_for_selector("text=version one")
    assert "Version 1 of 2" in page.text_content("#version-line")

    assert page.get_attribute("html", "data-theme") == "light"
    page.click("#theme-toggle")
    assert page.get_attribute("html", "data-theme") == "dark"
    # A function, not an expression: Playwright evaluates an expression again with `eval` on each
    # poll, which the frame's CSP (no 'unsafe-eval') refuses once the first check has not passed.
    frame.wait_for_function("() => document.documentElement.dataset.theme === 'dark'")
    page.reload()
    assert page.get_attribute("html", "data-theme") == "dark"  # remembered by the shell
    frame_of(page).wait_for_function("() => document.documentElement.dataset.theme === 'dark'")


def test_protected_artifact_opens_with_the_right_password_only(hub: Hub, page: Any) -> None:
    secret = "<p id='plan'>The secret plan: ship on Friday</p>"
    done = hub.call(
        "artifact_publish",
        {"project_id": "gallery", "kind": "html", "title": "Plan B", "content": secret, "password": PASSWORD},
    )
    kept = stored(hub.data_dir)
    assert b"secret plan" not in kept and PASSWORD.encode() not in kept
    page.goto(f"{hub.url}/artifacts/{done['artifact_id']}")
    assert page.is_visible("#gate") and re.fullmatch(r"([0-9a-f]{4} ){7}[0-9a-f]{4}", page.text_content("#fingerprint"))
    page.fill("#password", "not the password")
    page.click("#unlock")
    page.wait_for_selector("#gate-error:has-text('Wrong password')")
    assert page.query_selector("#artifact-frame") is None
    page.fill("#password", PASSWORD)
    page.check("#remember")
    page.click("#unlock")
    # The loader writes the decrypted document in place of itself (its CSP runs the loader alone).
    page.frame_locator("#artifact-frame").locator("#plan").wait_for()
    assert "ship on Friday" in page.frame_locator("#artifact-frame").locator("#plan").text_content()
    assert not page.is_visible("#gate")
    page.reload()  # remembered on this device: opens without asking
    page.frame_locator("#artifact-frame").locator("#plan:has-text('ship on Friday')").wait_for()


def test_hostile_html_reaches_nothing(hub: Hub, page: Any, listener: Catcher) -> None:
    content = HOSTILE.replace("PORT", str(listener.port)).replace("HUB", hub.url)
    done = hub.call(
        "artifact_publish", {"project_id": "gallery", "kind": "html", "title": "Hostile", "content": content}
    )
    # Even with the human's yes to its scripts, the frame holds everything but WebRTC
    # (tests/webapp/test_frame_network.py covers that channel).
    hub.admin("PUT", f"/api/v1/artifacts/{done['artifact_id']}/scripts", {"scripts": True})
    page.goto(f"{hub.url}/artifacts/{done['artifact_id']}")
    frame = frame_of(page)
    frame.wait_for_function(
        f"Object.keys(JSON.parse(document.getElementById('out').textContent)).length === {len(ATTEMPTS)}"
    )
    seen = json.loads(frame.text_content("#out"))
    assert {k: v for k, v in seen.items() if k != "beacon"} == {k: "blocked" for k in ATTEMPTS if k != "beacon"}
    assert page.evaluate("localStorage.getItem('k')") is None and page.title().startswith("Hostile")
    assert listener.received == []
