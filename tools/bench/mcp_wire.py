"""What the MCP load benches (`brains.py`, `mcp_calls.py`) share: a hub served by Hypercorn in its
own process with a no-op route beside it (the floor), a raw keep-alive HTTP/1.1 connection cheap
enough not to be what is measured, and the bodies and headers of a tool call in either protocol."""

from __future__ import annotations

import asyncio
import itertools
import os
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import orjson

ADMIN = "hub_bench-admin-token-0123456789abcdef"
MODERN, LEGACY = "2026-07-28", "2025-11-25"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}

# The hub with a no-op route beside it (the floor), and one that flushes the call log (a bench
# window's end), served by Hypercorn like `hub-cli serve`.
SERVER = r"""
import asyncio, sys
from hypercorn.asyncio import serve
from hypercorn.config import Config
from quart import Blueprint, Response
from hubcore.config import HubSettings
from hubhttp.asgi import HubASGI, settle_heap

data_dir, port, token, open_max = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
extra = {"open_stores_max": open_max} if open_max > 0 else {}
settings = HubSettings(data_dir=data_dir, admin_token=token, min_free_bytes=0, bind=f"127.0.0.1:{port}",
                       inbox_open_per_project=0, inbox_open_per_agent=0, **extra)
app = HubASGI(settings)
app.on_settled.append(settle_heap)  # as `hub-cli serve` does
noop = Blueprint("bench_noop", __name__)

@noop.post("/bench/noop")
async def nothing() -> Response:
    return Response(b"{}", content_type="application/json")

@noop.post("/bench/settle")
async def settle() -> Response:
    # Bench only: every tool call noted so far is in its session's replay record (the call log
    # moves its rows into the brains every 30 s; a bench window ends with its own).
    await app.hub.brains.calls.flush(None)
    return Response(b"{}", content_type="application/json")

app.quart.register_blueprint(noop)
config = Config()
config.bind = [f"127.0.0.1:{port}"]
config.accesslog = None
config.backlog = 2048
asyncio.run(serve(app, config))
"""

_ids = itertools.count(1)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def hub_process(port: int, open_max: int = 0) -> Iterator[subprocess.Popen[bytes]]:
    """A hub serving a fresh temporary data directory on `port`, stopped on exit; `open_max` > 0
    sets `open_stores_max`."""
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "HUB_LOG_LEVEL": "warning"}
        server = subprocess.Popen(
            [sys.executable, "-c", SERVER, str(Path(tmp) / "data"), str(port), ADMIN, str(open_max)],
            env=env,
            stderr=subprocess.DEVNULL,
        )
        try:
            yield server
        finally:
            server.terminate()
            server.wait(30)


async def prepare_hub(port: int, agent_id: str = "bench-agent") -> str:
    """Wait for the hub on `port`, make the `bench` project and the agent; the agent's token."""
    admin = {"Authorization": f"Bearer {ADMIN}"}
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
        for _ in range(300):
            try:
                if (await http.get("/healthz")).status_code == 200:
                    break
            except httpx.HTTPError:
                await asyncio.sleep(0.1)
        (await http.post("/api/v1/projects", json={"id": "bench"}, headers=admin)).raise_for_status()
        (await http.post("/api/v1/agents", json={"id": agent_id}, headers=admin)).raise_for_status()
        return str((await http.post(f"/api/v1/agents/{agent_id}/token", headers=admin)).json()["token"])


class RawConn:
    """One keep-alive HTTP/1.1 connection with hand-built requests: cheap enough that the client
    process is not what the benchmark measures (httpx costs a few ms of CPU per request)."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.last_head = b""  # the status line and headers of the last reply, lower-cased
        self.closing = False

    async def open(self) -> RawConn:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        self.closing = False
        return self

    async def post(self, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
        if self.closing:  # the server ends a connection after so many requests (Hypercorn: 1,000)
            await self.close()
            await self.open()
        assert self.reader is not None and self.writer is not None
        head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        self.writer.write(
            f"POST {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n{head}"
            f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )
        await self.writer.drain()
        raw = await self.reader.readuntil(b"\r\n\r\n")
        status = int(raw.split(b" ", 2)[1])
        lowered = self.last_head = raw.lower()
        self.closing = b"\r\nconnection: close" in lowered
        if b"content-length:" in lowered:
            length = int(lowered.split(b"content-length:", 1)[1].split(b"\r\n", 1)[0])
            return status, await self.reader.readexactly(length)
        chunks: list[bytes] = []  # chunked (an SSE reply that outlived the JSON deferral window)
        while True:
            size = int((await self.reader.readuntil(b"\r\n")).strip(), 16)
            chunk = await self.reader.readexactly(size + 2)
            if size == 0:
                return status, b"".join(chunks)
            chunks.append(chunk[:-2])

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


def tool_body(name: str, arguments: dict[str, Any], *, modern: bool = True) -> bytes:
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if modern:
        params["_meta"] = META
    return orjson.dumps({"jsonrpc": "2.0", "id": next(_ids), "method": "tools/call", "params": params})


def result_of(body: bytes) -> dict[str, Any]:
    """A tool call's structured result; a JSON-RPC error or an error result raises."""
    text = body.decode()
    if text.lstrip().startswith(("event:", ":", "data:")):
        text = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")][-1]
    reply = orjson.loads(text)
    if "error" in reply:
        raise RuntimeError(reply["error"])
    result = reply["result"]
    if result.get("isError"):  # an error result's text says the code and message first
        raise RuntimeError(result["content"][0]["text"])
    return dict(result["structuredContent"])


def mcp_headers(token: str, name: str) -> dict[str, str]:
    """The headers of a 2026-07-28 `tools/call` of `name`."""
    return {
        "Authorization": f"Bearer {token}",
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "tools/call",
        "Mcp-Name": name,
    }


async def legacy_session(conn: RawConn, token: str) -> dict[str, str]:
    """Open a 2025-11-25 session on `conn` (initialize, initialized); the headers its calls carry."""
    base = {
        "Authorization": f"Bearer {token}",
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
    }
    status, _ = await conn.post(
        "/mcp",
        orjson.dumps(
            {
                "jsonrpc": "2.0",
                "id": next(_ids),
                "method": "initialize",
                "params": {
                    "protocolVersion": LEGACY,
                    "capabilities": {},
                    "clientInfo": {"name": "bench", "version": "1"},
                },
            }
        ),
        base,
    )
    assert status == 200, status
    session = conn.last_head.split(b"mcp-session-id:", 1)[1].split(b"\r\n", 1)[0].strip().decode()
    headers = {**base, "Mcp-Session-Id": session, "MCP-Protocol-Version": LEGACY}
    status, _ = await conn.post("/mcp", b'{"jsonrpc": "2.0", "method": "notifications/initialized"}', headers)
    assert status == 202, status
    return headers
