"""`GET /api/v1/openapi.json`: a valid OpenAPI 3.1 document of every REST route, generated from the
app's URL map; every response the suite's harness clients receive is checked against it
(tests/openapi_check.py, hooked in tests/harness.py)."""

from __future__ import annotations

import orjson
import pytest
from openapi_spec_validator import validate
from quart import Response

from hubhttp.api.docs import DOCS
from hubhttp.app import create_app
from hubhttp.openapi import API_PREFIX, DOCUMENT_KEY, SEGMENT_PATTERN, api_rules, build, document, openapi_path
from hubhttp.routing import Access, RouteAccess
from tests.harness import HubClient
from tests.openapi_check import ResponseChecker

pytestmark = pytest.mark.anyio


async def test_the_document_is_public_valid_openapi_31_and_served_as_built(client: HubClient) -> None:
    r = await client.get("/api/v1/openapi.json")  # no token: public, like the bootstrap guide
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
    doc = r.json()
    assert doc["openapi"] == "3.1.0"
    validate(doc)
    assert r.content == document(client.app.quart)  # built once, served as cached bytes


def test_the_document_is_built_on_first_use_once_for_every_app_with_the_same_map() -> None:
    first, second = create_app(), create_app()
    assert DOCUMENT_KEY not in first.extensions  # not while the app is built
    built = document(first)
    assert document(second) is built  # one build per process, not per app
    assert orjson.loads(built)["paths"]


def test_an_app_with_another_url_map_gets_its_own_document() -> None:
    app = create_app()

    async def hidden() -> Response:
        return Response(b"")

    app.add_url_rule(API_PREFIX + "/hidden/<thing>", "extra.hidden", hidden)
    with pytest.raises(LookupError):  # never the shared document of the plain map
        document(app)


def test_every_api_rule_of_the_url_map_is_in_the_document() -> None:
    app = create_app()
    doc = build(app, "test")
    missing = [
        f"{method} {rule.rule}"
        for rule in api_rules(app)
        if not DOCS[str(rule.endpoint)].refusal_only
        for method in sorted((rule.methods or set()) - {"HEAD", "OPTIONS"})
        if method.lower() not in doc["paths"].get(openapi_path(rule.rule), {})
    ]
    assert missing == []
    assert len(list(api_rules(app))) >= 30


def test_a_route_without_a_doc_record_cannot_be_served() -> None:
    app = create_app()

    async def hidden() -> Response:
        return Response(b"")

    app.add_url_rule(API_PREFIX + "/hidden/<thing>", "extra.hidden", hidden)
    with pytest.raises(LookupError) as caught:
        build(app, "test")
    assert "/api/v1/hidden/<thing>" in str(caught.value)


def test_operations_document_their_problems_and_security() -> None:
    app = create_app()
    doc = build(app, "test")
    access = RouteAccess(app, {})
    for path, methods in doc["paths"].items():
        for method, op in methods.items():
            codes = set(op["responses"])
            where = f"{method.upper()} {path}"
            public = access.for_path(path.replace("{", "x").replace("}", ""), method.upper()) is Access.PUBLIC
            # A public route answers 401 only from its own handler (the enrolment status poll's refused token).
            assert ("401" in codes) is not public or path == "/api/v1/enrol/status", where
            assert (op["security"] == []) is public, where
            if method in ("post", "patch", "put", "delete"):
                assert {"413", "415"} <= codes, where
            for status, answer in op["responses"].items():
                if int(status) >= 400:
                    assert answer["content"]["application/problem+json"]["schema"] == {
                        "$ref": "#/components/schemas/Problem"
                    }, where
    assert {"code", "status", "detail"} <= set(doc["components"]["schemas"]["Problem"]["required"])


def test_path_parameters_follow_the_rule() -> None:
    assert (
        openapi_path("/api/v1/agents/<agent_id>/grants/<project_id>") == "/api/v1/agents/{agent_id}/grants/{project_id}"
    )
    doc = build(create_app(), "test")
    op = doc["paths"]["/api/v1/agents/{agent_id}/grants/{project_id}"]["delete"]
    assert [(p["name"], p["in"], p["required"]) for p in op["parameters"]] == [
        ("agent_id", "path", True),
        ("project_id", "path", True),
    ]


def test_the_checker_refuses_what_the_document_does_not_say() -> None:
    checker = ResponseChecker(build(create_app(), "test"))
    ok = orjson.dumps({"projects": []})
    assert checker.mismatch("GET", "/api/v1/projects", 200, "application/json", ok) is None
    wrong_shape = checker.mismatch("GET", "/api/v1/projects", 200, "application/json", b'{"projects": 3}')
    assert wrong_shape is not None and "projects" in wrong_shape
    undocumented = checker.mismatch("GET", "/api/v1/projects", 418, "application/json", ok)
    assert undocumented is not None and "418" in undocumented
    problem = orjson.dumps({"type": "about:blank", "title": "Not Found", "status": 404, "detail": "x"})
    no_code = checker.mismatch("GET", "/api/v1/projects/p", 404, "application/problem+json", problem)
    assert no_code is not None and "code" in no_code
    assert checker.mismatch("DELETE", "/api/v1/projects/p", 204, "", b"") is None
    assert checker.mismatch("PUT", "/api/v1/projects/p", 405, "application/problem+json", b"{}") is None


def test_bodies_and_queries_with_a_typed_request_come_from_the_model() -> None:
    from hubcore.services.feed import FeedRead
    from hubcore.services.requests import input_schema
    from hubcore.services.resolutions import DecisionPost

    doc = build(create_app(), "test")
    decide = doc["paths"]["/api/v1/approvals/{approval_id}/decision"]["post"]
    assert decide["requestBody"]["content"]["application/json"]["schema"] == input_schema(
        DecisionPost, leave_out=("approval_id",)
    )
    member = input_schema(DecisionPost)["properties"]["approval_id"]
    # The path parameter is the model's member, held to what the gate lets through as a segment.
    assert decide["parameters"][0]["schema"] == {**member, "pattern": SEGMENT_PATTERN}
    feed = doc["paths"]["/api/v1/projects/{project_id}/feed"]["get"]
    names = [p["name"] for p in feed["parameters"] if p["in"] == "query"]
    assert names == [n for n in FeedRead.model_fields if n != "project_id"]


def test_every_doc_record_names_a_served_route() -> None:
    from hubhttp.api.docs import DOCS

    served = {str(rule.endpoint) for rule in api_rules(create_app())}
    assert sorted(set(DOCS) - served) == []  # a record left behind by a removed route


async def test_urls_still_build_from_the_rules_whose_builders_compile_on_first_use() -> None:
    from quart import url_for

    app = create_app()
    async with app.test_request_context("/"):
        assert url_for("projects.list_projects") == "/api/v1/projects"
        assert url_for("pages.artifact_page", artifact_id="a 1", version=2) == "/artifacts/a%201?version=2"
        assert url_for("pages.artifact_page", artifact_id="b") == "/artifacts/b"


def test_a_refusal_only_rule_serves_nothing_the_document_lists() -> None:
    """The rules that only answer 405 (an action's address under another method) are left out,
    and every other method of those addresses is the action's POST alone."""
    app = create_app()
    doc = build(app, "test")
    refusals = [rule for rule in api_rules(app) if DOCS[str(rule.endpoint)].refusal_only]
    assert {r.rule.rsplit("/", 1)[-1] for r in refusals} == {"review", "revert"}
    for rule in refusals:
        assert set(doc["paths"][openapi_path(rule.rule)]) == {"post"}
