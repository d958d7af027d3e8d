"""The prune and undo routes check their input like every typed route, and a refusal prunes nothing.

They take only their path: a query parameter or body member of any kind (a `project_id` that would
seem to narrow a prune-all included) is a 400 naming it; a path id of the wrong form or a huge one
is a 400 naming its member; the store is exactly as before each refusal, with ended sessions there
to prune, and the valid request then goes through.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.adversarial.rest_support import ALICE, seed, snapshot
from tests.foundation.test_gate import assert_problem
from tests.harness import ADMIN, HubClient
from tests.requests import a_session_end

pytestmark = pytest.mark.anyio

HUGE = "s" * 60_000  # under httpx's URL limit (65,536), far over any id


@pytest.fixture
async def ids(client: HubClient) -> dict[str, str]:
    """The seed, with alice's second session ended (something to prune) and one prune to undo."""
    made = await seed(client)
    hub = client.app.hub
    await hub.sessions.end(ALICE, a_session_end(session_id=made["other"]))
    await hub.sessions.end(ALICE, a_session_end(session_id=made["session"]))
    r = await client.delete(f"/api/v1/storage/sessions/{made['session']}", headers=ADMIN)
    assert r.status_code == 200, r.text
    return {**made, "undo": r.json()["pruned"][0]["undo_token"]}


ROUTES = {
    "prune one": ("DELETE", "/api/v1/storage/sessions/{other}"),
    "prune project": ("DELETE", "/api/v1/storage/projects/web/sessions"),
    "prune all": ("DELETE", "/api/v1/storage/sessions"),
    "undo": ("POST", "/api/v1/prune/undo/{undo}"),
}
# A route's path member: its value is the path's whatever else names it, as on every route.
PATH_MEMBER = {"prune one": "session_id", "prune project": "project_id", "undo": "token"}
# (what is sent, the member the refusal names)
EXTRAS: list[tuple[str, dict[str, Any], str]] = [
    ("a query parameter", {"params": {"project_id": "web"}}, "project_id"),
    ("an unknown query parameter", {"params": {"force": "1"}}, "force"),
    ("a body member", {"json": {"project_id": "web"}}, "project_id"),
    ("an unknown body member", {"json": {"dry_run": True}}, "dry_run"),
    ("a body member of a wrong type", {"json": {"session_id": [1, 2]}}, "session_id"),
    ("a huge body member", {"json": {"note": HUGE}}, "note"),
]
BAD_PATHS = [
    ("prune one", "/api/v1/storage/sessions/" + HUGE, "session_id"),
    ("prune project", "/api/v1/storage/projects/Not_A_Slug/sessions", "project_id"),
    ("prune project", "/api/v1/storage/projects/" + "p" * 64 + "/sessions", "project_id"),
    ("undo", "/api/v1/prune/undo/" + HUGE, "token"),
    ("undo", "/api/v1/prune/undo/too-short", "token"),
]


def refusal_names(r: Any, member: str) -> None:
    doc = assert_problem(r, 400, "invalid_argument")
    assert doc["details"]["field"] == member and member in doc["detail"], doc


@pytest.mark.parametrize("route", ROUTES, ids=list(ROUTES))
async def test_a_prune_takes_nothing_but_its_path(client: HubClient, ids: dict[str, str], route: str) -> None:
    method, path = ROUTES[route]
    with client.db() as conn:
        for label, extra, member in EXTRAS:
            if PATH_MEMBER.get(route) == member:
                continue
            before = snapshot(conn)
            r = await client.request(method, path.format(**ids), headers=ADMIN, **extra)
            refusal_names(r, member)
            assert snapshot(conn) == before, label
    # Nothing above was the route's own doing: the plain request goes through.
    r = await client.request(method, path.format(**ids), headers=ADMIN)
    assert r.status_code == 200, r.text
    if route != "undo":
        assert r.json()["count"] == 1


@pytest.mark.parametrize(("route", "path", "member"), BAD_PATHS, ids=[f"{r} {m} {p[-12:]}" for r, p, m in BAD_PATHS])
async def test_a_path_id_of_the_wrong_form_is_refused_naming_it(
    client: HubClient, ids: dict[str, str], route: str, path: str, member: str
) -> None:
    method, _ = ROUTES[route]
    with client.db() as conn:
        before = snapshot(conn)
        refusal_names(await client.request(method, path, headers=ADMIN), member)
        assert snapshot(conn) == before


async def test_a_body_that_is_not_an_object_is_refused(client: HubClient, ids: dict[str, str]) -> None:
    with client.db() as conn:
        before = snapshot(conn)
        for method, path in ROUTES.values():
            for raw in (b"[]", b'"web"', b"null", b"1"):
                r = await client.request(
                    method, path.format(**ids), content=raw, headers={**ADMIN, "Content-Type": "application/json"}
                )
                assert_problem(r, 400, "invalid_argument")
        assert snapshot(conn) == before
