"""Response schemas come from the response models (hubhttp/api/responses.py), closed and exact: the
check of every harness response (tests/openapi_check.py) then catches a member a route forgets,
invents, or sends with the wrong type or a null it never promised."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from hubcore.caller import Caller
from hubhttp.api.docs import DOCS
from hubhttp.app import create_app
from hubhttp.openapi import build
from tests.harness import ADMIN, HubClient
from tests.openapi_check import ResponseChecker
from tests.requests import a_brain_put, a_session_start

pytestmark = pytest.mark.anyio

# Routes whose answer is not a fixed object: this document, the stream, and the knowledge base's
# (still hand-written in docs.py).
OPEN = {
    "openapi.openapi_document",
    "stream.stream",
    "artifacts.artifact_raw",
}  # stored text as text/plain; its JSON alternative is checked below


def closed(schema: dict[str, Any]) -> list[str]:
    """Where an object schema (at any depth) does not close itself; free-form payloads aside."""
    faults: list[str] = []

    def walk(node: Any, at: str) -> None:
        if isinstance(node, dict):
            if node.get("type") == "object" and "properties" in node and node.get("additionalProperties") is not False:
                faults.append(at)
            for key, value in node.items():
                walk(value, f"{at}/{key}")
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, f"{at}/{i}")

    walk(schema, "")
    return faults


def test_every_fixed_response_is_a_closed_object_with_required_members() -> None:
    for endpoint, doc in DOCS.items():
        if endpoint in OPEN or endpoint.startswith("kb.") or doc.response is None:
            continue
        assert doc.response.get("type") == "object" and doc.response.get("required"), endpoint
        assert closed(doc.response) == [], endpoint


def test_every_alternative_json_response_is_a_closed_object() -> None:
    for endpoint, doc in DOCS.items():
        for media, schema in doc.alternatives.items():
            assert media == "application/json", endpoint
            assert schema.get("type") == "object" and schema.get("required"), endpoint
            assert closed(schema) == [], endpoint


async def test_a_member_forgotten_invented_or_null_is_caught(client: HubClient) -> None:
    await client.make_agent("alice")
    await client.make_project("web")
    hub = client.app.hub
    started = await hub.sessions.start(Caller.agent("alice"), a_session_start("web", "task"))
    sid = started["session_id"]
    await hub.brains.write_entry(
        Caller.agent("alice"), a_brain_put(path="/fs/a.md", content="hi", store="session", session_id=sid)
    )
    checker = ResponseChecker(build(create_app(), "test"))
    for path in (
        f"/api/v1/sessions/{sid}",
        f"/api/v1/sessions/{sid}/brain/entry?path=/fs/a.md",
        "/api/v1/projects/web",
        "/api/v1/storage",
        "/api/v1/home",
    ):
        r = await client.get(path, headers=ADMIN)
        assert r.status_code == 200, r.text
        body = r.json()
        url = path.split("?")[0]

        def verdict(changed: dict[str, Any], url: str = url) -> str | None:
            return checker.mismatch("GET", url, 200, "application/json", orjson.dumps(changed))

        assert verdict(body) is None, path
        assert verdict({**body, "invented": 1}) is not None, path
        for member in body:
            assert verdict({k: v for k, v in body.items() if k != member}) is not None, (path, member)
        if url.endswith(sid):  # a member null where it never is, a number sent as text
            assert verdict({**body, "status": None}) is not None
            assert verdict({**body, "brain_bytes": "12"}) is not None
            assert verdict({**body, "lineage": {"kind": "adopted"}}) is not None
