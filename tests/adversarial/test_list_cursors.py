"""The listing cursors issue 25 added (`GET /inbox` `cursor`/`order`/`settled`, the artifact
listings' `cursor`): hostile values are a 400 `invalid_argument`, never a 5xx, and write nothing;
the agent token reads the artifact listing with the same refusals."""

from __future__ import annotations

import pytest

from tests.adversarial.rest_support import seed, snapshot
from tests.harness import ADMIN, HubClient

pytestmark = pytest.mark.anyio

HOSTILE = [
    "\x00",
    "%00",
    "n.\u202e01J0000000000000000000000",
    "n." + "Z" * 26,
    "o.01J0000000000000000000000",
    "d.01J0000000000000000000000.-",
    "d.01J0000000000000000000000.1e309",
    "d.01J0000000000000000000000.0x10",
    "n.01J0000000000000000000000.",
    "🙂" * 30,
    "n." + "0" * 79,
    "1.0~01j0000000000000000000000\n",
    "1e400~01j0000000000000000000000",
    "-0.0~01j000000000000000000000z",
]
ROUTES = [
    ("/api/v1/inbox", {}),
    ("/api/v1/inbox", {"order": "deadline"}),
    ("/api/v1/inbox", {"order": "oldest", "settled": "1"}),
    ("/api/v1/artifacts", {}),
    ("/api/v1/projects/web/artifacts", {}),
]


@pytest.mark.parametrize(("route", "base"), ROUTES, ids=[f"{r}{b}" for r, b in ROUTES])
@pytest.mark.parametrize("value", HOSTILE)
async def test_a_hostile_cursor_is_refused_and_writes_nothing(
    client: HubClient, route: str, base: dict[str, str], value: str
) -> None:
    await seed(client)
    with client.db() as conn:
        before = snapshot(conn)
    r = await client.get(route, params={**base, "cursor": value}, headers=ADMIN)
    assert r.status_code == 400, (route, value, r.status_code, r.text)
    assert r.json()["code"] == "invalid_argument"
    with client.db() as conn:
        assert snapshot(conn) == before


@pytest.mark.parametrize(
    "query",
    [
        "cursor=a&cursor=b",
        "order=",
        "order=NEWEST",
        "order=deadline%00",
        "settled=2",
        "settled=true&status=unread",
        "limit=501&cursor=n.x",
    ],
)
async def test_inbox_query_shapes(client: HubClient, query: str) -> None:
    await seed(client)
    r = await client.get(f"/api/v1/inbox?{query}", headers=ADMIN)
    # An empty value is a value like any other (hubhttp.api.query): `order=` names no order.
    assert r.status_code == 400 and r.json()["code"] == "invalid_argument", (query, r.text)
