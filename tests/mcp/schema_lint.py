"""The schema-portability rules of the MCP Inspector's `--strict` (inspector-cli 2.12), in Python.

The suite cannot run Node on every test run, so the catalogue test checks the same rules itself:
a `type` that is an array (`type-union`), a schema that constrains nothing (`untyped-schema`), a
bare boolean where a schema object belongs (`boolean-schema`) and a `$ref` leaving the document
(`remote-ref`). docs/benchmarks.md records the Inspector's own count on the same catalogue.
"""

from __future__ import annotations

from typing import Any

JSON_TYPES = {"null", "boolean", "object", "array", "number", "string", "integer"}
BOOLEAN_VALUED = {"additionalProperties", "unevaluatedProperties", "additionalItems", "unevaluatedItems"}
SUBSCHEMA = (
    "items",
    "contains",
    "not",
    "propertyNames",
    "if",
    "then",
    "else",
    "additionalProperties",
    "unevaluatedProperties",
    "additionalItems",
    "unevaluatedItems",
    "contentSchema",
)
SUBSCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
SUBSCHEMA_MAPS = ("properties", "patternProperties", "dependentSchemas", "dependencies", "$defs", "definitions")
CONSTRAINING = {
    "type",
    "enum",
    "const",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "format",
    "contentMediaType",
    "contentEncoding",
    "contentSchema",
    "maxItems",
    "minItems",
    "uniqueItems",
    "maxContains",
    "minContains",
    "maxProperties",
    "minProperties",
    "required",
    "dependentRequired",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "items",
    "prefixItems",
    "contains",
    "additionalItems",
    "unevaluatedItems",
    "properties",
    "patternProperties",
    "additionalProperties",
    "unevaluatedProperties",
    "propertyNames",
    "dependentSchemas",
    "dependencies",
    "$ref",
    "$dynamicRef",
    "$recursiveRef",
}


def findings(schema: Any) -> list[tuple[str, str]]:
    """(rule, path) for every portability problem in one tool schema."""
    out: list[tuple[str, str]] = []
    _walk(schema, "", None, out, 0)
    return out


def _walk(node: Any, path: str, keyword: str | None, out: list[tuple[str, str]], depth: int) -> None:
    if depth > 64:
        return
    if isinstance(node, bool):
        if keyword not in BOOLEAN_VALUED:
            out.append(("boolean-schema", path))
        return
    if not isinstance(node, dict):
        return
    kinds = node.get("type")
    if isinstance(kinds, list) and kinds and all(k in JSON_TYPES for k in kinds) and len(set(kinds)) == len(kinds):
        out.append(("type-union", path))
    ref = node.get("$ref")
    if isinstance(ref, str) and ref and not ref.startswith("#"):
        out.append(("remote-ref", path))
    constrains = bool(CONSTRAINING & set(node)) or ("if" in node and ("then" in node or "else" in node))
    if not constrains and keyword != "not":
        out.append(("untyped-schema", path))
    for key in SUBSCHEMA_MAPS:
        members = node.get(key)
        if isinstance(members, dict):
            for name, sub in members.items():
                if not isinstance(sub, list):
                    _walk(sub, f"{path}.{key}.{name}", key, out, depth + 1)
    for key in SUBSCHEMA_LISTS:
        branches = node.get(key)
        if isinstance(branches, list):
            for i, sub in enumerate(branches):
                _walk(sub, f"{path}.{key}[{i}]", key, out, depth + 1)
    for key in SUBSCHEMA:
        if key in node:
            value = node[key]
            for i, sub in enumerate(value if key == "items" and isinstance(value, list) else [value]):
                _walk(sub, f"{path}.{key}" + (f"[{i}]" if isinstance(value, list) else ""), key, out, depth + 1)
