"""Form questions: the MCP elicitation subset held at every edge when a question is posted, and an
answer's `value` held to the published form (REST here; the MCP surface in tests/mcp/test_forms_mcp.py).
Every refusal names the member and writes nothing."""

from __future__ import annotations

from typing import Any

import pytest

from hubcore.caller import Caller
from hubcore.errors import HubError
from hubcore.hub import Hub
from hubcore.services import forms
from tests.feed.conftest import totals
from tests.harness import ADMIN, HubClient
from tests.requests import a_question

pytestmark = pytest.mark.anyio
BOT = Caller.agent("bot")

FORM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "email": {"type": "string", "format": "email", "title": "Reply to"},
        "site": {"type": "string", "format": "uri"},
        "day": {"type": "string", "format": "date"},
        "when": {"type": "string", "format": "date-time"},
        "note": {"type": "string", "minLength": 2, "maxLength": 5, "default": "ok"},
        "count": {"type": "integer", "minimum": 1, "maximum": 3, "default": 2},
        "ratio": {"type": "number", "minimum": 0, "maximum": 1},
        "ship": {"type": "boolean", "default": True},
        "colour": {"type": "string", "oneOf": [{"const": "r", "title": "Red"}, {"const": "b", "title": "Blue"}]},
        "size": {"type": "string", "enum": ["s", "m"], "enumNames": ["Small", "Medium"]},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}, "minItems": 1, "maxItems": 2},
    },
    "required": ["email", "ship"],
}


def props(n: int) -> dict[str, Any]:
    return {"type": "object", "properties": {f"p{i}": {"type": "boolean"} for i in range(n)}}


def choices(n: int) -> dict[str, Any]:
    return {"type": "object", "properties": {"c": {"type": "string", "enum": [f"v{i}" for i in range(n)]}}}


def one(prop: dict[str, Any], name: str = "x") -> dict[str, Any]:
    return {"type": "object", "properties": {name: prop}}


async def post(hub: Hub, form: Any, **extra: Any) -> str:
    result = await hub.posts.question_post(BOT, a_question(project_id="proj", summary="Fill in", form=form, **extra))
    return str(result["event_id"])


