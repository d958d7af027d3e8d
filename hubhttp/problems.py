"""RFC 9457 problem documents: the one error shape of the REST API."""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

import orjson

from hubcore.errors import HubError
from hubcore.metrics import HubMetrics

PROBLEM_TYPE = "application/problem+json"


def problem_body(status: int, code: str, detail: str, details: dict[str, Any] | None = None) -> bytes:
    doc: dict[str, Any] = {
        "type": "about:blank",
        "title": HTTPStatus(status).phrase,
        "status": status,
        "detail": detail,
        "code": code,
    }
    if details:
        doc["details"] = details
    return orjson.dumps(doc)


def from_error(err: HubError) -> tuple[int, dict[str, str], bytes]:
    """Status, extra headers and body for a hub error."""
    headers = dict(err.headers)
    if err.status == 429 and "Retry-After" not in headers:
        headers["Retry-After"] = "1"
    if err.status == 401:
        headers.setdefault("WWW-Authenticate", 'Bearer realm="agent-hub"')
    return err.status, headers, problem_body(err.status, err.code, err.message, err.details)


def count_failure(metrics: HubMetrics | None, code: str) -> None:
    if metrics is not None:
        metrics.failed_responses.labels(code=code).inc()


async def send_problem(send: Any, err: HubError, metrics: HubMetrics | None) -> None:
    """Answer an ASGI request with `err` as a problem document."""
    status, headers, body = from_error(err)
    count_failure(metrics, err.code)
    raw_headers = [
        (b"content-type", PROBLEM_TYPE.encode()),
        (b"content-length", str(len(body)).encode()),
        *((k.lower().encode(), v.encode()) for k, v in headers.items()),
    ]
    await send({"type": "http.response.start", "status": status, "headers": raw_headers})
    await send({"type": "http.response.body", "body": body})
