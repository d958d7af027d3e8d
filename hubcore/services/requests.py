"""Typed requests: the one place each operation's input is defined.

Every operation has a `Request` model (strict, unknown members refused, frozen) whose fields are
the constrained types of `hubcore.services.fields`, built from the services' own constants. REST
handlers and MCP tools parse into the same model with `parse`, so the same bad input gets the same
code on both surfaces, and services take the model, never a raw body. The MCP input schema and the
OpenAPI document are generated from the model by `input_schema`.

The refusal rule (docs/decisions.md): a content member over its size limit is `payload_too_large`
(413); every other limit or shape is `invalid_argument` (400). A refusal names the member (in the
message and in `details.field`), never its value: the value may be megabytes long.
"""

# No `from __future__ import annotations` in model modules: pydantic reads the annotations.

from collections.abc import Mapping
from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

from hubcore.errors import HubError

# Members whose size is content, not shape: over the limit is 413 on both surfaces.
CONTENT_MEMBERS = frozenset({"summary", "body", "payload", "note", "handoff", "content", "page"})
NAME_MAX = 64  # a member name is the caller's own text (an unknown member), so it is cut too
JSON_TYPES = {
    "string_type": "string",
    "int_type": "integer",
    "float_type": "number",
    "bool_type": "boolean",
    "dict_type": "object",
    "model_type": "object",
    "list_type": "array",
    "tuple_type": "array",
}


class Request(BaseModel):
    """The base of every operation's input. JSON `null` for an optional member reads as absent."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True, defer_build=True)
    # Members for which JSON `null` means something of its own (an artifact update's `envelope:
    # null` makes the version plain, where an absent envelope keeps the protection): kept as sent.
    NULL_MEANS: ClassVar[frozenset[str]] = frozenset()

    @model_validator(mode="before")
    @classmethod
    def _null_is_absent(cls, data: Any) -> Any:
        """JSON `null` for a member the model knows reads as absent at every depth (a device's
        `filters.content: null` is its default), as the published schema says (`HubJsonSchema`)."""
        if not isinstance(data, dict):
            return data
        known, keep = cls.model_fields, cls.NULL_MEANS
        return {k: v for k, v in data.items() if v is not None or k not in known or k in keep}


class NoArguments(Request):
    """An operation that takes nothing (whoami, version, notify_list): any member is refused."""


R = TypeVar("R", bound=Request)


class InvalidRequest(HubError):
    """A request the model refused: `where` is the member's path, `rule` what it breaks, `kind`
    pydantic's error type (so an adapter may phrase a rule in its own words)."""

    def __init__(self, code: str, where: str, rule: str, kind: str) -> None:
        super().__init__(code, f"{where}: {rule}", details={"field": where})
        self.where, self.rule, self.kind = where, rule, kind


def parse(model: type[R], data: Mapping[str, Any] | None) -> R:
    """`data` as a `model`, or the hub's refusal naming the first member at fault.

    JSON `null` reads as absent for every member the model knows: an optional one takes its
    default, a required one is missing (an unknown member is refused whatever its value). Rules
    the services raise themselves (a payload's wide integer, its serialized size) come through
    unchanged: they are already `HubError`s with the service's wording.
    """
    try:
        known = model.model_fields
        keep = model.NULL_MEANS
        return model.model_validate(
            {k: v for k, v in (data or {}).items() if v is not None or k not in known or k in keep}
        )
    except ValidationError as exc:
        raise refusal(exc) from None


def refusal(exc: ValidationError) -> InvalidRequest:
    errors = exc.errors(include_url=False, include_input=False)
    error = min(errors, key=lambda e: [str(p) for p in e["loc"]])  # stable: the first member by name
    loc = [_name(p) for p in error["loc"]]
    where = ".".join(loc) or "(arguments)"
    kind = error["type"]
    too_large = kind in TOO_LONG and bool(loc) and loc[0] in CONTENT_MEMBERS
    return InvalidRequest(
        "payload_too_large" if too_large else "invalid_argument",
        where,
        _rule(kind, error.get("ctx") or {}, error["msg"]),
        kind,
    )


def _name(part: object) -> str:
    text = str(part)
    return text if len(text) <= NAME_MAX else text[:NAME_MAX] + "..."


TOO_LONG = frozenset({"string_too_long", "bytes_too_long"})
RULES = {
    "missing": "missing (required)",
    "extra_forbidden": "unknown member",
    "string_too_long": "longer than {max_length} characters",
    "bytes_too_long": "longer than {max_length} bytes as UTF-8",
    "string_too_short": "must be at least {min_length} characters long",
    "too_short": "must have at least {min_length} items",
    "too_long": "must have at most {max_length} items",
    "less_than_equal": "must be at most {le}",
    "greater_than_equal": "must be at least {ge}",
    "less_than": "must be less than {lt}",
    "greater_than": "must be greater than {gt}",
    "string_pattern_mismatch": "must match the pattern {pattern}",
    "finite_number": "must be a finite number",
}


