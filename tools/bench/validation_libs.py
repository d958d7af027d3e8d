"""The library candidates of `tools/bench/validation.py`: pydantic (a BaseModel, and a TypeAdapter over
a TypedDict) and msgspec (a Struct). The classes are built inside the factories so that the
benchmark can time their building, which a hub pays once per operation at start.
"""

# No `from __future__ import annotations`: the libraries read these annotations at class creation.

from collections.abc import Callable
from typing import Annotated, Any, Literal, Required

import orjson
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    StringConstraints,
    TypeAdapter,
    ValidationError,
    model_validator,
)
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema
from typing_extensions import TypedDict  # pydantic needs this one on Python < 3.12

from tools.bench import validation_models as vm
from tools.bench.validation_models import Candidate, Refusal

SignalKind = Literal["signal", "finished", "idea", "approval"]
FeedKind = Literal[
    "signal", "finished", "question", "answer", "approval", "artifact", "session", "idea", "system", "enrol_request"
]
Store = Literal["session", "project"]
OnExpiry = Literal["approve", "decline"]

# pydantic: the limits as types. strip_whitespace runs before max_length (the hub trims, then checks).
ProjectId = Annotated[str, StringConstraints(pattern=vm.PROJECT_ID)]


class Trimmed:
    """Text stored trimmed: trimmed, then held to `max_chars` and one line. Its published schema
    states the limit in words and in `x-max-chars-trimmed`, not as `maxLength`: a client checking
    `maxLength` on the raw text would refuse padded text the hub accepts."""

    def __init__(self, max_chars: int) -> None:
        self.max_chars = max_chars

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return core_schema.str_schema(
            strip_whitespace=True, max_length=self.max_chars, pattern=vm.ONE_LINE, strict=True
        )

    def __get_pydantic_json_schema__(
        self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return {
            "type": "string",
            "x-max-chars-trimmed": self.max_chars,
            "description": f"one line, at most {self.max_chars} characters once trimmed",
        }


Summary = Annotated[str, Trimmed(vm.SUMMARY_MAX)]
Payload = Annotated[dict[str, Any], AfterValidator(vm.payload_checked)]
SessionId = Annotated[str, StringConstraints(min_length=1, max_length=vm.SESSION_ID_MAX, pattern=vm.ONE_LINE)]
Key = Annotated[str, StringConstraints(min_length=1, max_length=vm.KEY_MAX, pattern=vm.ONE_LINE)]
EventId = Annotated[str, StringConstraints(min_length=1, max_length=vm.EVENT_ID_MAX)]
Expires = Annotated[int, Field(ge=vm.EXPIRES_MIN, le=vm.EXPIRES_MAX)]
Limit = Annotated[int, Field(ge=1, le=vm.LIMIT_MAX)]
Wait = Annotated[float, Field(ge=0, le=vm.WAIT_MAX)]
BrainPath = Annotated[str, StringConstraints(min_length=1), AfterValidator(vm.canonical_path)]
Value = Annotated[str, AfterValidator(vm.value_checked)]
IfVersion = Annotated[str, StringConstraints(pattern=vm.IF_VERSION)]
Kinds = Annotated[list[FeedKind], Field(min_length=1)]


class HubSchema(GenerateJsonSchema):
    """The schema as MCP clients should get it: no titles, no `default: null`, no model title."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def default_schema(self, schema: core_schema.WithDefaultSchema) -> JsonSchemaValue:
        out = super().default_schema(schema)
        if out.get("default", 0) is None:
            out.pop("default")
        return out

    def model_schema(self, schema: core_schema.ModelSchema) -> JsonSchemaValue:
        out = super().model_schema(schema)
        out.pop("title", None)
        return out


def pydantic_refusal(exc: ValidationError) -> Refusal:
    errors = exc.errors(include_url=False, include_input=False)
    # A union reports one error per branch; the deepest one is the branch the value was meant for.
    first = errors[0]["loc"][:1]
    error = max((e for e in errors if e["loc"][:1] == first), key=lambda e: len(e["loc"]))
    loc = [str(p) for p in error["loc"]]
    field = loc[0] if loc else "(arguments)"
    code = "payload_too_large" if error["type"] == "string_too_long" and field in vm.TOO_LARGE else "invalid_argument"
    return Refusal(code, field, f"argument {field}: {error['msg']}")


def pydantic_check(validate: Callable[[Any], Any]) -> vm.Check:
    def check(args: dict[str, Any]) -> Any:
        try:
            return validate(args)
        except ValidationError as exc:
            raise pydantic_refusal(exc) from None

    return check


def pydantic_models() -> dict[str, type[BaseModel]]:
    class Request(BaseModel):
        model_config = ConfigDict(extra="forbid", strict=True)

    class SignalAppend(Request):
        project_id: ProjectId
        kind: SignalKind = "signal"
        summary: Summary | None = None
        body: str | None = None
        payload: Payload | None = None
        session_id: SessionId | None = None
        idempotency_key: Key | None = None
        expires_in_seconds: Expires | None = None
        on_expiry: OnExpiry | None = None

        @model_validator(mode="after")
        def summary_from_body(self) -> "SignalAppend":
            self.summary = vm.summary_of(self.summary, self.body, self.payload)
            return self

    class SessionById(Request):
        session_id: str

    class SessionByName(Request):
        agent: str
        name: str
        project_id: ProjectId | None = None

    class BrainPut(Request):
        path: BrainPath
        value: Value
        store: Store
        session: Annotated[str, StringConstraints(min_length=1)] | SessionById | SessionByName | None = None
        session_id: SessionId | None = None
        if_version: IfVersion | None = None
        project_id: ProjectId | None = None

    class FeedRead(Request):
        project_id: ProjectId
        since: EventId | None = None
        before: EventId | None = None
        kind: str | Kinds | None = None
        session_id: SessionId | None = None
        limit: Limit = 50

    class InboxWait(Request):
        wait_seconds: Wait = 30
        since: EventId | None = None
        limit: Limit = 50

    return {"signal_append": SignalAppend, "brain_put": BrainPut, "feed_read": FeedRead, "inbox_wait": InboxWait}


def pydantic_candidate() -> Candidate:
    models = pydantic_models()
    return Candidate(
        {op: pydantic_check(model.model_validate) for op, model in models.items()},
        lambda op: vm.inline_refs(models[op].model_json_schema(schema_generator=HubSchema)),
        lambda op: models[op].model_json_schema(),
    )


def typeddict_summary(request: dict[str, Any]) -> dict[str, Any]:
    request["summary"] = vm.summary_of(request.get("summary"), request.get("body"), request.get("payload"))
    return request


def typeddict_adapters() -> dict[str, TypeAdapter[Any]]:
    config = ConfigDict(extra="forbid", strict=True)

    class SignalAppendTD(TypedDict, total=False):
        __pydantic_config__ = config  # type: ignore[misc]
        project_id: Required[ProjectId]
        kind: SignalKind
        summary: Summary | None
        body: str | None
        payload: Payload | None
        session_id: SessionId | None
        idempotency_key: Key | None
        expires_in_seconds: Expires | None
        on_expiry: OnExpiry | None

    class BrainPutTD(TypedDict, total=False):
        __pydantic_config__ = config  # type: ignore[misc]
        path: Required[BrainPath]
        value: Required[Value]
        store: Required[Store]
        session: Annotated[Any, AfterValidator(vm.session_ref_checked)]
        session_id: SessionId | None
        if_version: IfVersion | None
        project_id: ProjectId | None

    class FeedReadTD(TypedDict, total=False):
        __pydantic_config__ = config  # type: ignore[misc]
        project_id: Required[ProjectId]
        since: EventId | None
        before: EventId | None
        kind: str | Kinds | None
        session_id: SessionId | None
        limit: Limit

    class InboxWaitTD(TypedDict, total=False):
        __pydantic_config__ = config  # type: ignore[misc]
        wait_seconds: Wait
        since: EventId | None
        limit: Limit

    return {
        "signal_append": TypeAdapter(Annotated[SignalAppendTD, AfterValidator(typeddict_summary)]),
        "brain_put": TypeAdapter(BrainPutTD),
        "feed_read": TypeAdapter(FeedReadTD),
        "inbox_wait": TypeAdapter(InboxWaitTD),
    }


def typeddict_candidate() -> Candidate:
    adapters = typeddict_adapters()
    return Candidate(
        {op: pydantic_check(adapter.validate_python) for op, adapter in adapters.items()},
        lambda op: vm.inline_refs(adapters[op].json_schema(schema_generator=HubSchema)),
        lambda op: adapters[op].json_schema(),
    )


def rest_decoders() -> dict[str, Callable[[bytes], Any]]:
    model = pydantic_models()["signal_append"]
    return {
        "orjson.loads + pydantic model_validate": lambda body: model.model_validate(orjson.loads(body)),
        "pydantic model_validate_json": model.model_validate_json,
    }


# msgspec. A union may hold only one object-like type, and there is no trimming, so the trimmed
# summary and the session reference are checked in __post_init__ (what it raises passes through).


def msgspec_types() -> dict[str, type]:
    import msgspec
    from msgspec import Meta

    def text(low: int, high: int, pattern: str | None = None) -> Any:
        return Annotated[str, Meta(min_length=low, max_length=high, pattern=pattern)]

    class Request(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
        pass

    class SignalAppend(Request):
        project_id: Annotated[str, Meta(pattern=vm.PROJECT_ID)]
        kind: SignalKind = "signal"
        summary: Annotated[str, Meta(extra_json_schema={"x-max-chars-trimmed": vm.SUMMARY_MAX})] | None = None
        body: str | None = None
        payload: dict[str, Any] | None = None
        session_id: text(1, vm.SESSION_ID_MAX, vm.ONE_LINE) | None = None  # type: ignore[valid-type]
        idempotency_key: text(1, vm.KEY_MAX, vm.ONE_LINE) | None = None  # type: ignore[valid-type]
        expires_in_seconds: Annotated[int, Meta(ge=vm.EXPIRES_MIN, le=vm.EXPIRES_MAX)] | None = None
        on_expiry: OnExpiry | None = None

        def __post_init__(self) -> None:
            trimmed = vm.trimmed_summary(self.summary) if self.summary is not None else None
            if self.payload is not None:
                vm.payload_checked(self.payload)
            self.summary = vm.summary_of(trimmed, self.body, self.payload)

    class BrainPut(Request):
        path: Annotated[str, Meta(min_length=1)]
        value: str
        store: Store
        session: str | dict[str, Any] | None = None
        session_id: text(1, vm.SESSION_ID_MAX, vm.ONE_LINE) | None = None  # type: ignore[valid-type]
        if_version: Annotated[str, Meta(pattern=vm.IF_VERSION)] | None = None
        project_id: Annotated[str, Meta(pattern=vm.PROJECT_ID)] | None = None

        def __post_init__(self) -> None:
            self.path = vm.canonical_path(self.path)
            vm.value_checked(self.value)
            if self.session is not None:
                vm.session_ref_checked(self.session)

    class FeedRead(Request):
        project_id: Annotated[str, Meta(pattern=vm.PROJECT_ID)]
        since: text(1, vm.EVENT_ID_MAX) | None = None  # type: ignore[valid-type]
        before: text(1, vm.EVENT_ID_MAX) | None = None  # type: ignore[valid-type]
        kind: str | Annotated[list[FeedKind], Meta(min_length=1)] | None = None
        session_id: text(1, vm.SESSION_ID_MAX, vm.ONE_LINE) | None = None  # type: ignore[valid-type]
        limit: Annotated[int, Meta(ge=1, le=vm.LIMIT_MAX)] = 50

    class InboxWait(Request):
        wait_seconds: Annotated[float, Meta(ge=0, le=vm.WAIT_MAX)] = 30.0
        since: text(1, vm.EVENT_ID_MAX) | None = None  # type: ignore[valid-type]
        limit: Annotated[int, Meta(ge=1, le=vm.LIMIT_MAX)] = 50

    return {"signal_append": SignalAppend, "brain_put": BrainPut, "feed_read": FeedRead, "inbox_wait": InboxWait}


def msgspec_refusal(text: str) -> Refusal:
    """msgspec reports one string, `Expected ... - at `$.member``: the member is parsed out of it."""
    message, _, where = text.rpartition(" - at `") if " - at `" in text else (text, "", "$")
    member = where.rstrip("`").removeprefix("$").lstrip(".")
    field = member.split(".")[0].split("[")[0] or "(arguments)"
    if message.startswith("Object contains unknown field `"):
        field = message.split("`")[1]
    code = "payload_too_large" if "length <=" in message and field in vm.TOO_LARGE else "invalid_argument"
    return Refusal(code, field, f"argument {field}: {message or text}")


def msgspec_check(kind: type) -> vm.Check:
    import msgspec

    def check(args: dict[str, Any]) -> Any:
        try:
            return msgspec.convert(args, kind, strict=True)
        except msgspec.ValidationError as exc:
            raise msgspec_refusal(str(exc)) from None

    return check


def msgspec_candidate() -> Candidate:
    import msgspec

    kinds = msgspec_types()

    def raw(op: str) -> dict[str, Any]:
        return dict(msgspec.json.schema(kinds[op]))

    return Candidate({op: msgspec_check(kind) for op, kind in kinds.items()}, lambda op: vm.inline_refs(raw(op)), raw)


def msgspec_rest_decoders() -> dict[str, Callable[[bytes], Any]]:
    try:
        import msgspec
    except ImportError:
        return {}
    kind = msgspec_types()["signal_append"]
    decoder: Any = msgspec.json.Decoder(kind, strict=True)
    return {
        "orjson.loads + msgspec.convert": lambda body: msgspec.convert(orjson.loads(body), kind, strict=True),
        "msgspec.json.Decoder(type).decode": decoder.decode,
    }
