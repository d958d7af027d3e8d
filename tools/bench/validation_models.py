"""The candidates of `tools/bench/validation.py`: the hub's rules for four requests, once per library.

The limits are the services' constants as of commit 8bcf7d0 (copied, so that the benchmark keeps
measuring the same rules while the services move). Rules no library states (trim then check the
length, one line, the payload's serialized size and its integers, the canonical brain path) are
the shared functions below, called from each library's own hook; they raise `Refusal`, which every
library lets through unchanged. A library's own constraint errors are mapped to a `Refusal`.
"""

# No `from __future__ import annotations`: pydantic and msgspec read the annotations of classes
# built inside the factories below, which string annotations would hide from them.

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib.metadata import version
from typing import Any

import orjson
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError as SchemaError

from hubcore.services import requests

SUMMARY_MAX = 1024
PAYLOAD_MAX = 256 * 1024
SESSION_ID_MAX = 128
KEY_MAX = 200
EVENT_ID_MAX = 64
PATH_MAX_BYTES = 512
VALUE_MAX = 4 * 1024 * 1024
EXPIRES_MIN, EXPIRES_MAX = 60, 2_592_000
LIMIT_MAX = 500
WAIT_MAX = 60.0
PROJECT_ID = r"^[a-z0-9][a-z0-9-]{0,62}$"
NOT_ONE_LINE = "\x00\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029"
ONE_LINE = f"^[^{NOT_ONE_LINE}]*$"
IF_VERSION = r"^(absent|sha256:[0-9a-f]{64})$"
SIGNAL_KINDS = ("signal", "finished", "idea", "approval")
KINDS = (
    "signal",
    "finished",
    "question",
    "answer",
    "approval",
    "artifact",
    "session",
    "idea",
    "system",
    "enrol_request",
)
OPS = ("signal_append", "brain_put", "feed_read", "inbox_wait")
# Content members: over their size limit is payload_too_large (413) on both surfaces; every other
# limit (ids, keys, paths, numbers) is invalid_argument (400). The rule proposed in the report.
TOO_LARGE = frozenset({"summary", "payload", "value", "body"})

PROJECT_RE = re.compile(PROJECT_ID.strip("^$"))
NOT_ONE_LINE_RE = re.compile(f"[{NOT_ONE_LINE}]")
IF_VERSION_RE = re.compile(IF_VERSION.strip("^$"))

Check = Callable[[dict[str, Any]], Any]


class Refusal(Exception):
    def __init__(self, code: str, field: str, message: str) -> None:
        super().__init__(message)
        self.code, self.field, self.message = code, field, message


def invalid(field: str, rule: str) -> Refusal:
    return Refusal("invalid_argument", field, f"{field} {rule}")


@dataclass(frozen=True)
class Candidate:
    checks: dict[str, Check]
    schema: Callable[[str], dict[str, Any]]  # the input schema as the hub would publish it
    raw_schema: Callable[[str], dict[str, Any]] | None = None  # the library's own output, unedited


# The rules no library states, shared by every candidate.


def one_line(text: str) -> bool:
    return NOT_ONE_LINE_RE.search(text) is None


def trimmed_summary(value: str) -> str:
    summary = value.strip()
    if not one_line(summary):
        raise invalid("summary", "must be one line")
    if len(summary) > SUMMARY_MAX:
        raise Refusal(
            "payload_too_large", "summary", f"summary is {len(summary)} characters; the limit is {SUMMARY_MAX}"
        )
    return summary


def summary_of(summary: str | None, body: str | None, payload: Mapping[str, Any] | None) -> str:
    """A trimmed summary, or the first line of the body when it is missing or blank."""
    if summary:
        return summary
    text = body if body is not None else (payload or {}).get("body")
    first = text.strip().splitlines()[0].strip()[:SUMMARY_MAX] if isinstance(text, str) and text.strip() else ""
    if first and one_line(first):
        return first
    raise invalid("summary", "is required (or a string body to take it from)")


def payload_checked(value: dict[str, Any]) -> dict[str, Any]:
    try:
        size = len(orjson.dumps(value))
    except TypeError:
        raise invalid("payload", "holds an integer beyond 64 bits; send it as a string") from None
    if size > PAYLOAD_MAX:
        raise Refusal("payload_too_large", "payload", f"payload is {size} bytes; the limit is {PAYLOAD_MAX}")
    return value


def canonical_path(path: str) -> str:
    if not path or any(ord(c) < 0x20 or c == "\x7f" for c in path) or "\\" in path:
        raise invalid("path", "must be non-empty, without control characters or backslashes")
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if not parts or parts[0] not in ("fs", "kv"):
        raise invalid("path", "must start with /fs/ or /kv/")
    stack: list[str] = []
    for part in parts[1:]:
        if part != "..":
            stack.append(part)
        elif stack:
            stack.pop()
    if not stack:
        raise invalid("path", "names a namespace, not an entry")
    result = f"/{parts[0]}/" + "/".join(stack)
    if len(result.encode()) > PATH_MAX_BYTES:
        raise invalid("path", f"is over {PATH_MAX_BYTES} bytes")
    return result


