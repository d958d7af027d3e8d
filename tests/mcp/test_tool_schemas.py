"""Every tool's input and output schema is a valid JSON Schema (draft 2020-12).

The hub does not check them when it starts (the schemas are fixed in the source, and checking them
took a third of its import time); this test is where a malformed schema is caught instead.
"""

from __future__ import annotations

import pytest
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from hubcore.errors import HubError
from hubmcp.tools import all_tools
from hubmcp.tools.base import Tool


@pytest.mark.parametrize("tool", all_tools(), ids=lambda t: t.name)
def test_schemas_are_valid_json_schema(tool: Tool) -> None:
    Draft202012Validator.check_schema(tool.input_schema)
    Draft202012Validator.check_schema(tool.output_schema)


def test_a_malformed_schema_is_caught() -> None:
    with pytest.raises(SchemaError):
        Draft202012Validator.check_schema({"type": "object", "properties": {"x": {"type": "strnig"}}})
    with pytest.raises(SchemaError):
        Draft202012Validator.check_schema({"type": "object", "required": "x"})


async def _handler(ctx: object, args: object) -> dict[str, object]:
    return {}


def test_a_tool_without_a_typed_request_checks_its_arguments_by_its_schema() -> None:
    tool = Tool(
        name="probe",
        description="d",
        output_schema={"type": "object"},
        handler=_handler,
        input_schema={"type": "object", "properties": {"n": {"type": "integer"}}, "additionalProperties": False},
    )
    assert tool.check_arguments({"n": 3}) == {"n": 3}
    with pytest.raises(HubError) as refused:
        tool.check_arguments({"n": "three"})
    assert refused.value.code == "invalid_argument" and refused.value.details == {"argument": "n"}
