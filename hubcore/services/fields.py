"""Constrained types for typed requests, built from each service's own constants.

A limit lives in its service (`events.SUMMARY_MAX`, `idempotency.IDEMPOTENCY_KEY_MAX`, ...) and
these types refer to it; only the limits shared by several services (pages, waits) live here.
Published schemas state only the limits the hub applies to the raw value (`maxLength`, `minimum`,
`maximum`, `pattern`); a limit applied after trimming goes in the description and
`x-max-chars-trimmed` (a client checking `maxLength` on the raw text would refuse padded text the
hub accepts), a serialized size in `x-max-bytes-serialized`, a size in UTF-8 bytes (an entry's
content) in `x-max-bytes-utf8`, a canonical path's bytes in `x-max-bytes-canonical`. The
limit-parity test (tests/adversarial/test_limit_parity.py) derives its cases from exactly these members.
"""

# No `from __future__ import annotations`: pydantic reads these annotations.

from typing import Annotated, Any

import orjson
from pydantic import AfterValidator, Field, GetCoreSchemaHandler, GetJsonSchemaHandler, StringConstraints
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import PydanticCustomError, core_schema

from hubcore.errors import HubError
from hubcore.services import entries, ids, validate
from hubcore.services import events as ev
from hubcore.services import idempotency as idem

EVENT_ID_MAX = 64  # a cursor names an event id (26 characters); longer text is never one
# Pages (feed, inbox) and waits (inbox_wait, notify_wait) share these; the inbox service re-exports them.
PAGE_DEFAULT, PAGE_MAX = 50, 500
WAIT_DEFAULT, WAIT_MAX = 30.0, 60.0
ACTOR_MAX = 64  # an actor named in a filter: an agent id or one of the hub's own actors
PROJECT_ID_PATTERN = "^" + validate.PROJECT_ID_RE.pattern + "$"


# `Label`'s rule as a pattern: whitespace around (trimmed away), then no control character
# (validate.NOT_LABEL_RE) and at least one character that is not whitespace.
_NOT_LABEL = "\\x00-\\x1f\\x7f-\\x9f\\u2028\\u2029"
LABEL_PATTERN = f"^\\s*[^{_NOT_LABEL}]*[^\\s{_NOT_LABEL}][^{_NOT_LABEL}]*\\s*$"


# `Trimmed`'s one-line rule as a pattern: whitespace around (trimmed away) and no line break or NUL
# between (validate.NOT_ONE_LINE_RE).
ONE_LINE_PATTERN = "^\\s*[^\\x00\\n\\r\\x0b\\x0c\\x1c-\\x1e\\x85\\u2028\\u2029]*\\s*$"


# One line (as above, nothing trimmed) holding a character that is not whitespace.
_LINE_BREAKS = "\\x00\\n\\r\\x0b\\x0c\\x1c-\\x1e\\x85\\u2028\\u2029"
NOT_BLANK_LINE_PATTERN = f"^[^{_LINE_BREAKS}]*[^\\s{_LINE_BREAKS}][^{_LINE_BREAKS}]*$"
ONE_LINE_RAW_PATTERN = f"^[^{_LINE_BREAKS}]*$"  # one line, nothing trimmed (an id)


# Holds a character `str.strip` keeps (every character `str.isspace` is not), spelled out: regex
# `\s` differs between Python and the ECMA dialect OpenAPI readers use.
SPACE = "\\t-\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000"
NOT_BLANK_PATTERN = f"[^{SPACE}]"
# A finite float as Python's repr writes a timestamp (a cursor carries one: it round-trips exactly).
# No exponent: one could overflow to infinity, and a timestamp's repr never takes one; the cursors'
# length limits keep the digits finite.
FLOAT_REPR_PATTERN = "-?[0-9]+(?:\\.[0-9]+)?"


def _one_line(value: str) -> str:
    if not validate.one_line(value):
        raise PydanticCustomError("one_line", "must be one line")
    return value


