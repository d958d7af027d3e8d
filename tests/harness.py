"""Test harness: a real app lifespan, an HTTP client bound to it, and helpers for common setup."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import httpx
import orjson

from hubcore.clock import FakeClock
from hubcore.config import HubSettings
from hubhttp.asgi import HubASGI
from hubhttp.openapi import DOCUMENT_KEY
from tests.openapi_check import ResponseChecker

ADMIN_TOKEN = "hub_test-admin-token-0123456789abcdef0123456789"
ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


def test_settings(data_dir: Path, **overrides: Any) -> HubSettings:
    base = HubSettings(data_dir=str(data_dir), admin_token=ADMIN_TOKEN, min_free_bytes=0)
    return replace(base, **overrides)


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


@asynccontextmanager
async def hub_client(settings: HubSettings, clock: FakeClock | None = None) -> AsyncIterator[HubClient]:
    app = HubASGI(settings, clock=clock)
    async with lifespan(app):
        transport = httpx.ASGITransport(app=app)  # type: ignore[arg-type]
        # Every /api/v1 response is checked against the OpenAPI document (tests/openapi_check.py).
        checker = ResponseChecker(orjson.loads(app.quart.extensions[DOCUMENT_KEY]))
        async with HubClient(transport=transport, base_url="http://127.0.0.1:8080",
                             event_hooks={"response": [checker.hook]}) as client:
            client.app = app
            yield client
