"""Every tool's input and output schema is a valid JSON Schema (draft 2020-12).

The hub does not check them when it starts (the schemas are fixed in the source, and checking them
took a third of its import time); this test is where a malformed schema is caught instead.
"""

from __future__ import annotations

import pytest
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

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
