"""Typed requests: what `parse` refuses and how, and the schemas the tools publish from the models."""

from __future__ import annotations

from typing import Any

import pytest

from hubcore.errors import HubError
from hubcore.services.feed import FeedRead
from hubcore.services.posts import SignalAppend
from hubcore.services.requests import input_schema, parse
from hubmcp.tools import all_tools


def refusal(model: Any, data: dict[str, Any]) -> HubError:
    with pytest.raises(HubError) as caught:
        parse(model, data)
    return caught.value


def walk(node: Any) -> list[dict[str, Any]]:
    if isinstance(node, dict):
        return [node, *(n for v in node.values() for n in walk(v))]
    if isinstance(node, list):
        return [n for v in node for n in walk(v)]
    return []


def test_published_schemas_are_plain_closed_objects() -> None:
    """No titles, no `$defs` or `$ref` (clients that do not resolve references see plain objects),
    unknown members refused."""
    typed = [tool for tool in all_tools() if tool.input_model is not None]
    assert {"signal_append", "question_post", "answer_post", "feed_read", "inbox_wait", "notify_wait"} <= {
        tool.name for tool in typed
    }
    for tool in typed:
        schema = tool.input_schema
        assert schema["type"] == "object" and schema["additionalProperties"] is False, tool.name
        for node in walk(schema):
            assert not {"title", "$defs", "$ref"} & set(node), (tool.name, node)


def test_a_member_over_its_size_is_413_and_any_other_limit_400() -> None:
    over = refusal(SignalAppend, {"project_id": "web", "summary": "x" * 1025})
    assert (over.code, over.status, over.details) == ("payload_too_large", 413, {"field": "summary"})
    key = refusal(SignalAppend, {"project_id": "web", "summary": "s", "idempotency_key": "k" * 201})
    assert (key.code, key.status, key.details) == ("invalid_argument", 400, {"field": "idempotency_key"})


def test_a_refusal_names_the_member_and_the_rule_never_the_value() -> None:
    secret = "do-not-echo-" * 5000
    err = refusal(SignalAppend, {"project_id": "web", "summary": secret})
    assert err.message == "summary: longer than 1024 characters" and "do-not-echo" not in err.message
    unknown = refusal(FeedRead, {"project_id": "web", "x" * 500: 1})
    assert unknown.message == "x" * 64 + "...: unknown member"
    assert refusal(FeedRead, {"project_id": "web", "limit": 5.0}).message == "limit: must be of type integer"
    assert refusal(FeedRead, {}).message == "project_id: missing (required)"


def test_text_is_trimmed_before_its_limit_and_null_reads_as_absent() -> None:
    padded = parse(SignalAppend, {"project_id": "web", "summary": "  " + "x" * 1024 + "\t", "session_id": None})
    assert padded.summary == "x" * 1024 and padded.session_id is None
    assert parse(FeedRead, {"project_id": "web", "limit": None}).limit == 50
    assert refusal(FeedRead, {"project_id": "web", "colour": None}).message == "colour: unknown member"
    schema = input_schema(SignalAppend)["properties"]
    assert schema["summary"]["x-max-chars-trimmed"] == 1024 and "maxLength" not in schema["summary"]
    assert schema["session_id"]["type"] == ["string", "null"]
