"""One-shot requests to a hub's REST API (`/api/v1`) for the client commands (`project`, `kb`).

Each call is its own HTTP request. Failures become `CliFailure` with the command line's exit codes:
no hub named or no token 78, unreachable 69, token refused (401) 77, any other refusal 1 with the
hub's code and detail.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from typing import Any

import httpx
import orjson

from hubcli import exits
from hubcli.client import CliFailure
from hubcore.config import Settings


@dataclass(frozen=True)
class Refusal:
    """A hub refusal read from its problem document (or what stood in for one)."""

    status: int
    code: str
    detail: str

    def line(self) -> str:
        return f"{self.code}: {self.detail}"


class HubRefused(CliFailure):
    """The hub answered with an error status other than 401 (exit 1)."""

    def __init__(self, refusal: Refusal) -> None:
        super().__init__(exits.REFUSED, refusal.line(), refusal)
        self.refusal = refusal


def api_base(hub_url: str) -> str:
    """`HUB_URL` may name the hub or its agent endpoint; the REST API sits beside the latter."""
    url = hub_url.rstrip("/")
    if url.endswith("/mcp"):
        url = url[: -len("/mcp")]
    return f"{url}/api/v1"


def _refusal(r: httpx.Response) -> Refusal:
    try:
        body = r.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and isinstance(body.get("code"), str):
        return Refusal(r.status_code, body["code"], str(body.get("detail") or body.get("title") or ""))
    return Refusal(r.status_code, f"http_{r.status_code}", r.text[:200].strip() or r.reason_phrase)


@dataclass(frozen=True)
class Rest:
    """The hub at `url`, reached with `token`."""

    url: str
    token: str
    timeout: float
    http: httpx.AsyncClient | None = None  # a client kept for many requests (see `session`)

    @classmethod
    def from_settings(cls, settings: Settings) -> Rest:
        """The configured hub and token, or `CliFailure` 78. The token is `HUB_TOKEN` (`[client]
        token`), else the admin token (`HUB_ADMIN_TOKEN`, `[hub] admin_token`) so the commands work
        on the hub's own machine; admin-only routes refuse an agent token with 401 (exit 77)."""
        if not settings.client.url:
            raise CliFailure(exits.NOT_CONFIGURED, "no hub named: set HUB_URL or [client] url in the config file")
        token = settings.client.token or settings.hub.admin_token
        if not token:
            raise CliFailure(
                exits.NOT_CONFIGURED,
                "no token set: set HUB_TOKEN (the admin token for admin commands) or [client] token in the config file",
            )
        return cls(settings.client.url, token, settings.client.timeout)

    def client(self) -> httpx.AsyncClient:
        # Plain HTTP needs no TLS context; building one costs more than a loopback request.
        verify = self.url.startswith("https:")
        return httpx.AsyncClient(
            timeout=httpx.Timeout(self.timeout),
            verify=verify,
            limits=httpx.Limits(max_connections=16, max_keepalive_connections=16),
        )

    @asynccontextmanager
    async def session(self) -> AsyncIterator[Rest]:
        """This hub with one client (and its kept-alive connections) for every request inside."""
        async with self.client() as http:
            yield replace(self, http=http)

    async def send(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, Any] | None = None,
        json: Any = None,
        content: bytes | None = None,
        content_type: str | None = None,
    ) -> httpx.Response:
        """The hub's successful answer; `CliFailure` for anything else. `path` is below `/api/v1`."""
        headers = {"Authorization": f"Bearer {self.token}", "Accept": "application/json"}
        if json is not None:
            content, content_type = orjson.dumps(json), "application/json"
        if content_type:
            headers["Content-Type"] = content_type
        try:
            if self.http is not None:
                r = await self.http.request(
                    method, api_base(self.url) + path, params=params, content=content, headers=headers
                )
            else:
                async with self.client() as http:
                    r = await http.request(
                        method, api_base(self.url) + path, params=params, content=content, headers=headers
                    )
        except httpx.HTTPError as exc:
            raise CliFailure(exits.UNREACHABLE, f"cannot reach the hub at {self.url}: {exc}") from None
        if r.status_code == 401:
            raise CliFailure(
                exits.TOKEN_REFUSED,
                "the hub refused the token (HUB_TOKEN or [client] token; admin commands need the admin token)",
            )
        if r.status_code >= 300:
            raise HubRefused(_refusal(r))
        return r

    async def json(self, method: str, path: str, **kwargs: Any) -> Any:
        r = await self.send(method, path, **kwargs)
        if r.status_code == 204 or not r.content:
            return None
        try:
            return r.json()
        except ValueError:
            raise CliFailure(exits.REFUSED, f"the hub answered HTTP {r.status_code} with no JSON") from None
