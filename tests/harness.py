"""Test harness: a real app lifespan, an HTTP client bound to it, and helpers for common setup."""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import httpx
import orjson
from quart import Quart

from hubcore.clock import FakeClock
from hubcore.config import HubSettings
from hubhttp.app import create_app
from hubhttp.asgi import HubASGI
from hubhttp.openapi import document
from tests.openapi_check import ResponseChecker

ADMIN_TOKEN = "hub_test-admin-token-0123456789abcdef0123456789"
ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


def test_settings(data_dir: Path, **overrides: Any) -> HubSettings:
    base = HubSettings(data_dir=str(data_dir), admin_token=ADMIN_TOKEN, min_free_bytes=0)
    return replace(base, **overrides)


class AppPool:
    """Quart apps built by `create_app`, kept for the next test hub of this worker: building one
    (blueprints, URL rules, the OpenAPI document) costs more than the rest of a hub's start. A hub
    borrows an app no other hub is serving, so hubs open side by side each have their own; the app
    comes back with its extensions as built (the closed hub and its per-log state dropped), and only
    from a hub whose lifespan ended cleanly: a failure's app is left behind."""

    def __init__(self) -> None:
        self._idle: list[tuple[Quart, dict[str, Any]]] = []

    @contextmanager
    def lend(self) -> Iterator[Quart]:
        if self._idle:
            app, built = self._idle.pop()
        else:
            app = create_app()
            built = dict(app.extensions)
        yield app
        app.extensions.clear()
        app.extensions.update(built)
        self._idle.append((app, built))


APPS = AppPool()


@functools.cache
def response_checker(document: bytes) -> ResponseChecker:
    """One checker per OpenAPI document, so the schema validators it compiles serve every test."""
    return ResponseChecker(orjson.loads(document))


@asynccontextmanager
async def lifespan(app: Any) -> AsyncIterator[None]:
    """Drive an ASGI app's lifespan protocol: startup on entry, shutdown on exit."""
    to_app_send, to_app_recv = anyio.create_memory_object_stream[dict[str, Any]](4)
    from_app_send, from_app_recv = anyio.create_memory_object_stream[dict[str, Any]](4)

    async def receive() -> dict[str, Any]:
        return await to_app_recv.receive()

    async def send(message: dict[str, Any]) -> None:
        await from_app_send.send(message)

    # The streams are closed on the way out (outside the task group, once the app has answered
    # shutdown): an unclosed memory stream is a ResourceWarning, an error under the suite's filters.
    async with to_app_send, to_app_recv, from_app_send, from_app_recv, anyio.create_task_group() as tg:
        tg.start_soon(app, {"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}}, receive, send)
        await to_app_send.send({"type": "lifespan.startup"})
        started = await from_app_recv.receive()
        if started["type"] != "lifespan.startup.complete":
            raise RuntimeError(f"startup failed: {started}")
        try:
            yield
        finally:
            await to_app_send.send({"type": "lifespan.shutdown"})
            await from_app_recv.receive()


class HubClient(httpx.AsyncClient):
    """An httpx client on the app, with the admin token unless told otherwise."""

    app: HubASGI

    def agent(self, token: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {token}"}

    async def make_agent(self, agent_id: str, display_name: str | None = None) -> str:
        """Create an agent and issue its token; returns the token."""
        body = {"id": agent_id, "display_name": display_name or agent_id.title()}
        r = await self.post("/api/v1/agents", json=body, headers=ADMIN)
        assert r.status_code == 201, r.text
        r = await self.post(f"/api/v1/agents/{agent_id}/token", headers=ADMIN)
        assert r.status_code == 201, r.text
        return str(r.json()["token"])

    async def make_project(self, project_id: str, **fields: Any) -> dict[str, Any]:
        r = await self.post("/api/v1/projects", json={"id": project_id, **fields}, headers=ADMIN)
        assert r.status_code == 201, r.text
        return dict(r.json())

    def db(self) -> sqlite3.Connection:
        """A separate read connection on hub.db, for checking what is stored."""
        path = Path(self.app.settings.data_dir) / "hub.db"
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        conn.row_factory = sqlite3.Row
        return conn


def settle_hook(app: HubASGI) -> Callable[[httpx.Request | httpx.Response], Awaitable[None]]:
    """An httpx event hook for every client of a test app. The search index follows each write on
    the write side, after its reply: a test sends and reads with the pass covering every write
    before (a service call's too) landed, so what a request measures or snapshots is the hub at rest."""

    async def settled(_: httpx.Request | httpx.Response) -> None:
        await app.hub.search_index.settled()

    return settled


@asynccontextmanager
async def hub_client(settings: HubSettings, clock: FakeClock | None = None) -> AsyncIterator[HubClient]:
    with APPS.lend() as quart:
        app = HubASGI(settings, clock=clock, quart=quart)
        async with lifespan(app):
            transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
            # Every /api/v1 response is checked against the OpenAPI document (tests/openapi_check.py).
            checker = response_checker(document(app.quart))

            settled = settle_hook(app)
            async with HubClient(
                transport=transport,
                base_url="http://127.0.0.1:8080",
                event_hooks={"request": [settled], "response": [checker.hook, settled]},
            ) as client:
                client.app = app
                yield client