ACCEPTED = [
    props(forms.PROPERTIES_MAX),
    choices(forms.CHOICES_MAX),
    one({"type": "string", "maxLength": forms.STRING_MAX}),
    one({"type": "boolean", "title": "t" * forms.TITLE_MAX, "description": "d\n" * (forms.DESCRIPTION_MAX // 2)}),
    one({"type": "boolean"}, "n" * forms.NAME_MAX),
    FORM,
]
REFUSED = [
    (props(forms.PROPERTIES_MAX + 1), "form.properties"),
    ({"type": "object", "properties": {}}, "form.properties"),
    (choices(forms.CHOICES_MAX + 1), "form.properties.c.enum"),
    (one({"type": "string", "maxLength": forms.STRING_MAX + 1}), "form.properties.x.maxLength"),
    (one({"type": "string", "minLength": 3, "maxLength": 2}), "form.properties.x.minLength"),
    (one({"type": "boolean", "title": "t" * (forms.TITLE_MAX + 1)}), "form.properties.x.title"),
    (one({"type": "boolean", "description": "d" * (forms.DESCRIPTION_MAX + 1)}), "form.properties.x.description"),
    (one({"type": "boolean"}, "n" * (forms.NAME_MAX + 1)), "form.properties"),
    (one({"type": "boolean"}, "has space"), "form.properties"),
    (one({"type": "string", "pattern": "^a"}), "form.properties.x.pattern"),
    (one({"type": "string", "format": "ipv4"}), "form.properties.x.format"),
    (one({"type": "object", "properties": {}}), "form.properties.x.type"),
    (one({"type": "array", "items": {"type": "integer"}}), "form.properties.x.items"),
    (one({"type": "integer", "minimum": 5, "maximum": 1}), "form.properties.x.minimum"),
    (one({"type": "integer", "maximum": 1e300}), "form.properties.x.maximum"),
    (one({"type": "string", "enum": ["a", "a"]}), "form.properties.x.enum"),
    (one({"type": "string", "enum": ["a", "b"], "enumNames": ["A"]}), "form.properties.x.enumNames"),
    (one({"type": "string", "enum": ["a\nb", "c"]}), "form.properties.x.enum.0"),
    (one({"type": "integer", "maximum": 3, "default": 4}), "form.properties.x.default"),
    (one({"type": "string", "format": "email", "default": "nope"}), "form.properties.x.default"),
    ({**props(1), "required": ["missing"]}, "form.required"),
    ({**props(1), "type": "array"}, "form.type"),
    ({**props(1), "$defs": {}}, "form.$defs"),
    ("not an object", "form"),
]


@pytest.mark.parametrize("form", ACCEPTED, ids=range(len(ACCEPTED)))
async def test_forms_inside_the_subset_are_published_as_given(
    client: HubClient, hub: Hub, bot: Caller, form: dict[str, Any]
) -> None:
    question = await post(hub, form)
    [item] = (await client.get("/api/v1/inbox?status=waiting", headers=ADMIN)).json()["items"]
    assert item["event_id"] == question and item["payload"]["form"] == form


@pytest.mark.parametrize(("form", "field"), REFUSED, ids=[f for _, f in REFUSED])
async def test_a_form_outside_the_subset_is_refused_naming_the_member(
    client: HubClient, hub: Hub, bot: Caller, form: Any, field: str
) -> None:
    before = totals(client)
    with pytest.raises(HubError) as refused:
        await post(hub, form)
    assert refused.value.code == "invalid_argument" and refused.value.details == {"field": field}
    assert totals(client) == before


async def test_options_and_a_form_together_are_refused(client: HubClient, hub: Hub, bot: Caller) -> None:
    before = totals(client)
    with pytest.raises(HubError) as refused:
        await post(hub, props(1), options=["a", "b"])
    assert refused.value.code == "invalid_argument" and totals(client) == before


GOOD = {"email": "a@b.example", "ship": False}
BAD_VALUES = [
    ({}, "value.email"),
    ({"ship": True}, "value.email"),
    ({**GOOD, "other": 1}, "value"),
    ({**GOOD, "email": "no-at-sign"}, "value.email"),
    ({**GOOD, "site": "not a uri"}, "value.site"),
    ({**GOOD, "day": "2027-02-30"}, "value.day"),
    ({**GOOD, "day": "20270101"}, "value.day"),
    ({**GOOD, "when": "2027-01-01T10:00:00"}, "value.when"),  # RFC 3339 needs an offset
    ({**GOOD, "note": "x"}, "value.note"),
    ({**GOOD, "note": "x" * 6}, "value.note"),
    ({**GOOD, "count": 0}, "value.count"),
    ({**GOOD, "count": 4}, "value.count"),
    ({**GOOD, "count": 2.5}, "value.count"),
    ({**GOOD, "count": True}, "value.count"),
    ({**GOOD, "ratio": 1.01}, "value.ratio"),
    ({**GOOD, "ship": "yes"}, "value.ship"),
    ({**GOOD, "colour": "Red"}, "value.colour"),
    ({**GOOD, "size": "l"}, "value.size"),
    ({**GOOD, "tags": []}, "value.tags"),
    ({**GOOD, "tags": ["a", "b", "c"]}, "value.tags"),
    ({**GOOD, "tags": ["a", "a"]}, "value.tags"),
    ({**GOOD, "tags": ["z"]}, "value.tags"),
    ([1], "value"),
]


@pytest.mark.parametrize(("value", "field"), BAD_VALUES, ids=[f"{i}-{f}" for i, (_, f) in enumerate(BAD_VALUES)])
async def test_an_answer_outside_the_form_is_refused_over_rest(
    client: HubClient, hub: Hub, bot: Caller, value: Any, field: str
) -> None:
    question = await post(hub, FORM)
    before = totals(client)
    r = await client.post(f"/api/v1/questions/{question}/answer", json={"value": value}, headers=ADMIN)
    assert r.status_code == 400, r.text
    assert r.json()["code"] == "invalid_argument" and r.json()["details"]["field"] == field
    assert totals(client) == before


async def test_a_form_answer_at_every_edge_is_carried_as_value(client: HubClient, hub: Hub, bot: Caller) -> None:
    question = await post(hub, FORM)
    value = {
        "email": "a@b.example",
        "site": "https://x.example/p",
        "day": "2027-02-28",
        "when": "2027-01-01T10:00:00Z",
        "note": "xxxxx",
        "count": 3,
        "ratio": 0,
        "ship": True,
        "colour": "b",
        "size": "m",
        "tags": ["a", "c"],
    }
    r = await client.post(f"/api/v1/questions/{question}/answer", json={"value": value}, headers=ADMIN)
    assert r.status_code == 200, r.text
    [item] = (await client.get("/api/v1/inbox?status=resolved", headers=ADMIN)).json()["items"]
    assert item["answer"]["value"] == value
    assert item["answer"]["body"].splitlines()[:2] == ["Reply to: a@b.example", "site: https://x.example/p"]


async def test_form_and_plain_questions_keep_their_own_answers(client: HubClient, hub: Hub, bot: Caller) -> None:
    form_q = await post(hub, props(1))
    plain = (await hub.posts.question_post(BOT, a_question(project_id="proj", summary="Why?")))["event_id"]
    before = totals(client)
    for target, body, code in (
        (form_q, {"body": "just text"}, "value"),
        (plain, {"body": "x", "value": {}}, "value"),
        (plain, {}, "body"),
    ):
        r = await client.post(f"/api/v1/questions/{target}/answer", json=body, headers=ADMIN)
        assert r.status_code == 400 and r.json()["details"]["field"] == code
        assert totals(client) == before
    r = await client.post(
        f"/api/v1/questions/{form_q}/answer", json={"value": {"p0": True}, "body": "sure"}, headers=ADMIN
    )
    assert r.status_code == 200
    r = await client.post(f"/api/v1/questions/{plain}/answer", json={"body": "because"}, headers=ADMIN)
    assert r.status_code == 200
    answers = {
        i["event_id"]: i["answer"]
        for i in (await client.get("/api/v1/inbox?status=resolved", headers=ADMIN)).json()["items"]
    }
    assert answers[form_q]["value"] == {"p0": True} and answers[form_q]["body"] == "sure"
    assert "value" not in answers[plain] and answers[plain]["body"] == "because"
