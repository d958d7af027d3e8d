"""Wrong types never reach a 500 or widen an action.

A walk over every REST route that takes a body and every member it reads: each member, sent with
each value of the wrong type for it, is a 400 `invalid_argument` naming the member (in the detail
and in `details.field`), never a 5xx, and the store is exactly as it was before the request.
`null` for an optional member reads as absent, so it is walked only for required members.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from hubcore.errors import HubError
from hubcore.hub import Hub
from tests.adversarial.rest_support import ALICE, HUMAN, seed, snapshot, subscription
from tests.foundation.test_gate import assert_problem
from tests.harness import ADMIN, HubClient
from tests.requests import (
    a_decision,
    a_question,
    a_read_all,
    a_seen,
    a_session_end,
    a_session_start,
    an_answer,
    nested,
)

pytestmark = pytest.mark.anyio

# Every wrong-type value the walk sends; a member lists the ones that are right for it.
WRONG: dict[str, Any] = {
    "list": [],
    "object": {},
    "blank": "",
    "zero": 0,
    "false": False,
    "null": None,
    "huge_float": 1e300,
    "int70": 2**70,  # arrives as a float over JSON: orjson reads integers past 64 bits so
    "deep": nested(200),
    "nested_object": {"a": {"b": {"c": [1, 2, 3]}}},
    "number_string": "12",
}


@dataclass(frozen=True)
class Member:
    name: str
    accepts: frozenset[str] = frozenset()  # WRONG keys this member accepts (not walked)

    @classmethod
    def required(cls, name: str, *accepts: str) -> Member:
        """A string member that must be present ("12" is a string like any other)."""
        return cls(name, frozenset({"number_string", *accepts}))

    @classmethod
    def optional(cls, name: str, *accepts: str) -> Member:
        return cls(name, frozenset({"null", "number_string", *accepts}))

    @classmethod
    def word(cls, name: str, *accepts: str) -> Member:
        """A boolean or a choice among fixed words: "12" is wrong too."""
        return cls(name, frozenset(accepts))


@dataclass(frozen=True)
class Route:
    name: str
    method: str
    path: str  # formatted with the fixture's ids
    body: dict[str, Any]  # a valid body: sent last, it must succeed
    members: tuple[Member, ...]
    ok: int = 200
    extra: dict[str, Member] = field(default_factory=dict)  # members walked that the valid body leaves out


ROUTES = [
    Route(
        "agent create",
        "POST",
        "/api/v1/agents",
        {"id": "carol", "display_name": "Carol"},
        (Member.required("id"), Member.optional("display_name")),
        ok=201,
    ),
    Route(
        "grant", "POST", "/api/v1/agents/alice/grants", {"project_id": "web"}, (Member.required("project_id"),), ok=201
    ),
    Route(
        "project create",
        "POST",
        "/api/v1/projects",
        {"id": "newp", "display_name": "New", "confidential": False, "artifact_password_policy": "off"},
        (
            Member.required("id"),
            Member.optional("display_name"),
            Member.word("confidential", "null", "false"),
            Member.word("artifact_password_policy", "null"),
        ),
        ok=201,
    ),
    Route(
        "project update",
        "PATCH",
        "/api/v1/projects/web",
        {"display_name": "Web two", "artifact_password_policy": "required", "confidential": True},
        (
            Member.optional("display_name"),
            Member.word("artifact_password_policy", "null"),
            Member.word("confidential", "null", "false"),
        ),
        extra={"id": Member.word("id")},
    ),  # a body carrying an id is refused, null included
    Route(
        "feed seen", "POST", "/api/v1/projects/web/feed/seen", {"event_id": "{idea}"}, (Member.optional("event_id"),)
    ),  # a string naming no event: advanced false
    Route(
        "idea",
        "POST",
        "/api/v1/projects/web/ideas",
        {
            "summary": "An idea",
            "body": "the longer text",
            "payload": {"k": 1},
            "session_id": "{session}",
            "idempotency_key": "idea-1",
        },
        (
            Member.optional("summary", "blank"),  # a blank summary falls back to the body
            Member.optional("body", "blank"),
            Member.word("payload", "null", "object", "nested_object"),
            Member.optional("session_id"),
            Member.optional("idempotency_key"),
        ),
        ok=201,
    ),
    Route(
        "read all", "POST", "/api/v1/inbox/read-all", {"project_id": "web"}, (Member.optional("project_id"),)
    ),  # "12" is a project id (no such project: marks 0)
    Route(
        "answer",
        "POST",
        "/api/v1/questions/{question}/answer",
        {"body": "Yes", "idempotency_key": "ans-1"},
        (Member.required("body"), Member.optional("idempotency_key")),
    ),
    Route(
        "decision",
        "POST",
        "/api/v1/approvals/{approval}/decision",
        {"decision": "approve", "note": "fine", "idempotency_key": "dec-1"},
        (
            Member.word("decision"),
            Member.optional("note", "blank"),  # a blank note means none
            Member.optional("idempotency_key"),
        ),
    ),
    Route(
        "session end",
        "POST",
        "/api/v1/sessions/{session}/end",
        {"handoff": "notes"},
        (Member.optional("handoff", "blank"),),
    ),  # a blank handoff means none
    Route(
        "session reassign", "POST", "/api/v1/sessions/{other}/reassign", {"agent": "bob"}, (Member.required("agent"),)
    ),
    # Push: a member that is an object is named itself only when it is not one (inside it, the
    # member at fault is named: `keys.p256dh`, `filters.a`).
    Route(
        "push device",
        "POST",
        "/api/v1/push/devices",
        {**subscription("http://127.0.0.1:9/walk"), "filters": {"kinds": ["idea"], "projects": ["nowhere"]}},
        (
            Member.required("name"),
            Member("endpoint"),
            Member("keys", frozenset({"object", "nested_object"})),
            Member.word("filters", "null", "object", "nested_object"),
        ),
        ok=201,
    ),
    Route(
        "push device update",
        "PATCH",
        "/api/v1/push/devices/{device}",
        {"name": "Tablet", "filters": {"content": "contentless"}},
        (Member.optional("name"), Member.word("filters", "null", "object", "nested_object")),
    ),
    Route("push act", "POST", "/api/v1/push/act", {"cap": "{cap}"}, (Member.required("cap"),)),
]


@pytest.fixture
async def ids(client: HubClient) -> dict[str, str]:
    return await seed(client)


def fill(value: Any, ids: dict[str, str]) -> Any:
    return value.format(**ids) if isinstance(value, str) else value


async def send(client: HubClient, route: Route, ids: dict[str, str], **kwargs: Any) -> Any:
    kwargs.setdefault("headers", ADMIN)
    return await client.request(route.method, fill(route.path, ids), **kwargs)


def refused_as(r: Any, member: str) -> str | None:
    """None when `r` is the refusal the walk expects, else what was wrong."""
    if r.status_code != 400:
        return f"status {r.status_code}: {r.text[:200]}"
    doc = r.json()
    if doc.get("code") != "invalid_argument":
        return f"code {doc.get('code')}"
    if (doc.get("details") or {}).get("field") != member or member not in doc["detail"]:
        return f"does not name {member}: {doc}"
    return None


@pytest.mark.parametrize("route", ROUTES, ids=[r.name for r in ROUTES])
async def test_every_member_refuses_every_wrong_type(client: HubClient, ids: dict[str, str], route: Route) -> None:
    base = {k: fill(v, ids) for k, v in route.body.items()}
    walked = [*route.members, *route.extra.values()]
    faults: list[str] = []
    with client.db() as conn:
        for member in walked:
            for label, value in WRONG.items():
                if label in member.accepts:
                    continue
                before = snapshot(conn)
                r = await send(client, route, ids, json={**base, member.name: value})
                fault = refused_as(r, member.name)
                if fault is None and snapshot(conn) != before:
                    fault = "the store changed"
                if fault is not None:
                    faults.append(f"{member.name}={label}: {fault}")
    assert faults == []
    # The valid body goes through: each refusal above was the member's doing alone.
    r = await send(client, route, ids, json=base)
    assert r.status_code == route.ok, r.text


NOT_OBJECTS = [b"[]", b'"text"', b"1", b"true", b"null", b"[" * 2000 + b"]" * 2000, b"{", b"1e999"]


@pytest.mark.parametrize("route", ROUTES, ids=[r.name for r in ROUTES])
async def test_a_body_that_is_not_a_json_object_is_refused(
    client: HubClient, ids: dict[str, str], route: Route
) -> None:
    with client.db() as conn:
        before = snapshot(conn)
        for raw in NOT_OBJECTS:
            r = await send(client, route, ids, content=raw, headers={**ADMIN, "Content-Type": "application/json"})
            assert_problem(r, 400, "invalid_argument")
        assert snapshot(conn) == before


@pytest.mark.parametrize("value", [[], {}, "", 0, False, 1e300, 2**70])
async def test_read_all_with_a_wrong_project_id_marks_nothing(
    client: HubClient, ids: dict[str, str], value: Any
) -> None:
    """The defect: `{"project_id": []}` (or {}, "", 0, false) marked every project's items read."""
    r = await client.post("/api/v1/inbox/read-all", json={"project_id": value}, headers=ADMIN)
    doc = assert_problem(r, 400, "invalid_argument")
    assert doc["details"]["field"] == "project_id"
    with client.db() as conn:
        assert conn.execute("SELECT status FROM inbox WHERE event_id = ?", (ids["idea"],)).fetchone()[0] == "unread"


