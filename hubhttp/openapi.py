"""`GET /api/v1/openapi.json`: the REST API described, generated from the app's own URL map.

The paths and methods come from the URL map (every `/api/v1` rule, `<x>` written `{x}`), so a
route cannot be served without being listed: `build` refuses a rule that has no doc record in
`hubhttp.api.docs`. The record holds what the map cannot know: a summary, the query parameters,
the request body (a typed request model's schema where the operation has one, else written in
the record), the success status and response schema, and the problem codes the route can answer.
Every problem is an RFC 9457 document with the hub's `code`. The document is built on its first use
(the first request for it, not while the hub starts: it and the doc records' imports were a third of
building the app), once per process for every app with the same URL map (a test run builds hundreds
of apps), and served as cached bytes (public, like the bootstrap guide: DESIGN section 5).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson
from quart import Blueprint, Quart, Response, current_app
from werkzeug.routing import Map, Rule

from hubhttp.api.values import not_null
from hubhttp.problems import PROBLEM_TYPE

if TYPE_CHECKING:  # the records (and the response models they import) load when the document is built
    from hubhttp.api.docs import Doc, Schema

API_PREFIX = "/api/v1"
DOCUMENT_KEY = "openapi_document"
VERSION_KEY = "openapi_version"
# The gate's answers, whatever the route: a malformed target or query (400), a slow body (408).
GATE_STATUSES = (400, 408)
BODY_STATUSES = (413, 415)  # any request with a body: over 4 MiB, or not sent as JSON
BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})

PROBLEM: Schema = {
    "type": "object",
    "required": ["type", "title", "status", "detail", "code"],
    "properties": {
        "type": {"type": "string"},
        "title": {"type": "string"},
        "status": {"type": "integer"},
        "detail": {"type": "string"},
        "code": {"type": "string", "description": "the hub's error code"},
        "details": {"type": "object"},
    },
}

bp = Blueprint("openapi", __name__)


@bp.get(API_PREFIX + "/openapi.json")
async def openapi_document() -> Response:
    return Response(
        document(current_app), status=200, mimetype="application/json", headers={"Cache-Control": "no-cache"}
    )


def install(app: Quart, version: str) -> None:
    """Make `app` serve its document (`document`), built from its URL map on first use."""
    app.extensions[VERSION_KEY] = version


def document(app: Quart) -> bytes:
    """`app`'s document as served: built on first use and kept by the app."""
    found: bytes | None = app.extensions.get(DOCUMENT_KEY)
    if found is None:
        found = app.extensions[DOCUMENT_KEY] = _shared(_UrlMap.of(app), app.extensions[VERSION_KEY])
    return found


@dataclass(frozen=True)
class _UrlMap:
    """An app's URL map, equal to another app's when their API rules are the same: the key of the
    process's shared build. It keeps the map, not the app (and so not the hub the app serves)."""

    rules: tuple[tuple[str, str, tuple[str, ...]], ...]
    url_map: Map = field(compare=False, hash=False)

    @classmethod
    def of(cls, app: Quart) -> _UrlMap:
        return cls(
            tuple((r.rule, str(r.endpoint), tuple(sorted(r.methods or ()))) for r in api_rules(app)), app.url_map
        )


class _MapOnly:
    """What `build` reads of an app: its URL map."""

    def __init__(self, url_map: Map) -> None:
        self.url_map = url_map


@functools.lru_cache(maxsize=4)
def _shared(url_map: _UrlMap, version: str) -> bytes:
    return orjson.dumps(build(_MapOnly(url_map.url_map), version))  # type: ignore[arg-type]


def api_rules(app: Quart) -> list[Rule]:
    return sorted(
        (r for r in app.url_map.iter_rules() if r.rule.startswith(API_PREFIX)), key=lambda r: (r.rule, str(r.endpoint))
    )


def openapi_path(rule: str) -> str:
    """`/api/v1/projects/<project_id>` as OpenAPI writes it: `/api/v1/projects/{project_id}`."""
    out = rule
    for part in rule.split("<")[1:]:
        name = part.split(">", 1)[0]
        out = out.replace(f"<{name}>", "{" + name.split(":")[-1] + "}")
    return out


def build(app: Quart, version: str) -> dict[str, Any]:
    from hubhttp.api.docs import DOCS

    paths: dict[str, dict[str, Any]] = {}
    for rule in api_rules(app):
        doc = DOCS.get(str(rule.endpoint))
        if doc is None:
            raise LookupError(f"route {rule.rule} ({rule.endpoint}) has no doc record in hubhttp.api.docs")
        if doc.refusal_only:  # a rule that only answers 405 (hubhttp.api.kb.action_other_method)
            continue
        for method in sorted((rule.methods or set()) - {"HEAD", "OPTIONS"}):
            paths.setdefault(openapi_path(rule.rule), {})[method.lower()] = operation(rule, method, doc)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Agent Hub REST API",
            "version": version,
            "description": "Every error is an RFC 9457 problem document carrying the hub's `code`.",
        },
        "servers": [{"url": "/"}],
        "paths": paths,
        "components": {
            "schemas": {"Problem": PROBLEM},
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer", "description": "the admin token or an agent token"}
            },
        },
    }


