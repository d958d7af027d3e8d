"""Every body member of the enrolment routes, sent wrong: the wrong type, huge, blank, multi-line,
odd characters. Each is refused with the spec's code naming the member, never a 5xx, and the store
is exactly as it was before. Members nobody reads are ignored, whatever they hold."""

from __future__ import annotations

from typing import Any

import pytest

from tests.enrol.conftest import ask, fingerprint, from_peer
from tests.harness import ADMIN, HubClient
from tests.requests import nested

pytestmark = pytest.mark.anyio


WRONG_TYPES: list[Any] = [[], {}, 0, 12, False, True, 1e300, 2**70, nested(200), {"a": {"b": [1]}}]
HUGE = "x" * 1_000_000

BAD: dict[str, list[Any]] = {
    "display_name": [*WRONG_TYPES, None, "", "   ", "a\nb", "a\x1bb", "a\x00b", "n" * 201, HUGE],
    "why": [
        *WRONG_TYPES,
        None,
        "",
        " \t ",
        "line one\nline two",
        "bell\x07",
        "nul\x00",
        "nel\x85x",
        "w" * 200,
        " " + "w" * 200 + " ",
        "é" * 200,
        HUGE,
    ],
    "suggested_id": [*WRONG_TYPES, "", "Scout", "scout_1", "-scout", "scout\n", "a" * 58, "space scout", "scöut", HUGE],
}


@pytest.mark.parametrize("member", sorted(BAD))
async def test_every_member_refuses_wrong_types_and_huge_values(client: HubClient, member: str) -> None:
    before = fingerprint(client)
    for value in BAD[member]:
        r = await client.post("/api/v1/enrol", json={**ask(suggested_id="scout"), member: value})
        assert r.status_code == 400, (member, repr(value)[:60], r.status_code)
        problem = r.json()
        assert problem["code"] == "invalid_argument" and problem["details"]["field"] == member, problem
        if isinstance(value, str) and len(value) > 1000:
            assert value not in r.text  # a refusal names the member, never echoes its value
    assert fingerprint(client) == before


async def test_the_limits_at_their_edges(client: HubClient) -> None:
    peers = iter(f"192.0.2.{n}" for n in range(1, 50))
    ok = [
        ask("n" * 200, why="w" * 199),
        ask("Emoji", why="🦊" * 199),
        ask("Trimmed", why="  " + "w" * 199 + "  "),
        ask("Id", suggested_id="a" * 57),
    ]
    for body in ok:
        async with from_peer(client, next(peers)) as http:
            r = await http.post("/api/v1/enrol", json=body)
            assert r.status_code == 202, (body, r.text)
    with client.db() as conn:
        notes = [row[0] for row in conn.execute("SELECT enrol_note FROM agents ORDER BY created_at, id")]
    assert sorted(map(len, notes)) == [len(ask()["why"]), 199, 199, 199]


async def test_members_nobody_reads_are_ignored(client: HubClient) -> None:
    body = {
        **ask(suggested_id="scout"),
        "status": "active",
        "admin": True,
        "token": "hub_mine",
        "id": "root",
        "agent_id": "hub",
        "project_id": "web",
        "extra": HUGE[:100_000],
        "nested": nested(200),
    }
    r = await client.post("/api/v1/enrol", json=body)
    assert r.status_code == 202, r.text
    assert r.json()["agent_id"] == "scout" and r.json()["token"] != "hub_mine"
    with client.db() as conn:
        assert [tuple(row) for row in conn.execute("SELECT id, status FROM agents")] == [("scout", "pending")]
        payload = conn.execute("SELECT payload FROM events WHERE kind = 'enrol_request'").fetchone()[0]
    assert "extra" not in payload and "hub_mine" not in payload


async def test_a_body_that_is_not_an_object_or_not_json(client: HubClient) -> None:
    before = fingerprint(client)
    for content, media in [
        (b"[]", "application/json"),
        (b'"x"', "application/json"),
        (b"{", "application/json"),
        (b"", "application/json"),
        (b"\xff\xfe", "application/json"),
        (b'{"display_name": "A", "why": "b"}', "text/plain"),
    ]:
        r = await client.post("/api/v1/enrol", content=content, headers={"Content-Type": media})
        assert r.status_code in (400, 415) and r.json()["code"] == "invalid_argument", (content, r.status_code)
    r = await client.post(
        "/api/v1/enrol",
        content=b'{"why": "' + b"x" * (4 * 1024 * 1024) + b'"}',
        headers={"Content-Type": "application/json"},
    )
    assert r.status_code == 413 and r.json()["code"] == "payload_too_large"
    assert fingerprint(client) == before


async def test_the_decision_routes_note(client: HubClient) -> None:
    await client.post("/api/v1/enrol", json=ask(suggested_id="scout"))
    before = fingerprint(client)
    for value in [[], {}, 0, False, 1e300, nested(200)]:
        r = await client.post("/api/v1/enrol/scout/approve", json={"note": value}, headers=ADMIN)
        assert r.status_code == 400 and r.json()["details"]["field"] == "note", (value, r.text)
    r = await client.post("/api/v1/enrol/scout/refuse", json={"note": "n" * 2001}, headers=ADMIN)
    assert r.status_code == 413 and r.json()["code"] == "payload_too_large"
    for path in ("/api/v1/enrol/Scout/approve", "/api/v1/enrol/nobody/approve", "/api/v1/enrol/hub/refuse"):
        r = await client.post(path, headers=ADMIN)
        assert r.status_code in (400, 404), (path, r.status_code)
    r = await client.post("/api/v1/enrol/scout/approve", json={"note": "x", "other": 1}, headers=ADMIN)
    assert r.status_code == 400 and r.json()["details"]["field"] == "other"
    assert fingerprint(client) == before
    r = await client.post("/api/v1/enrol/scout/refuse", json={"note": "n" * 2000}, headers=ADMIN)
    assert r.status_code == 200