async def test_read_all_with_null_or_no_project_marks_every_project(client: HubClient, ids: dict[str, str]) -> None:
    r = await client.post("/api/v1/inbox/read-all", json={"project_id": None}, headers=ADMIN)
    assert r.status_code == 200 and r.json() == {"marked": 1}


@pytest.mark.parametrize("value", [[], {}, "", 0, False, None, 1e300, "approved"])
async def test_a_decision_of_the_wrong_type_is_refused_not_a_500(
    client: HubClient, ids: dict[str, str], value: Any
) -> None:
    """The defect: `{"decision": []}` was a 500 (an unhashable value reached a dict lookup)."""
    r = await client.post(f"/api/v1/approvals/{ids['approval']}/decision", json={"decision": value}, headers=ADMIN)
    doc = assert_problem(r, 400, "invalid_argument")
    assert doc["details"]["field"] == "decision" and "decision" in doc["detail"]
    with client.db() as conn:
        status = conn.execute("SELECT status FROM inbox WHERE event_id = ?", (ids["approval"],)).fetchone()[0]
        assert status == "waiting"
        assert conn.execute("SELECT COUNT(*) FROM events WHERE kind = 'answer'").fetchone()[0] == 0


async def test_an_id_with_a_trailing_newline_is_refused(client: HubClient) -> None:
    """`$` in a pattern also matches before a final newline: ids are matched whole."""
    r = await client.post("/api/v1/projects", json={"id": "web\n"}, headers=ADMIN)
    assert assert_problem(r, 400, "invalid_argument")["details"]["field"] == "id"
    r = await client.post("/api/v1/agents", json={"id": "carol\n"}, headers=ADMIN)
    assert assert_problem(r, 400, "invalid_argument")["details"]["field"] == "id"
    with client.db() as conn:
        assert conn.execute("SELECT COUNT(*) FROM projects").fetchone()[0] == 0
        assert conn.execute("SELECT COUNT(*) FROM agents").fetchone()[0] == 0


