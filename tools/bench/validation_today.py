"""Today's two halves of a request check, for `tools/bench/validation.py`.

`TODAY`: the MCP input schemas of four tools as hand-written at commit 8bcf7d0 (a snapshot: the
benchmark keeps comparing against the same thing while the tools change). `PARSERS`: hand-written
checks in the style of `hubcore.services.validate`, into plain dataclasses, applying every rule
the services apply (the floor for a library to beat, and the second half of today's path).
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tools.bench import validation_models as vm
from tools.bench.validation_models import Refusal, invalid

PROJECT: dict[str, Any] = {"type": "string", "pattern": vm.PROJECT_ID, "description": "project id (slug)"}
EVENT_ID: dict[str, Any] = {"type": "string", "minLength": 1, "maxLength": 64, "description": "event id"}
SESSION_ID: dict[str, Any] = {"type": "string", "minLength": 1, "maxLength": 128}
SESSION_REF: dict[str, Any] = {
    "description": "a session: its id, or {session_id}, or {agent, name, project_id}",
    "oneOf": [
        {"type": "string", "minLength": 1},
        {
            "type": "object",
            "properties": {"session_id": {"type": "string"}},
            "required": ["session_id"],
            "additionalProperties": False,
        },
        {
            "type": "object",
            "properties": {"agent": {"type": "string"}, "name": {"type": "string"}, "project_id": PROJECT},
            "required": ["agent", "name"],
            "additionalProperties": False,
        },
    ],
}


def inputs(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = list(required)
    return schema


TODAY: dict[str, dict[str, Any]] = {
    "signal_append": inputs(
        {
            "project_id": PROJECT,
            "kind": {"enum": list(vm.SIGNAL_KINDS), "default": "signal"},
            "summary": {"type": "string", "minLength": 1, "maxLength": 1024, "description": "one line"},
            "body": {"type": "string", "description": "the longer text; stored as payload.body"},
            "payload": {"type": "object", "description": "free-form JSON object (at most 256 KiB)"},
            "session_id": {"type": "string", "maxLength": 128},
            "idempotency_key": {"type": "string", "minLength": 1, "maxLength": 200},
            "expires_in_seconds": {"type": "integer", "minimum": 60, "maximum": 2_592_000},
            "on_expiry": {"enum": ["approve", "decline"]},
        },
        ("project_id",),
    ),
    "brain_put": inputs(
        {
            "path": {"type": "string", "minLength": 1, "maxLength": 2048},
            "value": {"type": "string"},
            "store": {"enum": ["session", "project"]},
            "session": SESSION_REF,
            "session_id": SESSION_ID,
            "if_version": {"type": "string"},
            "project_id": PROJECT,
        },
        ("path", "value", "store"),
    ),
    "feed_read": inputs(
        {
            "project_id": PROJECT,
            "since": EVENT_ID,
            "before": EVENT_ID,
            "kind": {
                "anyOf": [{"type": "string"}, {"type": "array", "items": {"enum": list(vm.KINDS)}, "minItems": 1}]
            },
            "session_id": {"type": "string", "maxLength": 128},
            "limit": {"type": "integer", "minimum": 1, "maximum": 500, "default": 50},
        },
        ("project_id",),
    ),
    "inbox_wait": inputs(
        {
            "wait_seconds": {"type": "number", "minimum": 0, "maximum": 60, "default": 30},
            "since": EVENT_ID,
            "limit": {"type": "integer", "minimum": 1, "maximum": 500, "default": 50},
        }
    ),
}


# The hand checks (validate.py's style): JSON null reads as absent; booleans are not integers.


def known(args: Mapping[str, Any], fields: frozenset[str]) -> None:
    if not isinstance(args, Mapping):
        raise invalid("(arguments)", "must be an object")
    extra = next((k for k in args if k not in fields), None)
    if extra is not None:
        raise invalid(str(extra)[:64], "is not a known argument")


def text(
    args: Mapping[str, Any], field: str, *, min_len: int = 0, max_len: int | None = None, line: bool = False
) -> str | None:
    value = args.get(field)
    if value is None:
        return None
    if not isinstance(value, str):
        raise invalid(field, "must be a string")
    if len(value) < min_len or (max_len is not None and len(value) > max_len) or (line and not vm.one_line(value)):
        raise invalid(field, f"must be one line of {min_len} to {max_len} characters")
    return value


def integer(args: Mapping[str, Any], field: str, low: int, high: int) -> int | None:
    value = args.get(field)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise invalid(field, f"must be an integer from {low} to {high}")
    return value


def choice(args: Mapping[str, Any], field: str, options: tuple[str, ...], default: str | None) -> str | None:
    value = args.get(field)
    if value is None:
        return default
    if not isinstance(value, str) or value not in options:
        raise invalid(field, f"must be one of {', '.join(options)}")
    return value


def project(args: Mapping[str, Any], field: str = "project_id", *, required: bool = True) -> str | None:
    value = args.get(field)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not vm.PROJECT_RE.fullmatch(value):
        raise invalid(field, "must be 1 to 63 lowercase letters, digits or hyphens")
    return value


@dataclass(frozen=True, slots=True)
class SignalAppend:
    project_id: str
    kind: str
    summary: str
    payload: dict[str, Any]
    session_id: str | None
    idempotency_key: str | None
    expires_in_seconds: int | None
    on_expiry: str | None


SIGNAL_FIELDS = frozenset(TODAY["signal_append"]["properties"])


def parse_signal(args: Mapping[str, Any]) -> SignalAppend:
    known(args, SIGNAL_FIELDS)
    pid = project(args)
    kind = choice(args, "kind", vm.SIGNAL_KINDS, "signal")
    raw = text(args, "summary")
    body = text(args, "body")
    payload = args.get("payload")
    if payload is not None and not isinstance(payload, dict):
        raise invalid("payload", "must be a JSON object")
    checked = vm.payload_checked(payload) if payload is not None else {}
    summary = vm.summary_of(vm.trimmed_summary(raw) if raw is not None else None, body, checked)
    key = text(args, "idempotency_key", min_len=1, max_len=vm.KEY_MAX, line=True)
    if key is not None and not key.strip():
        raise invalid("idempotency_key", "must not be blank")
    return SignalAppend(
        str(pid),
        str(kind),
        summary,
        checked,
        text(args, "session_id", min_len=1, max_len=vm.SESSION_ID_MAX, line=True),
        key,
        integer(args, "expires_in_seconds", vm.EXPIRES_MIN, vm.EXPIRES_MAX),
        choice(args, "on_expiry", ("approve", "decline"), None),
    )


@dataclass(frozen=True, slots=True)
class BrainPut:
    path: str
    value: str
    store: str
    session: Any
    session_id: str | None
    if_version: str | None
    project_id: str | None


BRAIN_FIELDS = frozenset(TODAY["brain_put"]["properties"])


def parse_brain_put(args: Mapping[str, Any]) -> BrainPut:
    known(args, BRAIN_FIELDS)
    path = text(args, "path")
    value = text(args, "value")
    if path is None or value is None:
        raise invalid("path" if path is None else "value", "is required")
    store = choice(args, "store", ("session", "project"), None)
    if store is None:
        raise invalid("store", "is required")
    version = text(args, "if_version")
    if version is not None and not vm.IF_VERSION_RE.fullmatch(version):
        raise invalid("if_version", "must be absent or sha256:<64 hex>")
    session = args.get("session")
    return BrainPut(
        vm.canonical_path(path),
        vm.value_checked(value),
        store,
        vm.session_ref_checked(session) if session is not None else None,
        text(args, "session_id", min_len=1, max_len=vm.SESSION_ID_MAX, line=True),
        version,
        project(args, required=False),
    )


@dataclass(frozen=True, slots=True)
class FeedRead:
    project_id: str
    since: str | None
    before: str | None
    kind: tuple[str, ...]
    session_id: str | None
    limit: int


FEED_FIELDS = frozenset(TODAY["feed_read"]["properties"])


def kinds(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    parts = value.split(",") if isinstance(value, str) else value
    if not isinstance(parts, list) or not parts or not all(isinstance(p, str) for p in parts):
        raise invalid("kind", "must be a string or a non-empty list of strings")
    found = tuple(dict.fromkeys(p.strip() for p in parts if p.strip()))
    if not found or any(k not in vm.KINDS for k in found):
        raise invalid("kind", f"must name known kinds: {', '.join(vm.KINDS)}")
    return found


def parse_feed_read(args: Mapping[str, Any]) -> FeedRead:
    known(args, FEED_FIELDS)
    limit = integer(args, "limit", 1, vm.LIMIT_MAX)
    return FeedRead(
        str(project(args)),
        text(args, "since", min_len=1, max_len=vm.EVENT_ID_MAX),
        text(args, "before", min_len=1, max_len=vm.EVENT_ID_MAX),
        kinds(args.get("kind")),
        text(args, "session_id", min_len=1, max_len=vm.SESSION_ID_MAX, line=True),
        50 if limit is None else limit,
    )


@dataclass(frozen=True, slots=True)
class InboxWait:
    wait_seconds: float
    since: str | None
    limit: int


WAIT_FIELDS = frozenset(TODAY["inbox_wait"]["properties"])


def parse_inbox_wait(args: Mapping[str, Any]) -> InboxWait:
    known(args, WAIT_FIELDS)
    wait = args.get("wait_seconds")
    if wait is None:
        wait = 30.0
    # `not 0 <= wait <= 60` is what refuses NaN: every comparison with NaN is false.
    if isinstance(wait, bool) or not isinstance(wait, int | float) or not 0 <= wait <= vm.WAIT_MAX:
        raise invalid("wait_seconds", "must be a number from 0 to 60")
    limit = integer(args, "limit", 1, vm.LIMIT_MAX)
    return InboxWait(
        float(wait), text(args, "since", min_len=1, max_len=vm.EVENT_ID_MAX), 50 if limit is None else limit
    )


PARSERS: dict[str, Any] = {
    "signal_append": parse_signal,
    "brain_put": parse_brain_put,
    "feed_read": parse_feed_read,
    "inbox_wait": parse_inbox_wait,
}

__all__ = ["PARSERS", "TODAY", "Refusal"]
