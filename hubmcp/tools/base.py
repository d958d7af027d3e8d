"""A tool: its name, JSON Schemas, and a thin handler over one hubcore service call."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hubcore.errors import HubError
from hubcore.services.requests import InvalidRequest, Request, input_schema, parse
from hubmcp.context import CallContext
from hubmcp.tools.lean import lean_input, lean_output

if TYPE_CHECKING:  # jsonschema loads only for a tool without a typed request (none today): 3.5 MB
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError

# A handler takes the parsed request: the tool's `input_model`, or the checked dict for a tool not
# converted to a typed request yet.
Handler = Callable[[CallContext, Any], Awaitable[dict[str, Any]]]

# What a wait says when it cut the asked wait to fit the clients' 60-second request timeout.
CAPPED_OUT: dict[str, Any] = {
    "capped": {"type": "boolean", "description": "true when the wait was cut to wait_seconds"},
    "wait_seconds": {"type": "number", "description": "the wait the hub applied, when capped"},
}


def outputs(properties: Mapping[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    """An output schema: the tool's own result. Unlisted members are allowed (no
    `additionalProperties: false`), so the `notifications` trailer a successful result may carry
    (described once, in the agent guide) always validates."""
    schema: dict[str, Any] = {"type": "object", "properties": dict(properties)}
    if required:
        schema["required"] = list(required)
    return schema


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    output_schema: dict[str, Any]
    handler: Handler
    # The typed request the tool's input is defined by; its schema is generated from it and each
    # call is parsed into it. Tools without one still give `input_schema` by hand (checked by
    # jsonschema per call) until they are converted.
    input_model: type[Request] | None = None
    input_schema: dict[str, Any] = field(default_factory=dict)
    read_only: bool = False
    # Tools whose result is itself a drain of the trailer queues (notify_wait) carry no trailer.
    trailer: bool = True
    # Tools that block for up to a minute; their HTTP replies are streamed (keep-alive pings, and a
    # client hanging up cancels the wait) instead of sent as one JSON body.
    waits: bool = False
    _validator: Draft202012Validator | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # The schemas are checked against the JSON Schema metaschema by the suite
        # (tests/mcp/test_tool_schemas.py), not here: checking seventy tools' schemas took a third
        # of the hub's import time on every start, for schemas that are fixed in the source.
        if self.input_model is not None:
            object.__setattr__(
                self, "input_schema", lean_input(input_schema(self.input_model), self.input_model.NULL_MEANS)
            )
        else:
            object.__setattr__(self, "input_schema", lean_input(self.input_schema))
        object.__setattr__(self, "output_schema", lean_output(self.output_schema))
        validator = None
        if self.input_model is None:
            from jsonschema import Draft202012Validator

            validator = Draft202012Validator(self.input_schema)
        object.__setattr__(self, "_validator", validator)

    def check_arguments(self, arguments: Mapping[str, Any] | None) -> Any:
        """The arguments as the tool's request (or a dict for a tool without one), or
        `invalid_argument` naming the first problem (argument and rule, never the offending value:
        it may be megabytes long)."""
        if self.input_model is not None:
            return parsed(self.input_model, arguments)
        args = dict(arguments or {})
        assert self._validator is not None  # made in __post_init__ for every tool without a model
        error = next(iter(sorted(self._validator.iter_errors(args), key=lambda e: list(map(str, e.path)))), None)
        if error is not None:
            where, rule = _explain(error)
            raise HubError("invalid_argument", f"argument {where}: {rule}", details={"argument": where})
        return args


def parsed(model: type[Request], arguments: Mapping[str, Any] | None) -> Request:
    """The arguments parsed into `model`; a refusal is said in MCP's words (an argument, not a
    member) with the same code REST gives for the same input."""
    try:
        return parse(model, arguments)
    except InvalidRequest as err:
        rule = UNKNOWN if err.kind == "extra_forbidden" else err.rule
        raise HubError(err.code, f"argument {err.where}: {rule}", details={"argument": err.where}) from None


UNKNOWN = "unknown argument; tools/list gives this tool's arguments"
NAME_MAX = 64  # argument names are echoed; a name is the caller's own text, so it is cut too


def _name(part: object) -> str:
    text = str(part)
    return text if len(text) <= NAME_MAX else text[:NAME_MAX] + "..."


def _where(error: ValidationError, member: object | None = None) -> str:
    parts = [*error.absolute_path, *([member] if member is not None else [])]
    return ".".join(_name(p) for p in parts) or "(arguments)"


def _explain(error: ValidationError) -> tuple[str, str]:
    """(which argument, which rule it breaks), built from the schema, not jsonschema's message:
    that one quotes the instance."""
    rule, value, instance = error.validator, error.validator_value, error.instance
    if rule == "required" and isinstance(instance, Mapping):
        missing = next((p for p in value if p not in instance), value[0])
        return _where(error, missing), "missing (required)"
    if rule == "additionalProperties" and isinstance(instance, Mapping):
        known = error.schema.get("properties", {})
        extra = next((k for k in instance if k not in known), "?")
        return _where(error, extra), UNKNOWN
    return _where(error), _rule(str(rule), value, error.schema)


BOUNDS = {
    "minLength": "must be at least {} characters long",
    "maxLength": "longer than {} characters",
    "minimum": "must be at least {}",
    "maximum": "must be at most {}",
    "exclusiveMinimum": "must be greater than {}",
    "exclusiveMaximum": "must be less than {}",
    "minItems": "must have at least {} items",
    "maxItems": "must have at most {} items",
    "minProperties": "must have at least {} members",
    "maxProperties": "must have at most {} members",
}


def _rule(rule: str, value: Any, schema: Mapping[str, Any]) -> str:
    if rule in BOUNDS:
        return BOUNDS[rule].format(value)
    if rule == "type":
        kinds = value if isinstance(value, list) else [value]
        return "must be of type " + " or ".join(map(str, kinds))
    if rule == "enum":
        shown = ", ".join(repr(v) for v in value[:12])
        return f"must be one of {shown}"
    if rule == "const":
        return f"must be {value!r}"
    if rule == "pattern":
        return f"must match the pattern {value}"
    if rule == "uniqueItems":
        return "items must be unique"
    if rule == "format":
        return f"must be a {value}"
    if rule in ("oneOf", "anyOf"):
        return f"matches none of the accepted forms: {schema.get('description', 'see tools/list')}"
    return f"breaks the schema rule {rule!r}"
