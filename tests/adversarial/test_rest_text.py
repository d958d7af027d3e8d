"""Text edges: limits apply after trimming, and "one line" refuses every line separator.

Stored text is trimmed before its length is checked: at the limit with surrounding spaces it is
accepted and stored trimmed; one character over is refused and nothing is written. A one-line text
(a summary, an idempotency key, a session id) refuses every separator `str.splitlines` knows and NUL;
a label (a display name, a session name, a question option) refuses every control character.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson
import pytest

from hubcore.errors import HubError
from hubcore.hub import Hub
from tests.adversarial.rest_support import ALICE, seed, snapshot
from tests.harness import ADMIN, HubClient
from tests.requests import a_question, a_session_start

pytestmark = pytest.mark.anyio

PAD = " \t "  # surrounding whitespace: trimmed before any check

LINE_SEPARATORS = {
    "CR": "\r",
    "LF": "\n",
    "VT": "\x0b",
    "FF": "\x0c",
    "NEL": "\x85",
    "LS": "\u2028",
    "PS": "\u2029",
    "FS": "\x1c",
    "GS": "\x1d",
    "RS": "\x1e",
    "NUL": "\x00",
}
# A label also refuses the remaining controls; one-line text keeps them (a tab in a summary is fine).
LABEL_ONLY = {"TAB": "\t", "ESC": "\x1b", "DEL": "\x7f", "CSI": "\x9b", "BEL": "\x07"}


@pytest.fixture
async def ids(client: HubClient) -> dict[str, str]:
    return await seed(client)


@dataclass(frozen=True)
class Field:
    name: str
    method: str
    path: str
    body: Callable[[str], dict[str, Any]]
    member: str
    label: bool  # a label refuses every control character, one-line text only line separators and NUL
    ok: int = 200


FIELDS = [
    Field(
        "project create display_name",
        "POST",
        "/api/v1/projects",
        lambda v: {"id": "newp", "display_name": v},
        "display_name",
        True,
        201,
    ),
    Field("project rename", "PATCH", "/api/v1/projects/web", lambda v: {"display_name": v}, "display_name", True),
    Field(
        "agent display_name",
        "POST",
        "/api/v1/agents",
        lambda v: {"id": "carol", "display_name": v},
        "display_name",
        True,
        201,
    ),
    Field("idea summary", "POST", "/api/v1/projects/web/ideas", lambda v: {"summary": v}, "summary", False, 201),
    Field(
        "idea idempotency_key",
        "POST",
        "/api/v1/projects/web/ideas",
        lambda v: {"summary": "s", "idempotency_key": v},
        "idempotency_key",
        False,
        201,
    ),
    Field(
        "idea session_id",
        "POST",
        "/api/v1/projects/web/ideas",
        lambda v: {"summary": "s", "session_id": v},
        "session_id",
        False,
        201,
    ),
    Field(
        "answer idempotency_key",
        "POST",
        "/api/v1/questions/{question}/answer",
        lambda v: {"body": "yes", "idempotency_key": v},
        "idempotency_key",
        False,
    ),
    Field(
        "decision idempotency_key",
        "POST",
        "/api/v1/approvals/{approval}/decision",
        lambda v: {"decision": "approve", "idempotency_key": v},
        "idempotency_key",
        False,
    ),
]


@pytest.mark.parametrize("case", FIELDS, ids=[f.name for f in FIELDS])
async def test_one_line_fields_refuse_every_separator(client: HubClient, ids: dict[str, str], case: Field) -> None:
    path = case.path.format(**ids)
    refused = {**LINE_SEPARATORS, **(LABEL_ONLY if case.label else {})}
    faults: list[str] = []
    with client.db() as conn:
        for name, sep in refused.items():
            before = snapshot(conn)
            r = await client.request(case.method, path, json=case.body(f"a{sep}b"), headers=ADMIN)
            doc = r.json()
            if r.status_code != 400 or doc["code"] != "invalid_argument" or doc["details"]["field"] != case.member:
                faults.append(f"{name}: {r.status_code} {r.text[:200]}")
            elif snapshot(conn) != before:
                faults.append(f"{name}: the store changed")
    assert faults == []
    if not case.label:  # one-line text keeps a tab and other controls that break no line
        r = await client.request(case.method, path, json=case.body("a\tb\x1bc"), headers=ADMIN)
        assert r.status_code == case.ok, r.text


ServiceCall = Callable[[Hub, str], Any]
SERVICE_FIELDS: list[tuple[str, str, ServiceCall]] = [
    ("session name", "name", lambda hub, v: hub.sessions.start(ALICE, a_session_start("web", v))),
    (
        "question option",
        "options",
        lambda hub, v: hub.posts.question_post(ALICE, a_question(project_id="web", summary="Q?", options=[v, "b"])),
    ),
    (
        "question text",
        "summary",
        lambda hub, v: hub.posts.question_post(ALICE, a_question(project_id="web", summary=v)),
    ),
]


@pytest.mark.parametrize(
    ("call", "member"), [(c, m) for _, m, c in SERVICE_FIELDS], ids=[n for n, _, _ in SERVICE_FIELDS]
)
async def test_mcp_only_one_line_fields_refuse_every_separator(
    client: HubClient, ids: dict[str, str], call: ServiceCall, member: str
) -> None:
    """Fields only the MCP tools send, checked in the services those tools call."""
    label = member != "summary"
    refused = {**LINE_SEPARATORS, **(LABEL_ONLY if label else {})}
    with client.db() as conn:
        before = snapshot(conn)
        for name, sep in refused.items():
            with pytest.raises(HubError) as caught:
                await call(client.app.hub, f"a{sep}b")
            assert caught.value.code == "invalid_argument", name
            assert (caught.value.details or {}).get("field") == member, name
        assert snapshot(conn) == before


# -- limits after trimming -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Edge:
    name: str
    limit: int
    over: tuple[int, str]  # status and code one character over the limit
    send: Callable[[HubClient, dict[str, str], str], Any]  # -> the response
    stored: Callable[[HubClient, dict[str, str]], Any]  # -> the stored value


def payload_of(client: HubClient, sql: str, *args: str) -> dict[str, Any]:
    with client.db() as conn:
        row = conn.execute(sql, args).fetchone()
    return dict(orjson.loads(row[0])) if row else {}


def one(client: HubClient, sql: str, *args: str) -> Any:
    with client.db() as conn:
        row = conn.execute(sql, args).fetchone()
    return row[0] if row else None


EDGES = [
    Edge(
        "idea summary",
        1024,
        (413, "payload_too_large"),
        lambda c, ids, v: c.post("/api/v1/projects/web/ideas", json={"summary": v}, headers=ADMIN),
        lambda c, ids: one(c, "SELECT summary FROM events WHERE kind = 'idea' ORDER BY id DESC LIMIT 1"),
    ),
    Edge(
        "project display_name",
        200,
        (400, "invalid_argument"),
        lambda c, ids, v: c.post("/api/v1/projects", json={"id": "newp", "display_name": v}, headers=ADMIN),
        lambda c, ids: one(c, "SELECT display_name FROM projects WHERE id = 'newp'"),
    ),
    Edge(
        "project rename",
        200,
        (400, "invalid_argument"),
        lambda c, ids, v: c.patch("/api/v1/projects/web", json={"display_name": v}, headers=ADMIN),
        lambda c, ids: one(c, "SELECT display_name FROM projects WHERE id = 'web'"),
    ),
    Edge(
        "agent display_name",
        200,
        (400, "invalid_argument"),
        lambda c, ids, v: c.post("/api/v1/agents", json={"id": "carol", "display_name": v}, headers=ADMIN),
        lambda c, ids: one(c, "SELECT display_name FROM agents WHERE id = 'carol'"),
    ),
    Edge(
        "decision note",
        2000,
        (413, "payload_too_large"),
        lambda c, ids, v: c.post(
            f"/api/v1/approvals/{ids['approval']}/decision", json={"decision": "decline", "note": v}, headers=ADMIN
        ),
        lambda c, ids: payload_of(
            c, "SELECT payload FROM events WHERE thread_id = ? AND kind = 'answer'", ids["approval"]
        ).get("note"),
    ),
    Edge(
        "handoff",
        4096,
        (413, "payload_too_large"),
        lambda c, ids, v: c.post(f"/api/v1/sessions/{ids['session']}/end", json={"handoff": v}, headers=ADMIN),
        lambda c, ids: one(c, "SELECT handoff FROM sessions WHERE id = ?", ids["session"]),
    ),
]


@pytest.mark.parametrize("edge", EDGES, ids=[e.name for e in EDGES])
async def test_limits_apply_after_trimming(client: HubClient, ids: dict[str, str], edge: Edge) -> None:
    with client.db() as conn:
        before = snapshot(conn)
        over = await edge.send(client, ids, PAD + "y" * (edge.limit + 1) + PAD)
        assert over.status_code == edge.over[0], over.text
        assert over.json()["code"] == edge.over[1]
        assert snapshot(conn) == before  # refused: nothing written
    at_limit = "x" * edge.limit
    r = await edge.send(client, ids, PAD + at_limit + PAD)
    assert r.status_code in (200, 201), r.text
    assert edge.stored(client, ids) == at_limit


async def test_question_options_and_session_names_apply_their_limits_after_trimming(
    client: HubClient, ids: dict[str, str]
) -> None:
    """MCP-only fields: an 80-character option and a 100-character session name, padded."""
    hub: Hub = client.app.hub
    over: list[tuple[Callable[[], Any], str]] = [
        (
            lambda: hub.posts.question_post(
                ALICE, a_question(project_id="web", summary="Q?", options=[PAD + "o" * 81 + PAD, "b"])
            ),
            "options",
        ),
        (lambda: hub.sessions.start(ALICE, a_session_start("web", PAD + "n" * 101 + PAD)), "name"),
    ]
    with client.db() as conn:
        before = snapshot(conn)
        for call, member in over:
            with pytest.raises(HubError) as caught:
                await call()
            assert caught.value.code == "invalid_argument" and (caught.value.details or {})["field"] == member
        assert snapshot(conn) == before
    asked = await hub.posts.question_post(
        ALICE, a_question(project_id="web", summary="Q?", options=[PAD + "o" * 80 + PAD, " b "])
    )
    options = payload_of(client, "SELECT payload FROM events WHERE id = ?", asked["event_id"])["options"]
    assert options == ["o" * 80, "b"]
    started = await hub.sessions.start(ALICE, a_session_start("web", PAD + "n" * 100 + PAD))
    assert started["name"] == "n" * 100
    assert one(client, "SELECT name FROM sessions WHERE id = ?", started["session_id"]) == "n" * 100


async def test_a_summary_taken_from_a_body_never_carries_a_nul(client: HubClient, ids: dict[str, str]) -> None:
    del ids
    r = await client.post("/api/v1/projects/web/ideas", json={"body": "first\x00line\nsecond"}, headers=ADMIN)
    assert r.status_code == 400 and r.json()["details"]["field"] == "summary"
    r = await client.post("/api/v1/projects/web/ideas", json={"body": "  first line \u2028second"}, headers=ADMIN)
    assert r.status_code == 201
    assert one(client, "SELECT summary FROM events WHERE id = ?", r.json()["id"]) == "first line"


async def test_the_human_reads_the_refusals(client: HubClient, ids: dict[str, str]) -> None:
    """The messages name the member and the rule, so the human can correct the request."""
    del ids
    r = await client.post("/api/v1/projects", json={"id": "p", "display_name": "a\u2028b"}, headers=ADMIN)
    assert "display_name" in r.json()["detail"] and "one line" in r.json()["detail"]