def _rule(kind: str, ctx: Mapping[str, Any], message: str) -> str:
    """The hub's wording of pydantic's error: the rule, never the value."""
    if kind in JSON_TYPES:
        return f"must be of type {JSON_TYPES[kind]}"
    if kind == "literal_error":
        expected = str(ctx.get("expected", ""))
        return "must be one of " + expected.replace(" or ", ", ")
    if kind in RULES:
        return RULES[kind].format(**ctx)
    return message  # the hub's own rules (fields.py) carry their wording as the message


class HubJsonSchema(GenerateJsonSchema):
    """The schema as MCP clients and OpenAPI readers get it: no titles, no `default: null`."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def default_schema(self, schema: core_schema.WithDefaultSchema) -> JsonSchemaValue:
        out = super().default_schema(schema)
        if "default" not in out:
            return out
        default = out.pop("default")
        # `parse` reads null as absent for a member with a default. A session reference (`oneOf`
        # its object forms) keeps its published forms: its readers look for exactly those.
        if not _allows_null(out) and "oneOf" not in out:
            out = {"anyOf": [out, {"type": "null"}]}
        return out if default is None else {**out, "default": default}

    def model_schema(self, schema: core_schema.ModelSchema) -> JsonSchemaValue:
        out = super().model_schema(schema)
        out.pop("title", None)
        return out


def _allows_null(schema: JsonSchemaValue) -> bool:
    kinds = schema.get("type")
    if kinds == "null" or (isinstance(kinds, list) and "null" in kinds) or None in schema.get("enum", [0]):
        return True
    return any(_allows_null(b) for b in schema.get("anyOf", []) + schema.get("oneOf", []) if isinstance(b, dict))


def input_schema(model: type[Request], *, leave_out: tuple[str, ...] = ()) -> dict[str, Any]:
    """The model's JSON Schema: `$defs` inlined, no titles, `additionalProperties: false`, an
    optional member's `null` folded into its type list. `leave_out` drops members a surface fills
    itself (a REST path parameter)."""
    schema = inline_refs(model.model_json_schema(schema_generator=HubJsonSchema))
    # A model that ignores unknown members (the spec's project bodies) says so; the rest refuse them.
    schema["additionalProperties"] = model.model_config.get("extra") == "ignore"
    if leave_out:
        schema["properties"] = {k: v for k, v in schema.get("properties", {}).items() if k not in leave_out}
        required = [k for k in schema.get("required", []) if k not in leave_out]
        schema.pop("required", None)
        if required:
            schema["required"] = required
    return schema


def inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with its `$defs` inlined where they are referenced (MCP clients that do not resolve
    references see plain objects), titles dropped, and an `anyOf [X, null]` folded into X's own
    `type` list or `enum` where X is that simple (JSON null reads as absent)."""
    defs = schema.get("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                return walk(defs[ref.removeprefix("#/$defs/")])
            out = {k: walk(v) for k, v in node.items() if k not in ("$defs", "title")}
            branches = out.get("anyOf")
            if isinstance(branches, list) and {"type": "null"} in branches:
                return _nullable(out, [b for b in branches if b != {"type": "null"}])
            return out
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    return dict(walk(schema))


def _nullable(node: dict[str, Any], kept: list[Any]) -> dict[str, Any]:
    """`anyOf [X, null]` as X with `null` in its type list (or enum), where X is that simple."""
    rest = {k: v for k, v in node.items() if k != "anyOf"}
    if len(kept) != 1:
        return {**rest, "anyOf": [*kept, {"type": "null"}]}
    inner = dict(kept[0])
    if isinstance(inner.get("anyOf"), list) and "type" not in inner:  # one union, null among its branches
        return {**rest, **inner, "anyOf": [*inner["anyOf"], {"type": "null"}]}
    if "const" in inner:
        inner = {**{k: v for k, v in inner.items() if k != "const"}, "enum": [inner["const"]]}
    if not isinstance(inner.get("type"), str) and not isinstance(inner.get("enum"), list):
        return {**rest, "anyOf": [inner, {"type": "null"}]}
    if isinstance(inner.get("type"), str):
        inner["type"] = [inner["type"], "null"]
    if isinstance(inner.get("enum"), list):
        inner["enum"] = [*inner["enum"], None]
    return {**rest, **inner}
