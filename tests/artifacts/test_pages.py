"""The public artifact pages over HTTP (the browser's side is tests/browser): the shell, the frame
with its CSP and sandbox, markdown rendered by the hub, the protected gate, the preview card,
`?version=N`, the assets, and what is refused. Reads only: no page writes a row."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from hubcore.caller import Caller
from hubcore.hub import Hub
from hubcore.services.artifacts import ArtifactPublish, ArtifactUpdate
from hubcore.services.requests import parse
from hubhttp.pages.assets import MERMAID_VERSION, assets
from hubhttp.pages.markdown import render
from hubhttp.pages.templates import (
    LOADER_SCRIPT,
    MISSING_ARTIFACT,
    MISSING_SHARE,
    SELECTION_SCRIPT,
    html_frame,
    script_hash,
)
from hubmcp.protect import encrypt
from tests.artifacts.support import state
from tests.harness import ADMIN, HubClient

pytestmark = pytest.mark.anyio

MARKDOWN = """# Report

| city | temp |
|------|------|
| Oslo | 4 |

> [!WARNING]
> mind <b>this</b>

- [x] done

Note[^1] and [bad](javascript:alert(1)).

[^1]: the footnote

<script>alert(1)</script>

```mermaid
graph TD; A-->B
```
"""


async def publish(hub: Hub, **fields: Any) -> str:
    req = parse(ArtifactPublish, {"project_id": "web", "kind": "html", "title": "Page", **fields})
    return str((await hub.artifacts.publish_artifact(Caller.agent("alice"), req))["artifact_id"])


def data_of(page: str) -> str:
    found = re.search(r'<script type="application/json" id="artifact-data">(.*?)</script>', page, re.S)
    assert found
    return found.group(1)


def test_markdown_renderer_tables_callouts_tasks_footnotes_and_escapes() -> None:
    out = render(MARKDOWN)
    assert "<table>" in out.html and "<td>Oslo</td>" in out.html
    assert 'class="markdown-alert markdown-alert-warning"' in out.html
    assert 'class="task-list-item-checkbox"' in out.html and 'class="footnotes"' in out.html
    assert "&lt;script&gt;" in out.html and "<script>" not in out.html and "&lt;b&gt;" in out.html
    assert "javascript:" not in out.html.replace("[bad](javascript:alert(1))", "")
    assert out.diagrams and '<pre class="mermaid">graph TD; A--&gt;B\n</pre>' in out.html
    assert not render("plain *text*").diagrams


async def test_shell_frame_and_card_of_an_html_artifact(client: HubClient) -> None:
    await client.make_agent("alice")
    await client.make_project("web")
    hub = client.app.hub
    aid = await publish(
        hub, content="<h1>Hi</h1><script>document.title='x'</script>", title="A <b>page</b>", description="what & why"
    )
    before = state(hub)
    page = await client.get(f"/artifacts/{aid}")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    csp = page.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "connect-src 'none'" in csp and "frame-ancestors 'none'" in csp
    body = page.text
    assert "A &lt;b&gt;page&lt;/b&gt;" in body and "<b>page</b>" not in body
    assert '<meta property="og:title" content="A &lt;b&gt;page&lt;/b&gt;">' in body
    assert f'content="http://127.0.0.1:8080/artifacts/{aid}/og.svg"' in body or "og.svg" in body
    assert 'id="version-picker"' in body and 'id="theme-toggle"' in body and 'id="back"' in body
    assert "<h1>Hi</h1>" not in body  # the artifact reaches the browser only through the frame
    assert f'"frame":"/artifacts/{aid}/frame?version=1"' in data_of(body)

    frame = await client.get(f"/artifacts/{aid}/frame?version=1")
    assert frame.text == html_frame("<h1>Hi</h1><script>document.title='x'</script>")
    fcsp = frame.headers["content-security-policy"]
    # None of the artifact's scripts runs until the human turns scripts on: the one script the CSP
    # lets run is the hub's selection reporter, pinned by its hash.
    for part in (
        "default-src 'none'",
        f"script-src {script_hash(SELECTION_SCRIPT)};",
        "connect-src 'none'",
        "img-src data: blob:",
        "frame-ancestors 'self'",
    ):
        assert part in fcsp
    assert fcsp.endswith("; sandbox allow-scripts") and "allow-same-origin" not in fcsp
    assert "script-src 'unsafe-inline'" not in fcsp
    assert frame.headers["cross-origin-resource-policy"] == "same-origin"
    assert page.headers["cross-origin-opener-policy"] == "same-origin"
    assert (await client.put(f"/api/v1/artifacts/{aid}/scripts", json={"scripts": True}, headers=ADMIN)).json() == {
        "artifact_id": aid,
        "scripts": True,
    }
    before = state(hub)
    fcsp = (await client.get(f"/artifacts/{aid}/frame?version=1")).headers["content-security-policy"]
    for part in ("sandbox allow-scripts", f"/assets/mermaid-{MERMAID_VERSION}.min.js", "frame-ancestors 'self'"):
        assert part in fcsp
    assert "allow-same-origin" not in fcsp

    card = await client.get(f"/artifacts/{aid}/og.svg")
    assert card.status_code == 200 and card.headers["content-type"].startswith("image/svg+xml")
    assert "A &lt;b&gt;page&lt;/b&gt;" in card.text and "version 1" in card.text
    assert state(hub) == before


async def test_markdown_frame_is_rendered_by_the_hub_with_mermaid(client: HubClient) -> None:
    await client.make_agent("alice")
    await client.make_project("web")
    aid = await publish(client.app.hub, kind="markdown", title="", content=MARKDOWN)
    page = await client.get(f"/artifacts/{aid}")
    assert "<title>Report · Agent Hub</title>" in page.text
    frame = (await client.get(f"/artifacts/{aid}/frame")).text
    assert "<td>Oslo</td>" in frame and "&lt;script&gt;alert(1)&lt;/script&gt;" in frame
    # Mermaid is fetched by the frame only once a diagram comes near the screen, never up front.
    assert f'"http://127.0.0.1:8080/assets/mermaid-{MERMAID_VERSION}.min.js"' in frame
    assert "<script src=" not in frame and "IntersectionObserver" in frame
    plain = await publish(client.app.hub, kind="markdown", title="", content="# No diagram")
    assert "IntersectionObserver" not in (await client.get(f"/artifacts/{plain}/frame")).text


async def test_versions_are_picked_and_refused(client: HubClient) -> None:
    await client.make_agent("alice")
    await client.make_project("web")
    hub = client.app.hub
    aid = await publish(hub, content="<p>one</p>")
    await hub.artifacts.update(
        Caller.agent("alice"), parse(ArtifactUpdate, {"artifact_id": aid, "content": "<p>two</p>"})
    )
    page = (await client.get(f"/artifacts/{aid}")).text
    assert '<option value="2" selected>Version 2</option><option value="1">Version 1</option>' in page
    assert "Version 2 of 2" in page
    old = (await client.get(f"/artifacts/{aid}?version=1")).text
    assert '<option value="1" selected>' in old and f"/artifacts/{aid}/frame?version=1" in old
    assert (await client.get(f"/artifacts/{aid}/frame?version=1")).text == html_frame("<p>one</p>")
    assert (await client.get(f"/artifacts/{aid}/frame")).text == html_frame("<p>two</p>")
    for bad in ("x", "-1", "1.5"):
        assert (await client.get(f"/artifacts/{aid}?version={bad}")).status_code == 400
    for path in (
        f"/artifacts/{aid}?version=3",
        f"/artifacts/{aid}/frame?version=9",
        "/artifacts/nope",
        "/artifacts/nope/frame",
        "/artifacts/nope/og.svg",
    ):
        missing = await client.get(path)
        assert missing.status_code == 404 and missing.json()["code"] == "not_found"


async def test_protected_artifact_shows_the_gate_and_only_ciphertext(client: HubClient) -> None:
    await client.make_agent("alice")
    await client.make_project("web")
    content, envelope = encrypt("<p>secret words</p>", "hunter2")
    aid = await publish(client.app.hub, content=content, envelope=envelope)
    page = (await client.get(f"/artifacts/{aid}")).text
    assert 'id="gate"' in page and 'id="fingerprint"' in page and 'id="remember"' in page
    assert "secret words" not in page and content in data_of(page)
    frame = await client.get(f"/artifacts/{aid}/frame")
    assert content not in frame.text and "hubDocument" in frame.text
    # The hub's loader runs, and it alone (pinned by hash): the decrypted document it writes in runs
    # no script of its own, unless the human turned them on.
    csp = frame.headers["content-security-policy"]
    assert f"script-src {script_hash(LOADER_SCRIPT)};" in csp and csp.endswith("sandbox allow-scripts")
    assert LOADER_SCRIPT in frame.text
    await client.put(f"/api/v1/artifacts/{aid}/scripts", json={"scripts": True}, headers=ADMIN)
    assert (
        "script-src 'unsafe-inline'" in (await client.get(f"/artifacts/{aid}/frame")).headers["content-security-policy"]
    )


async def test_assets_are_served_with_a_long_cache(client: HubClient) -> None:
    a = assets()
    for name in (a.viewer_js, a.viewer_css, a.mermaid, "mermaid.LICENSE"):
        got = await client.get(f"/assets/{name}")
        assert got.status_code == 200 and "immutable" in got.headers["cache-control"]
    assert len((await client.get(f"/assets/{a.mermaid}")).content) > 1_000_000
    assert (await client.get("/assets/viewer.js")).status_code == 404


async def test_share_link_pages_and_the_viewer_pass(client: HubClient) -> None:
    await client.make_agent("alice")
    await client.make_project("web")
    hub = client.app.hub
    aid = await publish(hub, content="<p>one</p>", title="Shared")
    await hub.artifacts.update(
        Caller.agent("alice"), parse(ArtifactUpdate, {"artifact_id": aid, "content": "<p>two</p>"})
    )
    made = await client.post(f"/api/v1/artifacts/{aid}/share", headers=ADMIN)
    assert made.status_code == 201
    token = made.json()["token"]
    before = state(hub)
    page = await client.get(f"/s/{token}")
    assert page.status_code == 200 and "Shared" in page.text and 'id="version-picker"' not in page.text
    assert aid not in page.text  # the share page does not name the artifact
    assert f'"frame":"/s/{token}/frame"' in data_of(page.text)
    assert (await client.get(f"/s/{token}/frame")).text == html_frame("<p>two</p>")
    assert (await client.get(f"/s/{token}/og.svg")).status_code == 200
    # While the link is live the artifact's own routes are 404 without the admin's viewer pass.
    for path in (f"/artifacts/{aid}", f"/artifacts/{aid}/frame", f"/artifacts/{aid}/og.svg"):
        assert (await client.get(path)).status_code == 404
    pass_ = (await client.get(f"/api/v1/artifacts/{aid}/viewer-pass", headers=ADMIN)).json()["pass"]
    opened = await client.get(f"/artifacts/{aid}", params={"pass": pass_})
    assert opened.status_code == 200
    frame = json.loads(data_of(opened.text))["frame"]
    assert frame == f"/artifacts/{aid}/frame?version=2&pass={pass_}"
    assert (await client.get(frame)).text == html_frame("<p>two</p>")
    assert (await client.get(f"/artifacts/{aid}", params={"pass": "0" * 64})).status_code == 404
    assert state(hub) == before

    unknown = await client.get("/s/" + "x" * 43)
    assert (await client.delete(f"/api/v1/artifacts/{aid}/share", headers=ADMIN)).status_code == 204
    revoked = await client.get(f"/s/{token}")
    assert revoked.status_code == unknown.status_code == 404 and revoked.content == unknown.content
    for path in (f"/s/{token}/frame", f"/s/{token}/og.svg"):
        assert (await client.get(path)).content == unknown.content


async def test_a_missing_page_reads_as_a_sentence_in_a_browser(client: HubClient) -> None:
    """A browser (Accept text/html first) gets the status and a sentence, never a code or a problem
    document; a revoked link and an unknown one read the same; other clients keep the problem document."""
    await client.make_agent("alice")
    await client.make_project("web")
    hub = client.app.hub
    aid = await publish(hub, content="<p>one</p>", title="Gone soon")
    token = (await client.post(f"/api/v1/artifacts/{aid}/share", headers=ADMIN)).json()["token"]
    assert (await client.delete(f"/api/v1/artifacts/{aid}/share", headers=ADMIN)).status_code == 204
    browser = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}
    before = state(hub)
    pages = {
        f"/s/{token}": MISSING_SHARE,
        "/s/" + "x" * 43: MISSING_SHARE,
        f"/s/{token}/frame": MISSING_SHARE,
        "/artifacts/nope": MISSING_ARTIFACT,
        f"/artifacts/{aid}?version=7": MISSING_ARTIFACT,
        "/artifacts/nope/frame": MISSING_ARTIFACT,
    }
    for path, sentence in pages.items():
        got = await client.get(path, headers=browser)
        assert got.status_code == 404 and got.headers["content-type"].startswith("text/html"), path
        assert sentence in got.text and "not_found" not in got.text and "404" not in got.text, path
        assert "default-src 'none'" in got.headers["content-security-policy"]
    assert (await client.get(f"/s/{token}", headers=browser)).content == (
        await client.get("/s/" + "y" * 43, headers=browser)
    ).content
    bad = await client.get(f"/artifacts/{aid}?version=x", headers=browser)
    assert bad.status_code == 400 and "not a whole number" in bad.text and "invalid_argument" not in bad.text
    card = await client.get("/artifacts/nope/og.svg", headers=browser)
    assert card.status_code == 404 and card.json()["code"] == "not_found"
    assert (await client.get(f"/s/{token}")).json()["code"] == "not_found"  # Accept */*: the problem document
    assert state(hub) == before
