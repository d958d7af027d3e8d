"""What the OpenAPI document forbids, the server refuses (issue 28 part 3), each class of input
the document was tightened on: a 400 `invalid_argument` (or a 405 naming POST), and nothing stored.

- an empty query value is a value (`since=`, `project=`, `q=`, `order=`, `status=`), not "absent";
- a flag is spelled true/1 or false/0, lowercase, on every route (`hubhttp.api.query`);
- a query parameter given twice, or one the route does not take, is refused naming it;
- a path value holds no control character (C0, DEL, C1) and no line separator (U+2028, U+2029);
  nor does a page or brain path on any surface;
- an action's address (`.../review`, `.../revert`) under any other method is 405 with `Allow: POST`;
- a kind filter separates kinds by commas only; the brains route reads only the session store.
"""

from __future__ import annotations

from typing import Any

import pytest

from hubcore.services.kb import models as kb
from hubcore.services.requests import parse
from tests.adversarial.rest_support import HUMAN, seed, snapshot
from tests.harness import ADMIN, HubClient

pytestmark = pytest.mark.anyio


async def refused(client: HubClient, method: str, url: str, *, status: int = 400, **kwargs: Any) -> dict[str, Any]:
    """`method url` answers `status` (400: `invalid_argument`) and hub.db is as it was."""
    with client.db() as conn:
        before = snapshot(conn)
    r = await client.request(method, url, headers={**ADMIN, **kwargs.pop("headers", {})}, **kwargs)
    assert r.status_code == status, (method, url, r.status_code, r.text)
    body: dict[str, Any] = r.json()
    if status == 400:
        assert body["code"] == "invalid_argument", body
    with client.db() as conn:
        assert snapshot(conn) == before, (method, url)
    return body


EMPTY = [
    "/api/v1/feed?since=",
    "/api/v1/projects/web/feed?since=",
    "/api/v1/projects/web/feed?before=",
    "/api/v1/sessions?project=",
    "/api/v1/inbox?project=",
    "/api/v1/inbox?status=",
    "/api/v1/inbox?order=",
    "/api/v1/inbox?cursor=",
    "/api/v1/search?q=",
    "/api/v1/search?q=%20%09",
    "/api/v1/artifacts?project=",
    "/api/v1/projects/web/artifacts?session_id=",
    "/api/v1/projects/web/kb/history?actor=",
    "/api/v1/sessions?limit=",
    "/api/v1/enrol/status?wait=",
]


@pytest.mark.parametrize("url", EMPTY)
async def test_an_empty_query_value_is_refused_not_read_as_absent(client: HubClient, url: str) -> None:
    await seed(client)
    await refused(client, "GET", url)


async def test_a_refused_empty_since_leaves_the_feed_cursor_where_it_was(client: HubClient) -> None:
    """A project feed read with `since` advances the caller's cursor: `since=` must move nothing."""
    await seed(client)
    await refused(client, "GET", "/api/v1/projects/web/feed?since=")
    r = await client.get("/api/v1/projects/web/feed", headers=ADMIN)
    assert r.status_code == 200 and r.json()["last_seen"] is None


FLAG_ROUTES = [
    "/api/v1/inbox?unread_only={}",
    "/api/v1/inbox?settled={}",
    "/api/v1/artifacts/nothing-here?live={}",
    "/api/v1/projects/web/kb/pages?meta={}",
    "/api/v1/projects/web/kb/lint?fresh={}",
]


@pytest.mark.parametrize("route", FLAG_ROUTES)
@pytest.mark.parametrize("spelling", ["yes", "no", "TRUE", "False", "", "2", "on", "t"])
async def test_a_flag_in_another_spelling_is_refused_on_every_route(
    client: HubClient, route: str, spelling: str
) -> None:
    await seed(client)
    body = await refused(client, "GET", route.format(spelling))
    assert body["details"]["field"] in route


@pytest.mark.parametrize("route", FLAG_ROUTES)
@pytest.mark.parametrize("spelling", ["true", "1", "false", "0"])
async def test_the_one_flag_spelling_is_read_on_every_route(client: HubClient, route: str, spelling: str) -> None:
    await seed(client)
    r = await client.get(route.format(spelling), headers=ADMIN)
    assert r.status_code in (200, 404), r.text  # the artifact does not exist: its 404, past the query
    if r.status_code == 404:
        assert "nothing-here" in route


async def test_the_document_states_the_one_flag_spelling(client: HubClient) -> None:
    doc = (await client.get("/api/v1/openapi.json")).json()
    flags = {
        (path, p["name"]): p["schema"]
        for path, ops in doc["paths"].items()
        for op in ops.values()
        for p in op["parameters"]
        if p["in"] == "query" and p["name"] in ("live", "meta", "rendered", "fresh", "settled", "unread_only")
    }
    assert len(flags) == 7
    assert all(schema["enum"] == ["true", "1", "false", "0"] for schema in flags.values()), flags


