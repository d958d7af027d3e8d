"""Resources, the skills extension and the bootstrap guide, on the wire and through the SDK client."""

from __future__ import annotations

import hashlib
from typing import Any

import httpx
import pytest
from mcp.shared.exceptions import MCPError

from hubcore.caller import Caller
from hubcore.errors import HubError
from hubcore.parts import Part, Resource, ResourceTemplate
from hubmcp import skills
from hubmcp.resources import IssuedCursors
from tests.harness import ADMIN
from tests.mcp.live import ERAS, MODERN, LiveHub, initialize, modern_request

pytestmark = pytest.mark.anyio

ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


async def modern(
    live: LiveHub, method: str, params: dict[str, Any] | None = None, headers: dict[str, str] | None = None
) -> httpx.Response:
    name = str((params or {}).get("uri")) if method == "resources/read" else None
    body, h = modern_request(method, params, name=name, request_id=7)
    return await live.http.post("/mcp", json=body, headers={**h, **(headers or {})})


async def test_initialize_advertises_resources_and_the_skills_extension(live: LiveHub) -> None:
    r = await live.http.post("/mcp", json=initialize(), headers={**ACCEPT, **ADMIN})
    text = r.text
    payload = text[text.index("{") : text.rindex("}") + 1] if "data:" in text else text
    import json

    result = json.loads(payload)["result"]
    caps = result["capabilities"]
    assert "resources" in caps and "tools" in caps
    assert caps["extensions"]["io.modelcontextprotocol/skills"] == {"directoryRead": True}
    discover = (await modern(live, "server/discover")).json()["result"]
    assert discover["capabilities"]["extensions"]["io.modelcontextprotocol/skills"] == {"directoryRead": True}


async def test_skills_list_get_and_directory_read_carry_digests_and_modern_cache_hints(live: LiveHub) -> None:
    listed = (await modern(live, "skills/list")).json()["result"]
    assert listed["ttlMs"] >= 0 and listed["cacheScope"] in ("public", "private")
    assert listed["resultType"] == "complete"
    entry = listed["skills"][0]
    assert entry["uri"] == "skill://hub/SKILL.md" and entry["frontmatter"]["name"] == "hub"
    skill = skills.load()
    for res in entry["resources"]:
        data = skill.file_for(res["uri"])
        assert data is not None
        assert res["size"] == len(data.data)
        assert res["digest"] == "sha256:" + hashlib.sha256(data.data).hexdigest()
    paths = {r["uri"] for r in entry["resources"]}
    for name in (
        "sessions",
        "feeds-and-inbox",
        "notifications",
        "brains",
        "knowledge-base",
        "artifacts",
        "search",
        "errors",
    ):
        assert f"skill://hub/references/{name}.md" in paths
    got = (await modern(live, "skills/get", {"uri": "skill://hub/SKILL.md"})).json()["result"]
    assert got["skill"] == entry and "nextCursor" not in got
    missing = (await modern(live, "skills/get", {"uri": "skill://nope/SKILL.md"})).json()
    assert missing["error"]["code"] == -32602
    root = (await modern(live, "resources/directory/read", {"uri": "skill://hub"})).json()["result"]
    assert {"uri": "skill://hub/references", "name": "references", "mimeType": "inode/directory"} in root["resources"]
    sub = (await modern(live, "resources/directory/read", {"uri": "skill://hub/references"})).json()["result"]
    assert len(sub["resources"]) == 8
    not_dir = (await modern(live, "resources/directory/read", {"uri": "skill://hub/SKILL.md"})).json()
    assert not_dir["error"]["code"] == -32602


@pytest.mark.parametrize("mode", ERAS)
async def test_resources_list_read_and_errors(live: LiveHub, mode: str) -> None:
    token = await live.make_agent("bot")
    await live.make_project("secret", confidential=True)
    async with live.client(token, mode=mode) as c:
        listed = await c.list_resources()
        uris = [str(r.uri) for r in listed.resources]
        assert uris[:2] == ["hub://skill", "skill://hub/SKILL.md"]
        assert listed.next_cursor is None
        boot = await c.read_resource("hub://skill")
        assert f"{live.base}/mcp" in boot.contents[0].text  # type: ignore[union-attr]
        page = await c.read_resource("skill://hub/references/errors.md")
        assert page.contents[0].mime_type == "text/markdown"
        # The knowledge base part serves the spec's template.
        templates = await c.list_resource_templates()
        assert [t.uri_template for t in templates.resource_templates] == ["hub://kb/{project_id}/{+path}"]
        with pytest.raises(MCPError) as caught:
            await c.read_resource("hub://nothing/here")
        assert caught.value.error.code == -32602 and caught.value.error.data["uri"] == "hub://nothing/here"
        assert caught.value.error.data["error"]["code"] == "not_found"
        # A hub://kb/ URI naming no page is INVALID_PARAMS; a project the agent cannot see, missing
        # or confidential, is the same forbidden.
        answers = []
        for uri in ("hub://kb/secret", "hub://kb/secret/fs/index.md", "hub://kb/missing/fs/index.md"):
            with pytest.raises(MCPError) as caught:
                await c.read_resource(uri)
            answers.append((caught.value.error.code, caught.value.error.data["error"]["code"]))
        assert answers == [(-32602, "invalid_argument"), (-32050, "forbidden"), (-32050, "forbidden")]
        with pytest.raises(MCPError) as caught:
            await c.list_resources(cursor="skill://hub/never-issued")
        assert caught.value.error.code == -32602