def _not_blank(value: str) -> str:
    if not value.strip():
        raise PydanticCustomError("blank", "must not be blank")
    return value


class Trimmed:
    """Text stored trimmed (Python's `str.strip`, as the services always did), then held to one
    line (unless `lines`) and `max_chars`. Over the limit is `string_too_long`, so content members
    answer 413."""

    def __init__(self, max_chars: int, *, lines: bool = False) -> None:
        self.max_chars, self.lines = max_chars, lines

    def __call__(self, value: str) -> str:
        text = value.strip()
        if not self.lines:
            _one_line(text)
        if len(text) > self.max_chars:
            raise PydanticCustomError(
                "string_too_long", "longer than {max_length} characters", {"max_length": self.max_chars}
            )
        return text

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return core_schema.no_info_after_validator_function(self, core_schema.str_schema(strict=True))

    def __get_pydantic_json_schema__(
        self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        shape = "text" if self.lines else "one line"
        out: JsonSchemaValue = {
            "type": "string",
            "x-max-chars-trimmed": self.max_chars,
            "description": f"{shape}, at most {self.max_chars} characters once trimmed",
        }
        if not self.lines:
            out["pattern"] = ONE_LINE_PATTERN
        return out


class Label:
    """A label (a display name): stored trimmed, not blank, at most `max_chars` characters once
    trimmed, no control character (validate.label's rule and wording)."""

    def __init__(self, max_chars: int) -> None:
        self.max_chars = max_chars

    def __call__(self, value: str) -> str:
        text = value.strip()
        if not text or len(text) > self.max_chars or not validate.is_label(text):
            raise PydanticCustomError(
                "label",
                "must be one line of 1 to {max_chars} characters without control characters",
                {"max_chars": self.max_chars},
            )
        return text

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return core_schema.no_info_after_validator_function(self, core_schema.str_schema(strict=True))

    def __get_pydantic_json_schema__(
        self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return {
            "type": "string",
            "minLength": 1,
            "x-max-chars-trimmed": self.max_chars,
            "pattern": LABEL_PATTERN,
            "description": f"one line without control characters, 1 to {self.max_chars} characters once trimmed",
        }


class Serialized:
    """Text stored as a payload's `body`: not blank, and at most `max_bytes` once JSON-encoded (the
    payload's limit less its wrapping). Over it is `string_too_long`: 413 for a content member."""

    def __init__(self, max_bytes: int, *, blank: bool = False) -> None:
        self.max_bytes, self.blank = max_bytes, blank

    def __call__(self, value: str) -> str:
        if not self.blank:
            _not_blank(value)
        if len(value) > self.max_bytes or len(orjson.dumps(value)) - 2 > self.max_bytes:
            raise PydanticCustomError(
                "string_too_long", "longer than {max_length} bytes encoded", {"max_length": self.max_bytes}
            )
        return value

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return core_schema.no_info_after_validator_function(self, core_schema.str_schema(strict=True))

    def __get_pydantic_json_schema__(
        self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        limit = {"x-max-bytes-serialized": self.max_bytes}
        if self.blank:
            return {"type": "string", **limit, "description": f"at most {self.max_bytes} bytes once JSON-encoded"}
        return {
            "type": "string",
            "minLength": 1,
            **limit,
            "description": f"not blank; at most {self.max_bytes} bytes once JSON-encoded",
        }


class WholeNumber:
    """An integer from `minimum` to `maximum`; a whole float (3600.0) counts, as JSON Schema's
    `integer` does, and is taken as the integer. Booleans, fractions and strings are refused."""

    def __init__(self, minimum: int, maximum: int) -> None:
        self.minimum, self.maximum = minimum, maximum

    def __call__(self, value: Any) -> int:
        whole = isinstance(value, float) and value.is_integer()
        if isinstance(value, bool) or not (isinstance(value, int) or whole):
            raise PydanticCustomError("int_type", "must be of type integer")
        number = int(value)
        if number < self.minimum:
            raise PydanticCustomError("greater_than_equal", "must be at least {ge}", {"ge": self.minimum})
        if number > self.maximum:
            raise PydanticCustomError("less_than_equal", "must be at most {le}", {"le": self.maximum})
        return number

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return core_schema.no_info_plain_validator_function(self)

    def __get_pydantic_json_schema__(
        self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return {"type": "integer", "minimum": self.minimum, "maximum": self.maximum}


class KindFilter:
    """A feed's kind filter: one kind, a comma-separated list, or a list of kinds, as a tuple of
    known kinds (empty: every kind). The events service's own check names the unknown kinds."""

    def __call__(self, value: Any) -> tuple[str, ...]:
        return ev.check_kinds(value)

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return core_schema.no_info_plain_validator_function(self)

    def __get_pydantic_json_schema__(
        self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        known = "|".join(ev.KINDS)
        # Empty (every kind), or known kinds separated by commas (blanks around and between dropped).
        # Parts between commas, each blank or a known kind with blanks around (`events.check_kinds`).
        blank = f"[{SPACE}]*"
        listed = f"^$|^(?:{blank},)*{blank}(?:{known}){blank}(?:,{blank}(?:(?:{known}){blank})?)*$"
        return {
            "description": "only these kinds: one kind, a comma-separated list, or a list",
            "anyOf": [
                {"type": "string", "pattern": listed},
                {"type": "array", "items": {"enum": list(ev.KINDS)}, "minItems": 1},
            ],
        }


class SubscribedKinds:
    """A subscription's kinds: a list of one or more known kinds, each once."""

    def __call__(self, value: Any) -> tuple[str, ...]:
        if not isinstance(value, list):
            raise PydanticCustomError("list_type", "must be of type array")
        if not value:
            raise PydanticCustomError("too_short", "must have at least {min_length} items", {"min_length": 1})
        if not all(isinstance(k, str) for k in value) or len(set(value)) != len(value):
            raise PydanticCustomError("unique", "must list known kinds, each once")
        return ev.check_kinds(value)

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return core_schema.no_info_plain_validator_function(self)

    def __get_pydantic_json_schema__(
        self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return {"type": "array", "minItems": 1, "uniqueItems": True, "items": {"enum": list(ev.KINDS)}}


class EntryPath:
    """A brain (or knowledge base) path, canonicalised by `entries.canonical` (its refusals name
    the member). The limit is in bytes of the canonical path, which a character count of the raw
    text cannot state (a long path may canonicalise short): `x-max-bytes-canonical`."""

    def __init__(self, *, allow_root: bool) -> None:
        self.allow_root = allow_root

    def __call__(self, value: str) -> str:
        return entries.canonical(value, allow_root=self.allow_root)

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return core_schema.no_info_after_validator_function(self, core_schema.str_schema(strict=True))

    def __get_pydantic_json_schema__(
        self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        limit = entries.PATH_MAX_BYTES
        return {
            "type": "string",
            "minLength": 1,
            "x-max-bytes-canonical": limit,
            "pattern": entries.path_pattern(entries.BRAIN_NAMESPACES, allow_root=self.allow_root),
            "description": f"/fs/<file path> or /kv/<key>; canonicalised (., .., trailing slash), "
            f"at most {limit} bytes once canonical",
        }


class EntryContent:
    """An entry's text: at most `max_bytes` as UTF-8 (`entries.encode`'s rule). A character count
    cannot state a byte limit (an accented letter is two bytes), so the schema says
    `x-max-bytes-utf8`. Over it is `string_too_long`: 413 for the content member."""

    def __init__(self, max_bytes: int, *, what: str = "the entry's text") -> None:
        self.max_bytes, self.what = max_bytes, what

    def __call__(self, value: str) -> str:
        if len(value) * 4 <= self.max_bytes:  # UTF-8 takes at most 4 bytes a character: no need to encode
            return value
        try:
            entries.encode(value, limit=self.max_bytes)
        except HubError:
            raise PydanticCustomError(
                "bytes_too_long", "longer than {max_length} bytes as UTF-8", {"max_length": self.max_bytes}
            ) from None
        return value

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return core_schema.no_info_after_validator_function(self, core_schema.str_schema(strict=True))

    def __get_pydantic_json_schema__(
        self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return {
            "type": "string",
            "x-max-bytes-utf8": self.max_bytes,
            "description": f"{self.what}, at most {self.max_bytes} bytes as UTF-8",
        }


def _payload(value: dict[str, Any]) -> dict[str, Any]:
    return ev.check_payload(value)  # its own refusals (size 413, a wide integer) name the member


ProjectId = Annotated[str, StringConstraints(pattern=PROJECT_ID_PATTERN), Field(description="project id (slug)")]
AGENT_ID_PATTERN = "^" + validate.AGENT_ID_RE.pattern + "$"
AgentId = Annotated[str, StringConstraints(pattern=AGENT_ID_PATTERN), Field(description="agent id (slug)")]
DisplayName = Annotated[str, Label(validate.DISPLAY_NAME_MAX)]
EventId = Annotated[str, StringConstraints(min_length=1, max_length=EVENT_ID_MAX), Field(description="event id")]
# A page cursor: an event id as the hub mints them (a ULID), nothing else.
Cursor = Annotated[str, StringConstraints(pattern=ids.ID_RE.pattern), Field(description="an event id")]
Kinds = Annotated[tuple[str, ...], KindFilter()]
Summary = Annotated[str, Trimmed(ev.SUMMARY_MAX)]
# A body is stored as `payload.body`, so the payload's limit less that wrapping bounds it (the
# service checks the merged payload again when it carries other members too).
BODY_MAX_BYTES = ev.PAYLOAD_MAX - len('{"body":""}')
Body = Annotated[
    str,
    Serialized(BODY_MAX_BYTES, blank=True),
    Field(description=f"the longer text; stored as payload.body (at most {BODY_MAX_BYTES} bytes once JSON-encoded)"),
]
AnswerBody = Annotated[str, Serialized(BODY_MAX_BYTES)]
Payload = Annotated[
    dict[str, Any],
    AfterValidator(_payload),
    Field(
        description=f"free-form JSON object (at most {ev.PAYLOAD_MAX} bytes serialized)",
        json_schema_extra={"x-max-bytes-serialized": ev.PAYLOAD_MAX},
    ),
]
ActorName = Annotated[
    str, StringConstraints(min_length=1, max_length=ACTOR_MAX), Field(description="only items or events by this actor")
]
SessionId = Annotated[
    str,
    StringConstraints(min_length=1, max_length=ev.SESSION_ID_MAX),
    AfterValidator(_one_line),
    Field(json_schema_extra={"pattern": ONE_LINE_RAW_PATTERN}),
]
IdempotencyKey = Annotated[
    str,
    StringConstraints(min_length=1, max_length=idem.IDEMPOTENCY_KEY_MAX),
    AfterValidator(_not_blank),
    AfterValidator(_one_line),
    Field(
        description="retrying with the same key returns the original result and writes nothing new",
        json_schema_extra={"pattern": NOT_BLANK_LINE_PATTERN},
    ),
]
# The one `if_version` of every surface (session brains and knowledge bases alike): `absent`, or
# a version as the hub writes it (`entries.require_version` decides whether it holds).
IF_VERSION_PATTERN = entries.IF_VERSION_RE.pattern
IfVersion = Annotated[
    str,
    StringConstraints(pattern=IF_VERSION_PATTERN),
    Field(
        description=f"write only if the stored version is this {entries.VERSION_PREFIX}<64 hex digits>, or "
        f"'{entries.ABSENT}' to create only"
    ),
]
Limit = Annotated[int, Field(ge=1, le=PAGE_MAX, description=f"page size, 1 to {PAGE_MAX}")]
WaitSeconds = Annotated[
    float,
    Field(
        ge=0,
        le=WAIT_MAX,
        allow_inf_nan=False,
        description="how long to wait, at most 60 seconds (the hub answers within 55); 0 polls once",
    ),
]
