"""A pending token is refused by every ordinary route, REST and /mcp, with a response
byte-identical to an unknown token's: nothing tells a caller that a token is waiting for the human.
The walk reads the app's URL map, so a route added tomorrow is covered the day it lands."""

from __future__ import annotations

import orjson
import pytest

from hubcore.tokens import new_token
from tests.adversarial.test_route_walk import Answer, call, routes, scope_for
from tests.enrol.conftest import ask, fingerprint
from tests.harness import ADMIN, HubClient
from tests.mcp.live import initialize

pytestmark = pytest.mark.anyio

STATUS_POLL = "/api/v1/enrol/status"  # the one route that reads a pending token


def same(path: str, a: Answer, b: Answer) -> bool:
    if path == "/readyz" and a.body and b.body:  # free space on the volume moves between two reads
        a_body, b_body = (orjson.loads(x.body) for x in (a, b))
        a_body.pop("free_bytes"), b_body.pop("free_bytes")
        return (a.status, a_body) == (b.status, b_body)
    return (a.status, a.headers, a.body) == (b.status, b.headers, b.body)


async def test_every_route_answers_a_pending_token_as_an_unknown_one(client: HubClient) -> None:
    pending = (await client.post("/api/v1/enrol", json=ask(suggested_id="waiting"))).json()["token"]
    unknown = new_token()  # same shape and length as a real one
    await client.make_project("walk-x")
    extra = [
        ("GET", "/api/v1/projects/space-waiting"),
        ("GET", "/api/v1/inbox"),
        ("GET", "/api/v1/stream"),
        ("POST", "/api/v1/enrol/waiting/approve"),
        ("GET", "/api/v1/projects/space-waiting/feed"),
    ]
    walk = [(r.method, r.path) for r in routes(client) if r.path != STATUS_POLL] + extra
    assert len(walk) > 60 and ("POST", "/mcp") in walk and ("GET", "/api/v1/projects") in walk
    before = fingerprint(client)
    differ, refused = [], 0
    for method, path in walk:
        with_pending = await call(client, scope_for(method, path, pending))
        with_unknown = await call(client, scope_for(method, path, unknown))
        if not same(path, with_pending, with_unknown):
            differ.append(f"{method} {path}: {with_pending.status} vs {with_unknown.status}")
        refused += with_pending.status == 401
    assert differ == []
    assert refused > 50  # most routes need a token: each refused it, and identically
    assert fingerprint(client) == before  # and no request wrote anything (no last-seen either)


async def test_mcp_initialize_refuses_a_pending_token_as_an_unknown_one(client: HubClient) -> None:
    pending = (await client.post("/api/v1/enrol", json=ask())).json()["token"]
    init = initialize("2025-06-18")
    headers = {"Accept": "application/json, text/event-stream"}
    answers = [
        await client.post("/mcp", json=init, headers={**headers, "Authorization": f"Bearer {token}"})
        for token in (pending, new_token())
    ]
    assert answers[0].status_code == answers[1].status_code == 401
    assert answers[0].content == answers[1].content
    assert dict(answers[0].headers) == dict(answers[1].headers)
    # Once admitted, the very same token is an agent's.
    assert (await client.post("/api/v1/enrol/scout/approve", headers=ADMIN)).status_code == 200
    r = await client.post("/mcp", json=init, headers={**headers, "Authorization": f"Bearer {pending}"})
    assert r.status_code == 200, r.text