def test_issued_cursors_are_bounded() -> None:
    issued = IssuedCursors(limit=2)
    for c in ("a", "b", "c"):
        issued.issue(c)
    assert "a" not in issued and "c" in issued


class PagesPart(Part):
    """A part that serves resources (as the knowledge base part will): pages per project."""

    name = "pages"

    def __init__(self, sizes: dict[str, int]) -> None:
        self.sizes = sizes

    def resource_templates(self) -> list[ResourceTemplate]:
        return [ResourceTemplate("page://{project_id}/{name}", "page", mime_type="text/markdown")]

    def every(self) -> list[Resource]:
        return [
            Resource(f"page://{pid}/p{n:03d}.md", f"{pid}:p{n:03d}", "text/markdown")
            for pid, count in self.sizes.items()
            for n in range(count)
        ]

    async def resources(self, caller: Caller, after: str | None, limit: int) -> list[Resource]:
        return [r for r in self.every() if after is None or r.uri > after][:limit]

    def owns_resource(self, uri: str) -> bool:
        return uri.startswith("page://")

    async def read_resource(self, caller: Caller, uri: str) -> tuple[str, str] | None:
        if not uri.startswith("page://"):
            return None
        if uri.startswith("page://secret/"):
            raise HubError("forbidden", "project 'secret' is not readable")
        if uri not in {r.uri for r in self.every()}:
            raise HubError("not_found", f"no page {uri}")
        return f"text of {uri}", "text/markdown"


async def test_a_part_brings_its_resources_template_listing_and_reads(live: LiveHub) -> None:
    hub = live.app.hub
    original = hub.core.parts
    hub.core.parts = (*original, PagesPart({"alpha": 2}))
    try:
        async with live.client(mode=MODERN) as c:
            templates = await c.list_resource_templates()
            assert [t.uri_template for t in templates.resource_templates] == [
                "hub://kb/{project_id}/{+path}",
                "page://{project_id}/{name}",
            ]
            uris = [str(r.uri) for r in (await c.list_resources()).resources]
            assert uris[-2:] == ["page://alpha/p000.md", "page://alpha/p001.md"]  # no page written yet
            page = await c.read_resource("page://alpha/p001.md")
            assert page.contents[0].text == "text of page://alpha/p001.md"  # type: ignore[union-attr]
            codes = []
            for uri in ("page://alpha/p009.md", "page://secret/p000.md"):
                with pytest.raises(MCPError) as caught:
                    await c.read_resource(uri)
                codes.append(caught.value.error.data["error"]["code"])
            assert codes == ["not_found", "forbidden"]
    finally:
        hub.core.parts = original


async def test_bootstrap_renders_the_callers_origin(live: LiveHub) -> None:
    r = await live.http.get("/bootstrap/SKILL.md")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/markdown")
    assert f"{live.base}/mcp" in r.text
    r = await live.http.get("/bootstrap/SKILL.md", headers={"Host": "hub.example:8443"})
    assert "http://hub.example:8443/mcp" in r.text
    # Forwarded headers count only from a trust_proxy peer (none is configured here).
    r = await live.http.get(
        "/bootstrap/SKILL.md", headers={"X-Forwarded-Proto": "https", "X-Forwarded-Host": "evil.example"}
    )
    assert "evil.example" not in r.text and f"{live.base}/mcp" in r.text


def test_forwarded_origin_only_from_a_trusted_peer() -> None:
    from hubcore.origin import request_origin

    headers = {"host": "10.0.0.5:8080", "x-forwarded-proto": "https", "x-forwarded-host": "hub.example"}
    kw: dict[str, Any] = {"scheme": "http", "headers": headers, "fallback_host": "127.0.0.1:8080"}
    assert request_origin(peer="10.0.0.9", trust_proxy=["10.0.0.1"], **kw) == "http://10.0.0.5:8080"
    assert request_origin(peer="10.0.0.1", trust_proxy=["10.0.0.0/24"], **kw) == "https://hub.example"
    fwd = {"host": "x", "forwarded": 'for=1.2.3.4;proto=https;host="a.example"'}
    assert (
        request_origin(scheme="http", headers=fwd, peer="::1", trust_proxy=["::1"], fallback_host="h")
        == "https://a.example"
    )


async def test_listing_pages_100_at_a_time_in_project_and_path_order() -> None:
    from types import SimpleNamespace

    from hubmcp.active import ActiveSessions, modern_key
    from hubmcp.context import CallContext
    from hubmcp.resources import Resources

    hub = SimpleNamespace(core=SimpleNamespace(parts=(PagesPart({"alpha": 120, "beta": 5}),)))
    call = CallContext(hub, None, modern_key("x", None), ActiveSessions(), lambda: None, MODERN)  # type: ignore[arg-type]
    resources = Resources()
    seen: list[str] = []
    cursor = None
    sizes = []
    while True:
        page = await resources.list(call, cursor)
        sizes.append(len(page.resources))
        seen.extend(str(r.uri) for r in page.resources)
        if page.next_cursor is None:
            break
        assert page.next_cursor == seen[-1]
        cursor = page.next_cursor
    statics = 1 + len(skills.load().files)
    assert sizes == [100, statics + 125 - 100]
    assert seen[0] == "hub://skill" and seen[statics] == "page://alpha/p000.md"
    assert seen[-1] == "page://beta/p004.md" and len(set(seen)) == len(seen)
