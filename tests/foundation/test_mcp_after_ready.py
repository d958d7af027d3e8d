"""The MCP endpoint loads after the hub is ready (the mcp SDK is most of a start, docs/decisions.md):
an /mcp request that comes first waits for it and is answered, the rest of the hub serves in the
meantime, and an endpoint that cannot load answers 503 while everything else keeps serving."""

from __future__ import annotations

import logging
import sys
import threading
from pathlib import Path

import anyio
import httpx
import pytest

from hubcore.config import HubSettings
from hubhttp import asgi
from tests.foundation.test_gate import assert_problem
from tests.harness import ADMIN, hub_client
from tests.mcp.live import modern_tool_call

pytestmark = pytest.mark.anyio

# Module bodies the hub imports in place of hubmcp.http: one held until the test lets it finish
# (an import taking its time, deterministically), one that cannot be imported.
HELD = """
from tests.foundation.test_mcp_after_ready import RELEASE
RELEASE.wait(30)
from hubmcp.http import create_endpoint
"""
BROKEN = "raise ImportError('the mcp SDK is missing from this install')\n"
RELEASE = threading.Event()


def stand_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, body: str) -> None:
    (tmp_path / f"{name}.py").write_text(body)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(asgi, "MCP_MODULE", name)
    monkeypatch.delitem(sys.modules, name, raising=False)


async def test_an_mcp_call_before_the_endpoint_loaded_waits_and_is_answered(
    settings: HubSettings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stand_in(tmp_path, monkeypatch, "held_mcp_endpoint", HELD)
    RELEASE.clear()
    answers: list[httpx.Response] = []
    try:
        async with hub_client(settings) as client, anyio.create_task_group() as tg:
            body, headers = modern_tool_call("whoami", {})

            async def call() -> None:
                answers.append(await client.post("/mcp", json=body, headers=headers))

            tg.start_soon(call)
            # Ready, and serving REST, while the endpoint is still loading.
            assert (await client.get("/readyz")).status_code == 200
            r = await client.post("/api/v1/projects", json={"id": "webshop"}, headers=ADMIN)
            assert r.status_code == 201, r.text
            await anyio.sleep(0.05)
            assert answers == []  # the call waits: it is not refused
            RELEASE.set()
    finally:
        RELEASE.set()  # never leave the hub's import thread blocked
    [r] = answers
    assert r.status_code == 200, r.text
    assert r.json()["result"]["structuredContent"]["actor"] == "human"


async def test_an_endpoint_that_cannot_load_answers_503_and_the_rest_serves(
    settings: HubSettings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    stand_in(tmp_path, monkeypatch, "broken_mcp_endpoint", BROKEN)
    with caplog.at_level(logging.ERROR, logger="hubhttp.asgi"):
        async with hub_client(settings) as client:
            body, headers = modern_tool_call("whoami", {})
            r = await client.post("/mcp", json=body, headers=headers)
            assert_problem(r, 503, "unavailable")
            assert (await client.get("/readyz")).status_code == 200
            r = await client.post("/api/v1/projects", json={"id": "webshop"}, headers=ADMIN)
            assert r.status_code == 201, r.text
            r = await client.get("/bootstrap/SKILL.md")  # the guide needs no MCP endpoint
            assert r.status_code == 200 and "http://127.0.0.1:8080" in r.text
    assert any("the MCP endpoint failed to load" in rec.getMessage() for rec in caplog.records)
