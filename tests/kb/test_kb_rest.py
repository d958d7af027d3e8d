"""The knowledge base routes over REST (spec "Knowledge base routes"): every route, every query
parameter at its edge, both body forms of a page write, the URL forms of a path, odd paths and
encodings, wrong types and huge values. Every refusal leaves the pages, the log, the kept bytes and
the feed as they were (`state`). Each response is also checked against the OpenAPI document by the
harness."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from hubcore.caller import Caller
from hubcore.errors import HubError
from hubcore.hub import Hub
from hubcore.services.kb.models import KbPromote, KbRevert, KbWrite
from hubcore.services.requests import parse
from tests.harness import ADMIN, HubClient
from tests.kb.support import kb_events, kb_rows, page, state
from tests.requests import a_brain_put, a_session_start

pytestmark = pytest.mark.anyio

KB = "/api/v1/projects/web/kb"
MD = {**ADMIN, "Content-Type": "text/markdown; charset=utf-8"}


async def write(client: HubClient, path: str, content: str, **query: str) -> dict[str, Any]:
    r = await client.put(f"{KB}/pages/{path}", json={"content": content}, params=query, headers=ADMIN)
    assert r.status_code == 200, r.text
    return dict(r.json())


async def refused(
    client: HubClient, hub: Hub, status: int, code: str, method: str, url: str, **kwargs: Any
) -> dict[str, Any]:
    """The request is refused with `status` and `code`, and nothing changed."""
    before = state(hub)
    r = await client.request(method, url, headers=kwargs.pop("headers", ADMIN), **kwargs)
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/problem+json")
    body = r.json()
    assert body["code"] == code, body
    assert state(hub) == before
    return dict(body)


# -- writes and reads ----------------------------------------------------------------------------


async def test_a_page_written_as_json_markdown_or_plain_text_reads_back(client: HubClient, hub: Hub) -> None:
    wrote = await write(client, "notes/a.md", page("A"))
    assert wrote == {
        "ok": True,
        "path": "/fs/notes/a.md",
        "version": wrote["version"],
        "size_bytes": len(page("A").encode()),
        "lint": [],
        "warnings": [],
    }
    r = await client.put(f"{KB}/pages/fs/notes/b.md", content=b"# B\n", headers=MD, params={"if_version": "absent"})
    assert r.status_code == 200 and r.json()["path"] == "/fs/notes/b.md"
    assert [f["code"] for f in r.json()["lint"]] == ["missing_frontmatter"]
    r = await client.put(
        f"{KB}/pages/plain.txt", content="héllo".encode(), headers={**ADMIN, "Content-Type": "text/plain"}
    )
    assert r.status_code == 200 and r.json()["size_bytes"] == 6
    got = (await client.get(f"{KB}/pages/notes/a.md", headers=ADMIN)).json()
    assert got == {
        "path": "/fs/notes/a.md",
        "content": page("A"),
        "version": wrote["version"],
        "size_bytes": wrote["size_bytes"],
        "last_write": {"actor": "human", "at": got["last_write"]["at"]},
    }
    # `fs` may be omitted or given; the leading slash of a query path too.
    for spelling in ("fs/notes/a.md", "notes/a.md", "notes/./x/../a.md/"):
        assert (await client.get(f"{KB}/pages/{spelling}", headers=ADMIN)).json()["version"] == wrote["version"]
    assert (await client.get(f"{KB}/pages/plain.txt", headers=ADMIN)).json()["content"] == "héllo"
    assert kb_rows(hub, "SELECT op, path, actor FROM log ORDER BY id") == [
        ("kb.put", "/fs/notes/a.md", "human"),
        ("kb.put", "/fs/notes/b.md", "human"),
        ("kb.put", "/fs/plain.txt", "human"),
    ]


async def test_a_page_read_rendered_is_its_body_as_safe_html(client: HubClient, hub: Hub) -> None:
    content = (
        '---\ntype: note\ntitle: "<b>T</b>"\n---\n# Head\n\n<script>x()</script> [j](javascript:x) '
        "[ok](https://e.org)\n"
    )
    wrote = await write(client, "r.md", content)
    got = (await client.get(f"{KB}/pages/r.md", params={"rendered": "1"}, headers=ADMIN)).json()
    assert got["content"] == content and got["version"] == wrote["version"]
    assert got["rendered"] == (
        '<h1>Head</h1>\n<p>&lt;script&gt;x()&lt;/script&gt; [j](javascript:x) <a href="https://e.org">ok</a></p>\n'
    )  # the frontmatter is not part of it
    old = (
        await client.get(f"{KB}/pages/r.md", params={"rendered": "true", "version": wrote["version"]}, headers=ADMIN)
    ).json()
    assert old["rendered"] == got["rendered"] and old["current"] is True
    assert "rendered" not in (await client.get(f"{KB}/pages/r.md", params={"rendered": "0"}, headers=ADMIN)).json()
    await refused(client, hub, 400, "invalid_argument", "GET", f"{KB}/pages/r.md", params={"rendered": "yes"})


async def test_a_conditional_write_and_its_conflict(client: HubClient, hub: Hub) -> None:
    one = await write(client, "a.md", "one")
    await refused(
        client, hub, 409, "conflict", "PUT", f"{KB}/pages/a.md", json={"content": "x", "if_version": "absent"}
    )
    body = await refused(
        client,
        hub,
        409,
        "conflict",
        "PUT",
        f"{KB}/pages/a.md",
        content=b"x",
        headers=MD,
        params={"if_version": "sha256:" + "0" * 64},
    )
    assert body["detail"].endswith(f"current_version={one['version']}")
    two = await write(client, "a.md", "two", if_version=one["version"])
    r = await client.put(f"{KB}/pages/a.md", json={"content": "three", "if_version": two["version"]}, headers=ADMIN)
    assert r.status_code == 200
    # Given in both the query and the body: refused, whatever they say.
    await refused(
        client,
        hub,
        400,
        "invalid_argument",
        "PUT",
        f"{KB}/pages/a.md",
        json={"content": "four", "if_version": r.json()["version"]},
        params={"if_version": "absent"},
    )


async def test_page_write_refusals_store_nothing(client: HubClient, hub: Hub) -> None:
    await write(client, "keep.md", "kept")
    url = f"{KB}/pages/new.md"
    for content_type in ("text/html", "application/x-www-form-urlencoded", "application/octet-stream"):
        await refused(
            client,
            hub,
            415,
            "invalid_argument",
            "PUT",
            url,
            content=b"hi",
            headers={**ADMIN, "Content-Type": content_type},
        )
    for raw in (b"{bad", b'{"content": "x"', b"[1, 2]", b'"text"', b"\xff\xfe"):
        await refused(
            client,
            hub,
            400,
            "invalid_argument",
            "PUT",
            url,
            content=raw,
            headers={**ADMIN, "Content-Type": "application/json"},
        )
    await refused(client, hub, 400, "invalid_argument", "PUT", url, content=b"\xff\xfe", headers=MD)
    for body in (
        {},
        {"content": 5},
        {"content": None},
        {"content": ["x"]},
        {"content": "x", "if_version": "v1"},
        {"content": "x", "if_version": 7},
        {"content": "x", "extra": 1},
        {"content": "x", "path": "/fs/y.md"},
    ):
        await refused(client, hub, 400, "invalid_argument", "PUT", url, json=body)
    big = "x" * (1024 * 1024 + 1)
    await refused(client, hub, 413, "payload_too_large", "PUT", url, json={"content": big})
    await refused(client, hub, 413, "payload_too_large", "PUT", url, content=big.encode(), headers=MD)
    await refused(client, hub, 413, "payload_too_large", "PUT", url, content=b"x" * (4 * 1024 * 1024 + 1), headers=MD)
    await refused(client, hub, 400, "invalid_argument", "PUT", url, content=b"---\ntitle: a\x01b\n---\n", headers=MD)
    edge = "é" * (512 * 1024)  # exactly 1 MiB of UTF-8
    assert (await client.put(url, json={"content": edge}, headers=ADMIN)).json()["size_bytes"] == 1024 * 1024
    # Agents and no token at all: 401 before anything is read.
    token = await client.make_agent("carol")
    await refused(client, hub, 401, "unauthenticated", "PUT", url, json={"content": "x"}, headers=client.agent(token))
    await refused(client, hub, 401, "unauthenticated", "GET", f"{KB}/pages/keep.md", headers={})


@pytest.mark.parametrize(
    ("url", "status"),
    [
        ("pages/%2e%2e/x.md", 400),
        ("pages/a/%2E%2E/%2e%2e/x.md", 400),
        ("pages/a/%2e/x.md", 400),
        ("pages/a%2Fb.md", 400),
        ("pages/a%5Cb.md", 400),
        ("pages/a%01b.md", 400),
        ("pages/a%0Ab.md", 400),
        ("pages/a%09b.md", 400),
        ("pages/kv/x", 400),
        ("pages/fs", 400),
        ("pages/fs/", 400),
        ("pages/%ff.md", 400),
        ("pages/" + "a" * 509 + ".md", 400),
        ("pages/" + "a" * 505 + ".md", 200),
    ],
)
async def test_odd_paths_in_urls(client: HubClient, hub: Hub, url: str, status: int) -> None:
    """Dot segments (plain or encoded), encoded slashes, backslashes, control characters, the kv
    namespace, the bare root, invalid UTF-8 and a canonical path over 512 bytes are refused; a page
    path of exactly 512 bytes (`/fs/` + 508) is taken."""
    if status == 400:
        await refused(client, hub, 400, "invalid_argument", "PUT", f"{KB}/{url}", json={"content": "x"})
        await refused(client, hub, 400, "invalid_argument", "GET", f"{KB}/{url}")
        return
    wrote = await write(client, url.removeprefix("pages/"), "x")
    assert len(wrote["path"].encode()) == 512


async def test_paths_in_queries_resolve_dots_without_climbing_above_fs(client: HubClient, hub: Hub) -> None:
    await write(client, "a.md", "x")
    for spelling in ("/fs/a.md", "fs/a.md", "a.md", "../../a.md", "/fs/../../a.md", "b/../a.md"):
        r = await client.get(f"{KB}/versions", params={"path": spelling}, headers=ADMIN)
        assert r.status_code == 200 and r.json()["path"] == "/fs/a.md", spelling
    for bad in ("/kv/a", "a\\b.md", "a\x00.md", "a\tb.md", "a" * 600, "/fs/"):
        await refused(client, hub, 400, "invalid_argument", "GET", f"{KB}/versions", params={"path": bad})


# -- listing -------------------------------------------------------------------------------------


async def test_listing_levels_limits_and_meta_rows(client: HubClient, hub: Hub) -> None:
    for name in ("b.md", "a.md", "dir/x.md", "dir/y.md", "dir/deep/z.md"):
        await write(client, name, page(name))
    level = (await client.get(f"{KB}/pages", headers=ADMIN)).json()
    assert [(e["path"], e["type"]) for e in level["entries"]] == [
        ("/fs/a.md", "file"),
        ("/fs/b.md", "file"),
        ("/fs/dir", "dir"),
    ]
    assert level["truncated"] is False and level["entries"][0]["children"] is None
    assert level["entries"][2]["children"] == 3  # x.md, y.md and deep/
    sub = (await client.get(f"{KB}/pages", params={"prefix": "dir"}, headers=ADMIN)).json()
    assert [e["path"] for e in sub["entries"]] == ["/fs/dir/deep", "/fs/dir/x.md", "/fs/dir/y.md"]
    assert (await client.get(f"{KB}/pages", params={"prefix": "/fs/dir/"}, headers=ADMIN)).json() == sub
    one = (await client.get(f"{KB}/pages", params={"limit": "1"}, headers=ADMIN)).json()
    assert len(one["entries"]) == 1 and one["truncated"] is True
    assert (await client.get(f"{KB}/pages", params={"limit": "500"}, headers=ADMIN)).status_code == 200
    meta = (await client.get(f"{KB}/pages", params={"meta": "1", "prefix": "dir"}, headers=ADMIN)).json()
    assert [e["path"] for e in meta["entries"]] == ["/fs/dir/deep/z.md", "/fs/dir/x.md", "/fs/dir/y.md"]
    row = meta["entries"][1]
    assert (row["title"], row["page_type"], row["trust"], row["last_write_by"]) == (
        "dir/x.md",
        "Concept",
        "unverified",
        "human",
    )
    for flag, expect in (("true", 3), ("0", 3), ("false", 3)):
        r = await client.get(f"{KB}/pages", params={"meta": flag, "prefix": "dir"}, headers=ADMIN)
        assert len(r.json()["entries"]) == expect
    empty = (await client.get(f"{KB}/pages", params={"prefix": "nothing/here"}, headers=ADMIN)).json()
    assert empty == {"entries": [], "truncated": False}
    await refused(client, hub, 409, "conflict", "GET", f"{KB}/pages", params={"prefix": "a.md"})


@pytest.mark.parametrize(
    "query",
    [
        {"limit": "0"},
        {"limit": "501"},
        {"limit": "-1"},
        {"limit": "1.5"},
        {"limit": "abc"},
        {"limit": ""},
        {"limit": "9" * 40},
        {"limit": "9" * 400},
        {"limit": "１"},
        {"meta": "yes"},
        {"meta": "2"},
        {"prefix": "/kv/"},
        {"prefix": "a\\b"},
        {"bogus": "1"},
        {"project_id": "other"},
    ],
)
async def test_listing_query_refusals(client: HubClient, hub: Hub, query: dict[str, str]) -> None:
    await refused(client, hub, 400, "invalid_argument", "GET", f"{KB}/pages", params=query)


async def test_a_query_parameter_given_twice_is_refused(client: HubClient, hub: Hub) -> None:
    await refused(client, hub, 400, "invalid_argument", "GET", f"{KB}/pages?limit=1&limit=2")
    await refused(client, hub, 400, "invalid_argument", "GET", f"{KB}/history?path=a.md&path=b.md")


async def test_missing_project_and_missing_page(client: HubClient, hub: Hub) -> None:
    for url in (
        "/api/v1/projects/nowhere/kb/pages",
        "/api/v1/projects/nowhere/kb/stats",
        "/api/v1/projects/nowhere/kb/lint",
        "/api/v1/projects/nowhere/kb/pages/a.md",
    ):
        await refused(client, hub, 404, "not_found", "GET", url)
    await refused(client, hub, 404, "not_found", "PUT", "/api/v1/projects/nowhere/kb/pages/a.md", json={"content": "x"})
    assert not (hub.settings.data_path / "kb" / "nowhere.db").exists()
    await refused(client, hub, 404, "not_found", "GET", f"{KB}/pages/none.md")
    await refused(client, hub, 400, "invalid_argument", "GET", "/api/v1/projects/BAD!/kb/pages")


# -- delete, review, revert ----------------------------------------------------------------------


async def test_delete_rules(client: HubClient, hub: Hub) -> None:
    one = await write(client, "dir/a.md", "a")
    await refused(client, hub, 404, "not_found", "DELETE", f"{KB}/pages/none.md")
    await refused(client, hub, 400, "invalid_argument", "DELETE", f"{KB}/pages/dir")
    await refused(client, hub, 409, "conflict", "DELETE", f"{KB}/pages/dir/a.md", params={"if_version": "absent"})
    await refused(client, hub, 400, "invalid_argument", "DELETE", f"{KB}/pages/dir/a.md", params={"if_version": "x"})
    r = await client.delete(f"{KB}/pages/dir/a.md", params={"if_version": one["version"]}, headers=ADMIN)
    assert r.status_code == 200 and r.json() == {"ok": True, "path": "/fs/dir/a.md"}
    await refused(client, hub, 404, "not_found", "DELETE", f"{KB}/pages/dir/a.md")
    await refused(client, hub, 404, "not_found", "GET", f"{KB}/pages/dir/a.md")
    # A deleted page's version stays readable; the directory is gone with its last page.
    old = (await client.get(f"{KB}/pages/dir/a.md", params={"version": one["version"]}, headers=ADMIN)).json()
    assert (old["content"], old["current"], old["actor"]) == ("a", False, "human")
    assert (await client.get(f"{KB}/pages", headers=ADMIN)).json()["entries"] == []
    assert [orjson.loads(e[2])["action"] for e in kb_events(hub)] == ["kb_written", "kb_deleted"]


async def test_review_and_its_refusals(client: HubClient, hub: Hub) -> None:
    wrote = await write(client, "a.md", page("A"))
    for body in ({"verified_by": "bot"}, {"verified_by": 1}, {"extra": True}):
        await refused(client, hub, 400, "invalid_argument", "POST", f"{KB}/pages/a.md/review", json=body)
    await refused(
        client, hub, 409, "conflict", "POST", f"{KB}/pages/a.md/review", json={"if_version": "sha256:" + "1" * 64}
    )
    await refused(client, hub, 404, "not_found", "POST", f"{KB}/pages/none.md/review")
    r = await client.post(
        f"{KB}/pages/a.md/review", json={"if_version": wrote["version"], "verified_by": "human"}, headers=ADMIN
    )
    assert r.status_code == 200 and set(r.json()) == {"ok", "path", "version"}
    content = (await client.get(f"{KB}/pages/a.md", headers=ADMIN)).json()["content"]
    assert "verified:" in content and "by: human" in content and content.endswith(page("A").split("---\n", 2)[2])
    r = await client.post(f"{KB}/pages/a.md/review", headers=ADMIN)  # no body at all
    assert r.status_code == 200
    meta = (await client.get(f"{KB}/pages", params={"meta": "1"}, headers=ADMIN)).json()["entries"][0]
    assert (meta["trust"], meta["verified_by"]) == ("human_reviewed", "human")
    assert kb_rows(hub, "SELECT op FROM log ORDER BY id") == [("kb.put",), ("kb.review",), ("kb.review",)]


async def test_revert_writes_once_and_restores_a_deleted_page(client: HubClient, hub: Hub) -> None:
    one = await write(client, "a.md", "one")
    await write(client, "a.md", "two")
    r = await client.post(f"{KB}/pages/a.md/revert", json={"version": one["version"]}, headers=ADMIN)
    assert r.json() == {
        "ok": True,
        "path": "/fs/a.md",
        "store": "project",
        "version": one["version"],
        "size_bytes": 3,
        "lint": r.json()["lint"],
        "warnings": [],
        "changed": True,
    }
    before = state(hub)
    again = await client.post(f"{KB}/pages/a.md/revert", json={"version": one["version"]}, headers=ADMIN)
    assert again.json()["changed"] is False and state(hub) == before
    for body in ({}, {"version": "one"}, {"version": one["version"], "if_version": 3}):
        await refused(client, hub, 400, "invalid_argument", "POST", f"{KB}/pages/a.md/revert", json=body)
    await refused(
        client, hub, 404, "not_found", "POST", f"{KB}/pages/a.md/revert", json={"version": "sha256:" + "2" * 64}
    )
    await refused(
        client,
        hub,
        409,
        "conflict",
        "POST",
        f"{KB}/pages/a.md/revert",
        json={"version": one["version"], "if_version": "absent"},
    )
    await client.delete(f"{KB}/pages/a.md", headers=ADMIN)
    r = await client.post(
        f"{KB}/pages/a.md/revert", json={"version": one["version"], "if_version": "absent"}, headers=ADMIN
    )
    assert r.json()["changed"] is True
    assert (await client.get(f"{KB}/pages/a.md", headers=ADMIN)).json()["content"] == "one"
    assert kb_rows(hub, "SELECT op FROM log ORDER BY id")[-1] == ("kb.revert",)


async def test_promote_copies_a_session_brain_entry(client: HubClient, hub: Hub) -> None:
    alice = Caller.agent("alice")
    sid = (await hub.sessions.start(alice, a_session_start("web", "research")))["session_id"]
    await hub.brains.write_entry(
        alice, a_brain_put(path="/fs/n.md", content="Found.\n", store="session", session_id=sid)
    )
    body = {
        "from_session_id": sid,
        "from_path": "/fs/n.md",
        "to_path": "/fs/guide/n.md",
        "type": "Guide",
        "title": "N",
        "tags": ["a", "b"],
        "description": "what was found",
    }
    r = await client.post(f"{KB}/promote", json=body, headers=ADMIN)
    assert r.status_code == 200 and set(r.json()) == {"ok", "path", "version", "lint"}
    content = (await client.get(f"{KB}/pages/guide/n.md", headers=ADMIN)).json()["content"]
    assert content.endswith("---\nFound.\n") and f"hub://brain/{sid}/fs/n.md" in content
    for bad in (
        {**body, "to_path": "/kv/x"},
        {**body, "tags": "a"},
        {**body, "title": "a\nb"},
        {**body, "x": 1},
        {k: v for k, v in body.items() if k != "from_session_id"},
        {**body, "to_path": "guide/n.md"},
    ):
        await refused(client, hub, 400, "invalid_argument", "POST", f"{KB}/promote", json=bad)
    await refused(client, hub, 409, "conflict", "POST", f"{KB}/promote", json={**body, "if_version": "absent"})
    await refused(client, hub, 404, "not_found", "POST", f"{KB}/promote", json={**body, "from_path": "/fs/none.md"})


# -- history, versions, forget -------------------------------------------------------------------


async def test_history_filters_pages_and_counts(client: HubClient, hub: Hub) -> None:
    for i in range(3):
        await write(client, f"a/{i}.md", f"v{i}")
    await write(client, "b.md", "b")
    await client.delete(f"{KB}/pages/b.md", headers=ADMIN)

    async def rows(**query: str) -> dict[str, Any]:
        r = await client.get(f"{KB}/history", params=query, headers=ADMIN)
        assert r.status_code == 200, r.text
        return dict(r.json())

    every = await rows()
    assert [(r["op"], r["path"]) for r in every["rows"]] == [
        ("kb.delete", "/fs/b.md"),
        ("kb.put", "/fs/b.md"),
        ("kb.put", "/fs/a/2.md"),
        ("kb.put", "/fs/a/1.md"),
        ("kb.put", "/fs/a/0.md"),
    ]
    assert (every["total"], every["next_before"], every["truncated"]) == (5, None, False)
    assert every["rows"][0]["version"] is None
    assert (await rows(limit="0")) == {"rows": [], "total": 5, "next_before": None, "truncated": False}
    first = await rows(limit="2")
    assert first["truncated"] is True and len(first["rows"]) == 2
    rest = await rows(limit="200", before=str(first["next_before"]))
    assert [r["path"] for r in rest["rows"]] == ["/fs/a/2.md", "/fs/a/1.md", "/fs/a/0.md"]
    assert [r["path"] for r in (await rows(prefix="a"))["rows"]] == ["/fs/a/2.md", "/fs/a/1.md", "/fs/a/0.md"]
    assert [r["op"] for r in (await rows(path="/fs/b.md"))["rows"]] == ["kb.delete", "kb.put"]
    assert (await rows(op="kb.delete"))["total"] == 1
    assert (await rows(actor="human"))["total"] == 5 and (await rows(actor="alice"))["total"] == 0
    await refused(client, hub, 404, "not_found", "GET", f"{KB}/history", params={"path": "never.md"})
    for query in (
        {"limit": "201"},
        {"limit": "-1"},
        {"before": "0"},
        {"before": "x"},
        {"op": "kb.move"},
        {"actor": ""},
        {"actor": "a" * 500},
        {"prefix": "/kv/"},
        {"before": "9" * 30},
        {"since": "1"},
    ):
        await refused(client, hub, 400, "invalid_argument", "GET", f"{KB}/history", params=query)


async def test_versions_and_forget(client: HubClient, hub: Hub) -> None:
    one = await write(client, "a.md", "one")
    two = await write(client, "a.md", "two!")
    listed = (await client.get(f"{KB}/versions", params={"path": "a.md"}, headers=ADMIN)).json()
    assert (listed["path"], listed["current_version"], listed["total"]) == ("/fs/a.md", two["version"], 2)
    assert [(v["version"], v["kept"], v["current"], v["size_bytes"]) for v in listed["versions"]] == [
        (two["version"], True, True, 4),
        (one["version"], True, False, 3),
    ]
    page1 = (await client.get(f"{KB}/versions", params={"path": "a.md", "limit": "1"}, headers=ADMIN)).json()
    assert page1["truncated"] is True and page1["next_before"] == listed["versions"][0]["id"]
    for query in ({"path": "a.md", "limit": "0"}, {"path": "a.md", "limit": "201"}, {}, {"path": "a.md", "x": "1"}):
        await refused(client, hub, 400, "invalid_argument", "GET", f"{KB}/versions", params=query)
    await refused(client, hub, 404, "not_found", "GET", f"{KB}/versions", params={"path": "never.md"})
    await refused(client, hub, 404, "not_found", "DELETE", f"{KB}/versions", params={"path": "never.md"})
    await refused(client, hub, 400, "invalid_argument", "DELETE", f"{KB}/versions")
    r = await client.delete(f"{KB}/versions", params={"path": "/fs/a.md"}, headers=ADMIN)
    assert r.json() == {
        "ok": True,
        "path": "/fs/a.md",
        "versions_forgotten": 1,
        "bytes_forgotten": 3,
        "unreferenced_forgotten": 1,
    }
    after = (await client.get(f"{KB}/versions", params={"path": "a.md"}, headers=ADMIN)).json()
    assert [v["kept"] for v in after["versions"]] == [True, False]
    await refused(client, hub, 404, "not_found", "GET", f"{KB}/pages/a.md", params={"version": one["version"]})
    event = kb_events(hub)[-1]
    assert event[:2] == ("system", "human")
    assert orjson.loads(event[2]) == {
        "action": "kb_history_forgotten",
        "path": "/fs/a.md",
        "versions_forgotten": 1,
        "bytes_forgotten": 3,
        "unreferenced_forgotten": 1,
    }
    await refused(client, hub, 400, "invalid_argument", "GET", f"{KB}/pages/a.md", params={"version": "1"})


# -- derived views -------------------------------------------------------------------------------


async def test_backlinks_lint_and_stats(client: HubClient, hub: Hub) -> None:
    await write(client, "index.md", "---\ntype: Guide\nokf_version: 1\n---\n[a](a.md) [b](b.md)\n")
    await write(client, "a.md", page("A", "[b](b.md) [self](a.md) [gone](gone.md)\n"))
    await write(client, "b.md", page("B"))
    links = (await client.get(f"{KB}/backlinks", params={"path": "b.md"}, headers=ADMIN)).json()
    assert links == [{"path": "/fs/a.md", "title": "A"}, {"path": "/fs/index.md", "title": None}]
    assert (await client.get(f"{KB}/backlinks", params={"path": "a.md"}, headers=ADMIN)).json() == [
        {"path": "/fs/index.md", "title": None}
    ]
    await refused(client, hub, 400, "invalid_argument", "GET", f"{KB}/backlinks")
    lint = (await client.get(f"{KB}/lint", headers=ADMIN)).json()
    assert [(f["code"], f["path"]) for f in lint["findings"]] == [
        ("broken_link", "/fs/a.md"),
        ("missing_log", "/fs/log.md"),
    ]
    assert lint["findings"][0]["line"] >= 1
    await write(client, "log.md", "---\ntype: Reference\n---\n")
    assert (await client.get(f"{KB}/lint", params={"fresh": "1"}, headers=ADMIN)).json()["findings"][-1][
        "code"
    ] == "broken_link"
    await refused(client, hub, 400, "invalid_argument", "GET", f"{KB}/lint", params={"fresh": "maybe"})
    stats = (await client.get(f"{KB}/stats", headers=ADMIN)).json()
    assert (stats["pages"], stats["unverified"], stats["stale"], stats["last_change_by"]) == (4, 4, 0, "human")
    assert stats["needs_review"] == {"unverified": 4, "machine_confirmed": 0, "edited_since_review": 0, "total": 4}
    await refused(client, hub, 400, "invalid_argument", "GET", f"{KB}/stats", params={"fresh": "1"})


# -- action addresses (issue 28): no page takes an action's name, and only POST serves one -------------------


@pytest.mark.parametrize("action", ["review", "revert"])
async def test_an_action_address_is_405_for_every_other_method(client: HubClient, hub: Hub, action: str) -> None:
    await write(client, "notes/a.md", page("A"))
    for method in ("GET", "PUT", "DELETE"):
        for path in (f"notes/a.md/{action}", f"fs/notes/{action}", f"{action}"):
            kwargs: dict[str, Any] = {"json": {"content": page("X")}} if method == "PUT" else {}
            before = state(hub)
            r = await client.request(method, f"{KB}/pages/{path}", headers=ADMIN, **kwargs)
            assert r.status_code == 405, (method, path, r.text)
            assert r.headers["allow"] == "POST" and r.json()["code"] == "method_not_allowed"
            assert state(hub) == before


@pytest.mark.parametrize("action", ["review", "revert"])
async def test_a_page_named_like_an_action_is_refused_at_every_write(client: HubClient, hub: Hub, action: str) -> None:
    before = state(hub)
    for make, call in (
        (lambda: parse(KbWrite, {"project_id": "web", "path": f"/fs/notes/{action}", "content": "x"}), hub.kb.write),
        (
            lambda: parse(KbRevert, {"project_id": "web", "path": f"/fs/{action}", "version": "sha256:" + "0" * 64}),
            hub.kb.revert,
        ),
        (
            lambda: parse(
                KbPromote,
                {"project_id": "web", "to_path": f"/fs/a/{action}", "from_session_id": "s", "from_path": "/fs/x.md"},
            ),
            hub.kb.promote,
        ),
    ):
        with pytest.raises(HubError) as refused_:
            await call(Caller.admin(), make())
        assert refused_.value.code == "invalid_argument"
        assert "cannot be 'revert' or 'review'" in refused_.value.message
    assert state(hub) == before
    assert not (hub.data_dir / "kb" / "web.db").exists()  # nothing created either
    # MCP's brain_put to the project store and the CLI's import are thin adapters over this write.
    wrote = await write(client, f"notes/{action}.md", page("fine"))  # an extension makes it an ordinary name
    assert wrote["path"] == f"/fs/notes/{action}.md"


async def test_page_content_is_bounded_in_bytes_not_characters(client: HubClient, hub: Hub) -> None:
    """1 MiB is a byte limit: 600,000 'é' (1.2 MB as UTF-8, well under a million characters) is 413 at
    the request's own check, over JSON and as text, and nothing is stored."""
    wide = "é" * 600_000
    body = await refused(
        client, hub, 413, "payload_too_large", "PUT", f"{KB}/pages/notes/wide.md", json={"content": wide}
    )
    assert "bytes" in body["detail"]
    await refused(
        client, hub, 413, "payload_too_large", "PUT", f"{KB}/pages/notes/wide.md", content=wide.encode(), headers=MD
    )
    fits = "é" * (512 * 1024)  # exactly 1 MiB as UTF-8
    assert (await write(client, "notes/fits.md", fits))["size_bytes"] == 1024 * 1024
