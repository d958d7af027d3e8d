"""The route walk: every rule of the app's URL map (read at test time, so a route added tomorrow is
walked the day it lands), every method it serves, through every path spelling, for every kind of
caller, against the spec's access table.

Canonical spellings get the spec's answer: public routes never 401; token routes 401 without a usable
token and not 401 for an agent or the admin; everything else 401 for anyone but the admin. Every
other spelling (`//x`, `/./x`, `/a/../x`, encoded slashes or dots, a trailing `/.`, absolute form) is
refused with 400 before any handler runs. No refused request changes a byte of hub.db.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

import anyio
import orjson
import pytest

from hubhttp.gate import BODY_METHODS, Message, Scope
from hubhttp.routing import Access
from tests.harness import ADMIN_TOKEN, HubClient

pytestmark = pytest.mark.anyio

ORIGIN = "http://127.0.0.1:8080"

# The spec's table, by rule shape (`*` for a path parameter) and method. Public: the probes, the
# bootstrap guide, enrolment, the OpenAPI document and the public artifact pages. Token: project list
# and create, the stream, /mcp. Everything else is the admin's.
SPEC_PUBLIC = {
    "/healthz": "GET HEAD",
    "/readyz": "GET HEAD",
    "/bootstrap/SKILL.md": "GET HEAD",
    "/api/v1/enrol": "POST",
    "/api/v1/enrol/status": "GET HEAD",
    "/api/v1/openapi.json": "GET HEAD",
    "/api/v1/push/act": "POST",  # a notification button: its capability is the authority (DESIGN section 11)
    "/s/*": "GET HEAD",
    "/s/*/frame": "GET HEAD",
    "/s/*/og.svg": "GET HEAD",
    "/artifacts/*": "GET HEAD",
    "/artifacts/*/frame": "GET HEAD",
    "/artifacts/*/og.svg": "GET HEAD",
    "/assets/*": "GET HEAD",  # the public pages' own files (shell script and style, vendored mermaid)
    "/": "GET HEAD",
    "/sw.js": "GET HEAD",
    "/manifest.webmanifest": "GET HEAD",
    "/app/*": "GET HEAD",  # the web app
}
# Public routes whose own answer to anything but the right credential is 401: the enrolment status
# poll reads the pending token itself and refuses every other token (or none) as unknown.
OWN_401 = {"/api/v1/enrol/status"}
SPEC_TOKEN = {
    "/api/v1/projects": "GET HEAD POST",
    "/api/v1/stream": "GET HEAD",
    "/mcp": "GET POST DELETE",
    "/api/v1/limits": "GET HEAD",
}  # issue 28: the limits a client checks before sending
# Served outside the Quart app (by hubhttp.asgi), so not in its URL map.
OUTSIDE_ROUTES = {"/mcp": ("GET", "POST", "DELETE")}

CALLERS = ("none", "junk", "agent", "admin")
PARAM = re.compile(r"<(?:([a-zA-Z_]+)(?:\([^)]*\))?:)?([a-zA-Z_]+)>")


def expected(shape: str, method: str) -> Access:
    if method in SPEC_PUBLIC.get(shape, "").split():
        return Access.PUBLIC
    if method in SPEC_TOKEN.get(shape, "").split():
        return Access.TOKEN
    return Access.ADMIN


def sample(match: re.Match[str]) -> str:
    """A value for a path parameter that names nothing stored."""
    converter = match.group(1) or "default"
    return {"int": "7", "float": "7.5", "path": "walk/x", "uuid": "00000000-0000-0000-0000-000000000000"}.get(
        converter, "walk-x"
    )


@dataclass(frozen=True)
class Route:
    path: str  # canonical, parameters filled in
    shape: str
    method: str


def routes(client: HubClient) -> Iterator[Route]:
    for rule in client.app.quart.url_map.iter_rules():
        for method in sorted((rule.methods or set()) - {"OPTIONS"}):
            yield Route(PARAM.sub(sample, rule.rule), PARAM.sub("*", rule.rule), method)
    for path, methods in OUTSIDE_ROUTES.items():
        for method in methods:
            yield Route(path, path, method)


def spellings(path: str) -> dict[str, str]:
    """Every non-canonical spelling of `path` the gate must refuse."""
    rest = path[1:]
    encoded = rest.replace("/", "%2F") if "/" in rest else "%2F" + rest
    return {
        "double leading slash": "/" + path,
        "inner double slash": "/" + rest.replace("/", "//", 1) if "/" in rest else path + "//",
        "dot segment": "/." + path,
        "dot-dot segment": "/a/.." + path,
        "encoded slash": "/" + encoded,
        "lowercase encoded slash": "/" + encoded.replace("%2F", "%2f"),
        "encoded dot segment": "/%2e" + path,
        "encoded dot-dot segment": "/a/%2E%2E" + path,
        "trailing dot": path + "/.",
        "absolute form": ORIGIN + path,
        "no leading slash": rest,
    }


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    def problem(self) -> dict[str, Any]:
        if self.headers.get("content-type", "") == "application/json":
            # /mcp refuses a token with a JSON-RPC error (what MCP clients show); its hub error
            # object carries the same code a problem document would.
            error = orjson.loads(self.body)["error"]["data"]["error"]
            return {"code": error["code"], "detail": error["message"]}
        assert self.headers.get("content-type", "").startswith("application/problem+json"), self
        return dict(orjson.loads(self.body))


def scope_for(method: str, target: str, token: str | None) -> Scope:
    """The scope Hypercorn builds for `target` as sent on the request line."""
    raw = target.encode("ascii")
    headers = [(b"host", b"127.0.0.1:8080")]
    if token is not None:
        headers.append((b"authorization", f"Bearer {token}".encode()))
    if method in BODY_METHODS:
        headers += [(b"content-type", b"application/json"), (b"content-length", b"2")]
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": unquote(target),
        "raw_path": raw,
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8080),
    }


async def call(client: HubClient, scope: Scope) -> Answer:
    """One request straight into the ASGI app. The answer is complete at the first body message:
    streaming routes (the stream, /mcp GET) are cut there."""
    answer = Answer(0, {}, b"")
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if not sent:  # as a server does: one request message, empty when there is no body
            sent = True
            body = b"{}" if scope["method"] in BODY_METHODS else b""
            return {"type": "http.request", "body": body, "more_body": False}
        await anyio.sleep_forever()  # never a disconnect: the handler must answer on its own
        raise AssertionError("unreachable")

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:

            async def send(message: Message) -> None:
                if message["type"] == "http.response.start":
                    answer.status = message["status"]
                    answer.headers = {k.decode().lower(): v.decode() for k, v in message.get("headers", [])}
                elif message["type"] == "http.response.body":
                    answer.body += message.get("body", b"")
                    if not message.get("more_body", False) or answer.body:
                        tg.cancel_scope.cancel()

            await client.app(scope, receive, send)
            tg.cancel_scope.cancel()
    return answer


def fingerprint(client: HubClient) -> str:
    with client.db() as conn:
        return hashlib.sha256("\n".join(conn.iterdump()).encode()).hexdigest()


class Spy:
    """Counts requests that got past the gate to the router."""

    def __init__(self, client: HubClient) -> None:
        self.gate = client.app.gate
        self.inner = self.gate.app
        self.reached: list[tuple[str, str]] = []

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        self.reached.append((scope["method"], scope["path"]))
        await self.inner(scope, receive, send)

    def __enter__(self) -> Spy:
        self.gate.app = self
        return self

    def __exit__(self, *exc: object) -> None:
        self.gate.app = self.inner


async def test_route_walk(client: HubClient) -> None:
    tokens = {
        "none": None,
        "junk": "hub_junk-0123456789abcdef",
        "agent": await client.make_agent("walker"),
        "admin": ADMIN_TOKEN,
    }
    await client.make_project("walk-x")
    await client.get("/api/v1/projects", headers=client.agent(str(tokens["agent"])))  # last-seen is written once
    walk = list(routes(client))
    assert {r.shape for r in walk} >= {"/healthz", "/api/v1/agents", "/metrics", "/mcp"}
    refused_failures: list[str] = []
    allowed: list[tuple[Route, str]] = []
    before = fingerprint(client)
    with Spy(client) as spy:
        for route in walk:
            for who in CALLERS:
                for name, target in spellings(route.path).items():
                    answer = await call(client, scope_for(route.method, target, tokens[who]))
                    if answer.status != 400 or answer.problem()["code"] != "invalid_argument":
                        refused_failures.append(f"{route.method} {target} ({name}, {who}): {answer.status}")
                if not may_call(expected(route.shape, route.method), who):
                    answer = await call(client, scope_for(route.method, route.path, tokens[who]))
                    if answer.status != 401 or answer.problem()["code"] != "unauthenticated":
                        refused_failures.append(f"{route.method} {route.path} ({who}): {answer.status}")
                else:
                    allowed.append((route, who))
        assert spy.reached == []
    assert refused_failures == []
    assert fingerprint(client) == before
    allowed_failures = []
    for route, who in allowed:
        answer = await call(client, scope_for(route.method, route.path, tokens[who]))
        if (answer.status == 401 and route.shape not in OWN_401) or answer.status >= 500:
            allowed_failures.append(f"{route.method} {route.path} ({who}): {answer.status} {answer.body[:200]!r}")
    assert allowed_failures == []


def may_call(access: Access, who: str) -> bool:
    if access is Access.PUBLIC:
        return True
    if access is Access.TOKEN:
        return who in ("agent", "admin")
    return who == "admin"


async def test_unmatched_paths_and_unserved_methods_are_the_admins(client: HubClient) -> None:
    """Probing without the admin token learns nothing: an unknown path under /api (or anywhere) is
    401, as is a method a gated path does not serve; the admin gets the 404 and the 405."""
    agent = await client.make_agent("prober")
    cases = [
        ("GET", "/api/v1/nothing-here"),
        ("GET", "/nothing-here"),
        ("GET", "/metrics/x"),
        ("PUT", "/api/v1/agents"),
        ("POST", "/metrics"),
        ("GET", "/mcp/"),
        ("GET", "/static/x.js"),
    ]
    for method, path in cases:
        for token in (None, agent):
            answer = await call(client, scope_for(method, path, token))
            assert answer.status == 401, (method, path, token)
        answer = await call(client, scope_for(method, path, ADMIN_TOKEN))
        assert answer.status in (404, 405), (method, path)
    # A method a public path does not serve is a plain 405 for anyone; on a token path, for a token.
    assert (await call(client, scope_for("POST", "/healthz", None))).status == 405
    assert (await call(client, scope_for("PUT", "/api/v1/projects", agent))).status == 405
    assert (await call(client, scope_for("PUT", "/api/v1/projects", None))).status == 401
