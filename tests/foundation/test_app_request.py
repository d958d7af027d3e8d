"""The hub's Quart request: blueprint names worked out once, hooks still following each route."""

from __future__ import annotations

from typing import Any

import pytest
import quart.helpers
from quart import Blueprint, Response, request

from hubhttp.app import create_app

pytestmark = pytest.mark.anyio


def app_with_nested_blueprints(seen: list[str]) -> Any:
    app = create_app()
    outer, inner = Blueprint("outer", __name__), Blueprint("inner", __name__)

    @inner.get("/t/inner")
    async def in_inner() -> Response:
        seen.append(f"handler {request.blueprints}")
        return Response(b"")

    @outer.before_request
    async def outer_before() -> None:
        seen.append("outer before")

    @inner.before_request
    async def inner_before() -> None:
        seen.append("inner before")

    @inner.after_request
    async def inner_after(response: Response) -> Response:
        seen.append("inner after")
        return response

    outer.register_blueprint(inner)
    app.register_blueprint(outer)

    @app.get("/t/plain")
    async def plain() -> Response:
        seen.append(f"handler {request.blueprints}")
        return Response(b"")

    return app


async def test_blueprint_hooks_follow_each_request_s_own_route() -> None:
    seen: list[str] = []
    client = app_with_nested_blueprints(seen).test_client()
    assert (await client.get("/t/inner")).status_code == 200
    assert seen == ["outer before", "inner before", "handler ['outer.inner', 'outer']", "inner after"]
    seen.clear()
    assert (await client.get("/t/plain")).status_code == 200
    assert seen == ["handler []"]


async def test_a_request_splits_its_endpoint_into_blueprints_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Quart asks for the names before, during and after the handler; stock Quart splits the
    endpoint each time."""
    splits: list[str] = []
    split = quart.helpers._split_blueprint_path
    monkeypatch.setattr(quart.helpers, "_split_blueprint_path", lambda name: splits.append(name) or split(name))
    seen: list[str] = []
    client = app_with_nested_blueprints(seen).test_client()
    assert (await client.get("/t/inner")).status_code == 200
    assert splits == ["outer.inner"]