def operation(rule: Rule, method: str, doc: Doc) -> dict[str, Any]:
    op: dict[str, Any] = {
        "operationId": str(rule.endpoint).replace(".", "_"),
        "summary": doc.summary,
        "tags": [str(rule.endpoint).split(".")[0]],
        "parameters": [*path_params(rule, doc), *query_params(rule, doc)],
        "responses": responses(method, doc),
    }
    if doc.public:
        op["security"] = []
    else:
        op["security"] = [{"bearer": []}]
    body = doc.request_schema(frozenset(rule.arguments))
    if body is not None:
        op["requestBody"] = {
            "required": doc.body_required,
            "content": {
                "application/json": {"schema": body},
                **{media: {"schema": {"type": "string"}} for media in doc.text_body},
            },
        }
    return op


# What the gate lets through as one path segment (hubhttp.gate.check_target): no control character
# (C0, DEL, C1) or line separator (U+2028, U+2029), no slash (an encoded one is refused; a
# literal one ends the segment) and not `.` or `..` (dot segments are refused). Written without
# lookarounds, which generators cannot read.
SEGMENT = "[^\\x00-\\x1f\\x7f-\\x9f\\u2028\\u2029/]"
SEGMENT_NO_DOT = "[^\\x00-\\x1f\\x7f-\\x9f\\u2028\\u2029/.]"
SEGMENT_PATTERN = f"^(?:{SEGMENT_NO_DOT}{SEGMENT}*|\\.{SEGMENT_NO_DOT}{SEGMENT}*|\\.\\.{SEGMENT}+)$"


def path_params(rule: Rule, doc: Doc) -> Iterable[dict[str, Any]]:
    from hubcore.services.fields import ONE_LINE_RAW_PATTERN  # with the records, when the document is built

    for name in sorted(rule.arguments, key=rule.rule.index):
        schema = not_null(doc.path_schema(name))  # a path value is never null
        # A one-line rule is implied by the segment's (its line breaks are all refused there).
        if schema.get("pattern") == ONE_LINE_RAW_PATTERN or (
            "pattern" not in schema and schema.get("type") == "string"
        ):
            schema = {**schema, "pattern": SEGMENT_PATTERN}
        yield {"name": name, "in": "path", "required": True, "schema": schema}


def query_params(rule: Rule, doc: Doc) -> Iterable[dict[str, Any]]:
    names = frozenset(rule.arguments)
    required = doc.required_query(names)
    for name, schema in doc.query_schemas(names).items():
        yield {"name": name, "in": "query", "required": name in required, "schema": schema}


def responses(method: str, doc: Doc) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if doc.response is None:
        out[str(doc.status)] = {"description": doc.summary}
    else:
        out[str(doc.status)] = {
            "description": doc.summary,
            "content": {
                doc.media: {"schema": doc.response},
                **{m: {"schema": sch} for m, sch in doc.alternatives.items()},
            },
        }
    for status in doc.also:
        out[str(status)] = {"description": doc.summary, "content": {doc.media: {"schema": doc.response}}}
    for status in problem_statuses(method, doc):
        out[str(status)] = {
            "description": PHRASES.get(status, "refused"),
            "content": {PROBLEM_TYPE: {"schema": {"$ref": "#/components/schemas/Problem"}}},
        }
    return out


def problem_statuses(method: str, doc: Doc) -> list[int]:
    statuses = set(GATE_STATUSES) | set(doc.problems)
    if not doc.public:
        statuses.add(401)
    if method in BODY_METHODS:
        statuses |= set(BODY_STATUSES) | {503}  # a write the full volume refused is retryable
    return sorted(statuses)


PHRASES: Mapping[int, str] = {
    400: "invalid_argument: a malformed request or a value outside its rule",
    401: "unauthenticated: no token, an unknown one, or one this route does not take",
    403: "forbidden",
    404: "not_found",
    405: "the address is an action's: only the method in Allow serves it",
    408: "the body arrived slower than the floor pace",
    409: "conflict: the state does not allow it (exists, wrong status, already decided)",
    422: "unprocessable: stored data the hub cannot serve as asked",
    413: "payload_too_large: the body over 4 MiB, or a content member over its limit",
    415: "the body was not sent as application/json",
    429: "rate_limited",
    503: "unavailable: retryable (the data volume is full, or a store is busy); nothing was written",
}