@pytest.mark.parametrize(
    "url",
    [
        "/api/v1/sessions?limit=1&limit=2",
        "/api/v1/feed?since=&since=",
        "/api/v1/inbox?status=read&status=unread",
        "/api/v1/search?q=a&q=b",
        "/api/v1/inbox?colour=red",
        "/api/v1/sessions?colour=red",
        "/api/v1/storage/sessions?session_id=x",
        "/api/v1/sessions/nope/brain?session_id=other",
        "/api/v1/enrol/status?colour=red",
    ],
)
async def test_a_repeated_or_unknown_query_parameter_is_refused(client: HubClient, url: str) -> None:
    await seed(client)
    method = "DELETE" if "/storage/" in url else "GET"
    await refused(client, method, url)


LINE_BREAKERS = ["%C2%85", "%C2%9F", "%C2%80", "%E2%80%A8", "%E2%80%A9", "%7F", "%1B"]


@pytest.mark.parametrize("char", LINE_BREAKERS)
async def test_a_path_value_with_a_control_character_or_line_separator_is_refused(client: HubClient, char: str) -> None:
    ids = await seed(client)
    await refused(client, "GET", f"/api/v1/sessions/{ids['session']}{char}")
    await refused(client, "DELETE", f"/api/v1/artifacts/a{char}b")
    await refused(client, "PUT", f"/api/v1/projects/web/kb/pages/notes{char}.md", json={"content": "x"})
    r = await client.get("/api/v1/projects/web/kb/pages", headers=ADMIN)
    assert r.status_code == 200 and r.json()["entries"] == []


@pytest.mark.parametrize("char", ["\x85", "\u2028", "\u2029", "\x9b"])
async def test_no_surface_writes_a_page_whose_path_breaks_a_line(client: HubClient, char: str) -> None:
    """The service refuses what the URL cannot carry, so no page exists that REST cannot reach."""
    await seed(client)
    with pytest.raises(Exception) as caught:
        await client.app.hub.kb.write(
            HUMAN, parse(kb.KbWrite, {"project_id": "web", "path": f"/fs/a{char}b.md", "content": "x"})
        )
    assert getattr(caught.value, "code", None) == "invalid_argument"
    r = await client.get("/api/v1/projects/web/kb/pages", headers=ADMIN)
    assert r.json()["entries"] == []


@pytest.mark.parametrize("action", ["review", "revert"])
@pytest.mark.parametrize("method", ["GET", "PUT", "PATCH", "DELETE", "OPTIONS"])
async def test_an_action_address_under_another_method_is_405_naming_post_alone(
    client: HubClient, action: str, method: str
) -> None:
    await seed(client)
    r = await client.put("/api/v1/projects/web/kb/pages/a.md", json={"content": "# A\n"}, headers=ADMIN)
    assert r.status_code == 200, r.text
    kwargs = {"json": {"content": "x"}} if method in ("PUT", "PATCH") else {}
    with client.db() as conn:
        before = snapshot(conn)
    r = await client.request(method, f"/api/v1/projects/web/kb/pages/a.md/{action}", headers=ADMIN, **kwargs)
    assert r.status_code == 405 and r.headers["Allow"] == "POST", (r.status_code, r.headers, r.text)
    with client.db() as conn:
        assert snapshot(conn) == before
    page = await client.get("/api/v1/projects/web/kb/pages/a.md", headers=ADMIN)
    assert page.json()["content"] == "# A\n"


@pytest.mark.parametrize("kinds", ["idea system", "idea\tsystem", "idea;system", " ", ",", "idea,,nope"])
async def test_a_kind_filter_separates_kinds_by_commas_only(client: HubClient, kinds: str) -> None:
    await seed(client)
    await refused(client, "GET", "/api/v1/feed", params={"kind": kinds})


@pytest.mark.parametrize("query", ["kind=idea&kind=", "kind=idea&kind=%20question", "kind=idea&kind=idea,question"])
async def test_a_repeated_kind_names_one_kind_each(client: HubClient, query: str) -> None:
    await seed(client)
    await refused(client, "GET", f"/api/v1/feed?{query}")
    r = await client.get("/api/v1/feed?kind=idea&kind=question", headers=ADMIN)
    assert r.status_code == 200 and {e["kind"] for e in r.json()["events"]} == {"idea", "question"}


async def test_a_kind_filter_with_blanks_around_commas_is_read(client: HubClient) -> None:
    await seed(client)
    r = await client.get("/api/v1/feed", params={"kind": " idea , ,question "}, headers=ADMIN)
    assert r.status_code == 200 and {e["kind"] for e in r.json()["events"]} <= {"idea", "question"}


async def test_the_brains_route_reads_only_the_session_store(client: HubClient) -> None:
    ids = await seed(client)
    await refused(client, "GET", f"/api/v1/sessions/{ids['session']}/brain?store=project")
    r = await client.get(f"/api/v1/sessions/{ids['session']}/brain?store=session", headers=ADMIN)
    assert r.status_code == 200, r.text


async def test_a_nested_null_reads_as_the_members_default(client: HubClient) -> None:
    """`null` for a member the model knows is its default at every depth, as the document says."""
    ids = await seed(client)
    r = await client.patch(
        f"/api/v1/push/devices/{ids['device']}",
        json={"filters": {"kinds": ["idea"], "content": None, "min_priority": None}},
        headers=ADMIN,
    )
    assert r.status_code == 200, r.text
    assert r.json()["filters"]["content"] == "full" and r.json()["filters"]["min_priority"] == "low"