def value_checked(value: str) -> str:
    if len(value) > VALUE_MAX or len(value.encode()) > VALUE_MAX:
        raise Refusal("payload_too_large", "value", f"value is over {VALUE_MAX} bytes")
    return value


def session_ref_checked(ref: Any) -> Any:
    """A session: its id, {session_id}, or {agent, name[, project_id]}."""
    if isinstance(ref, str):
        if not ref:
            raise invalid("session", "must not be empty")
        return ref
    if not isinstance(ref, Mapping):
        raise invalid("session", "must be a string or an object")
    keys = set(ref)
    if keys == {"session_id"} and isinstance(ref["session_id"], str):
        return dict(ref)
    named = {"agent", "name"} <= keys <= {"agent", "name", "project_id"}
    if named and all(isinstance(v, str) for v in ref.values()):
        return dict(ref)
    raise invalid("session", "must be {session_id} or {agent, name, project_id}")


def inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """A library's schema as the hub publishes its own: `default: null` dropped (the hub's schema
    generator never writes it; a library's may), then the hub's `requests.inline_refs` ($defs
    inlined, no titles, `anyOf [X, null]` folded into X where X is that simple)."""

    def drop(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: drop(v) for k, v in node.items() if not (k == "default" and v is None)}
        return [drop(v) for v in node] if isinstance(node, list) else node

    return requests.inline_refs(drop(schema))


def versions() -> str:
    names = ("jsonschema", "pydantic", "pydantic_core", "msgspec")
    found = []
    for name in names:
        try:
            found.append(f"{name} {version(name)}")
        except Exception:  # not installed
            continue
    return ", ".join(found)


# jsonschema: today's check (Tool.check_arguments at 8bcf7d0), and today's full path.


def schema_refusal(error: SchemaError) -> Refusal:
    path = [str(p) for p in error.absolute_path]
    rule, value, instance = error.validator, error.validator_value, error.instance
    if rule == "required" and isinstance(instance, Mapping):
        path.append(next((p for p in value if p not in instance), value[0]))
    elif rule == "additionalProperties" and isinstance(instance, Mapping):
        path.append(next((k for k in instance if k not in error.schema.get("properties", {})), "?"))
    where = ".".join(path) or "(arguments)"
    shown = value if not isinstance(value, list | dict) else "(see tools/list)"
    return Refusal("invalid_argument", where.split(".")[0], f"argument {where}: breaks {rule} {shown}")


def schema_check(validator: Draft202012Validator) -> Check:
    def check(arguments: dict[str, Any]) -> dict[str, Any]:
        args = dict(arguments or {})
        error = next(iter(sorted(validator.iter_errors(args), key=lambda e: list(map(str, e.path)))), None)
        if error is not None:
            raise schema_refusal(error)
        return args

    return check


def jsonschema_candidate() -> Candidate:
    from tools.bench import validation_today as snap

    checks = {op: schema_check(Draft202012Validator(snap.TODAY[op])) for op in OPS}
    return Candidate(checks, lambda op: snap.TODAY[op])


def today_candidate() -> Candidate:
    """What a tool call pays now: the schema check, then the service's own hand checks."""
    from tools.bench import validation_today as hand

    snap = hand
    schema = {op: schema_check(Draft202012Validator(snap.TODAY[op])) for op in OPS}

    def both(op: str) -> Check:
        first, second = schema[op], hand.PARSERS[op]
        return lambda args: second(first(args))

    return Candidate({op: both(op) for op in OPS}, lambda op: snap.TODAY[op])


def hand_candidate() -> Candidate:
    from tools.bench import validation_today as hand

    return Candidate(dict(hand.PARSERS), lambda op: hand.TODAY[op])


def pydantic_candidate() -> Candidate:
    from tools.bench import validation_libs as vp

    return vp.pydantic_candidate()


def typeddict_candidate() -> Candidate:
    from tools.bench import validation_libs as vp

    return vp.typeddict_candidate()


def msgspec_candidate() -> Candidate:
    from tools.bench import validation_libs as vs

    return vs.msgspec_candidate()


def rest_decoders() -> dict[str, Callable[[bytes], Any]]:
    from tools.bench import validation_libs as vp
    from tools.bench import validation_today as hand

    decoders: dict[str, Callable[[bytes], Any]] = {
        "orjson.loads + hand parse": lambda body: hand.PARSERS["signal_append"](orjson.loads(body)),
        **vp.rest_decoders(),
    }
    return {**decoders, **vp.msgspec_rest_decoders()}


def factories() -> dict[str, Callable[[], Candidate]]:
    found: dict[str, Callable[[], Candidate]] = {
        "jsonschema": jsonschema_candidate,
        "today": today_candidate,
        "hand": hand_candidate,
        "pydantic": pydantic_candidate,
        "pydantic-td": typeddict_candidate,
    }
    try:
        import msgspec  # noqa: F401  (only asking whether it is there)
    except ImportError:
        return found
    return {**found, "msgspec": msgspec_candidate}