async def test_an_event_id_with_a_trailing_newline_is_no_cursor(client: HubClient, ids: dict[str, str]) -> None:
    r = await client.get("/api/v1/projects/web/feed", params={"since": ids["idea"] + "\n"}, headers=ADMIN)
    assert assert_problem(r, 400, "invalid_argument")["details"]["field"] == "since"


ServiceCall = Callable[[Hub, dict[str, str]], Any]
SERVICE_CALLS: list[tuple[str, str, ServiceCall]] = [
    ("read_all", "project_id", lambda hub, ids: hub.inbox.read_all(HUMAN, a_read_all(project_id=[]))),
    (
        "decide",
        "decision",
        lambda hub, ids: hub.resolutions.decide(HUMAN, a_decision(approval_id=ids["approval"], decision={})),
    ),
    ("seen", "event_id", lambda hub, ids: hub.feed.seen(HUMAN, a_seen(project_id="web", event_id=0))),
    ("end", "handoff", lambda hub, ids: hub.sessions.end(ALICE, a_session_end(session_id=ids["session"], handoff=[]))),
    (
        "answer",
        "body",
        lambda hub, ids: hub.resolutions.answer(HUMAN, an_answer(question_id=ids["question"], body={"text": "x"})),
    ),
    (
        "question_post body",
        "body",
        lambda hub, ids: hub.posts.question_post(ALICE, a_question(project_id="web", summary="Q?", body=[])),
    ),
    ("start name", "name", lambda hub, ids: hub.sessions.start(ALICE, a_session_start("web", 2**70))),
]


@pytest.mark.parametrize(
    ("call", "member"), [(c, m) for _, m, c in SERVICE_CALLS], ids=[n for n, _, _ in SERVICE_CALLS]
)
async def test_the_services_check_types_themselves(
    client: HubClient, ids: dict[str, str], call: ServiceCall, member: str
) -> None:
    """The MCP tools call the same services, so the checks live there, not only in the handlers."""
    with client.db() as conn:
        before = snapshot(conn)
        with pytest.raises(HubError) as caught:
            await call(client.app.hub, ids)
        assert caught.value.code == "invalid_argument" and (caught.value.details or {}).get("field") == member
        assert snapshot(conn) == before


async def test_null_reads_as_absent_for_every_optional_member(client: HubClient, ids: dict[str, str]) -> None:
    r = await client.post(
        "/api/v1/projects",
        headers=ADMIN,
        json={"id": "newp", "display_name": None, "confidential": None, "artifact_password_policy": None},
    )
    assert r.status_code == 201, r.text
    assert (r.json()["display_name"], r.json()["confidential"], r.json()["artifact_password_policy"]) == (
        "newp",
        False,
        "optional",
    )
    r = await client.patch(
        "/api/v1/projects/newp",
        headers=ADMIN,
        json={"display_name": None, "confidential": None, "artifact_password_policy": "off"},
    )
    assert r.status_code == 200 and r.json()["display_name"] == "newp" and r.json()["artifact_password_policy"] == "off"
    # A session named by owner and name: a null project_id is the default project, as if left out.
    await client.app.hub.sessions.end(ALICE, a_session_end(session_id=ids["session"]))
    adopted = await client.app.hub.sessions.start(
        ALICE, a_session_start("web", "one", {"agent": "alice", "name": "one", "project_id": None})
    )
    assert adopted["session_id"] == ids["session"] and adopted["started"] == "adopted"
