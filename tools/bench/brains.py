"""Benchmark: brain_get and brain_put over MCP across 200 sessions, against signal_append and the
no-op POST floor measured in the same run, in both protocol eras.

The hub runs in its own process (Hypercorn on asyncio, a fresh data directory, the store settings
at their defaults unless `--open-max` is given) with one extra Quart route that does nothing, the
floor. One agent owns `--sessions` running sessions. `--clients` keep-alive connections send
hand-built HTTP/1.1 requests (so client CPU is not what is measured), each working round-robin
through its share of the sessions and naming the session on every call (`session_id`); values are
2 KiB. Kinds, each for `--seconds` per round, in a rotating order over `--rounds` rounds:

- `noop_post`: the floor (a Quart POST route that does no work);
- `signal_append`, `brain_put`, `brain_get` over 2026-07-28 (one request per call, no connection);
- the same three over 2025-11-25 sessions (`initialize` once per client connection, then every call
  carries its `Mcp-Session-Id`).

Each round's rates are divided by the same round's `signal_append` (same era) and floor; the
median of the per-round ratios is reported (the shared machine's load drifts between rounds).
Targets (issue 27, was 0.9 and 0.7 in issue 11): brain_get at least 1.0 of signal_append, brain_put
at least 0.8, either era, with 20 and with 200 sessions (with fewer sessions than clients, clients
share sessions round-robin).

    .venv/bin/python -m tools.bench.brains [--sessions 200] [--clients 32] [--rounds 5] [--seconds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import orjson

ADMIN = "hub_bench-admin-token-0123456789abcdef"
MODERN, LEGACY = "2026-07-28", "2025-11-25"
META = {"io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}}
VALUE = "v" * 2048
TICK = os.sysconf("SC_CLK_TCK")
KEYS = 4  # distinct entry paths per session: gets read what the puts wrote
TARGETS = {"brain_get": 1.0, "brain_put": 0.8}
KINDS = ("noop_post", "signal_append", "brain_put", "brain_get",
         "signal_append_legacy", "brain_put_legacy", "brain_get_legacy")

# The hub with a no-op route beside it (the floor), served by Hypercorn like `hub-cli serve`.
SERVER = r'''
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

app.quart.register_blueprint(noop)
config = Config()
config.bind = [f"127.0.0.1:{port}"]
config.accesslog = None
config.backlog = 2048
asyncio.run(serve(app, config))
'''

_ids = itertools.count(1)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class RawConn:
    """One keep-alive HTTP/1.1 connection with hand-built requests (httpx costs a few ms of client
    CPU per request, which would be measured instead of the hub)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.last_head = b""
        self.closing = False

    async def open(self) -> RawConn:
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        self.closing = False
        return self

    async def post(self, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
        if self.closing:  # the server ends a connection after so many requests (Hypercorn: 1,000)
            await self.close()
            await self.open()
        assert self.reader is not None and self.writer is not None
        head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        self.writer.write(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n{head}"
                          f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
        await self.writer.drain()
        raw = await self.reader.readuntil(b"\r\n\r\n")
        status = int(raw.split(b" ", 2)[1])
        lowered = self.last_head = raw.lower()
        self.closing = b"\r\nconnection: close" in lowered
        if b"content-length:" in lowered:
            length = int(lowered.split(b"content-length:", 1)[1].split(b"\r\n", 1)[0])
            return status, await self.reader.readexactly(length)
        chunks: list[bytes] = []  # chunked: an event stream
        while True:
            size = int((await self.reader.readuntil(b"\r\n")).strip(), 16)
            chunk = await self.reader.readexactly(size + 2)
            if size == 0:
                return status, b"".join(chunks)
            chunks.append(chunk[:-2])

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


def tool_body(name: str, arguments: dict[str, Any], *, modern: bool) -> bytes:
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if modern:
        params["_meta"] = META
    return orjson.dumps({"jsonrpc": "2.0", "id": next(_ids), "method": "tools/call", "params": params})


def result_of(body: bytes) -> dict[str, Any]:
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


def modern_headers(token: str, name: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json", "MCP-Protocol-Version": MODERN,
            "Mcp-Method": "tools/call", "Mcp-Name": name}


async def legacy_headers(conn: RawConn, token: str) -> dict[str, str]:
    """Open a 2025-11-25 session on `conn` (initialize, initialized); the headers its calls carry."""
    base = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json"}
    status, _ = await conn.post("/mcp", orjson.dumps({
        "jsonrpc": "2.0", "id": next(_ids), "method": "initialize", "params": {
            "protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}}), base)
    assert status == 200, status
    session = conn.last_head.split(b"mcp-session-id:", 1)[1].split(b"\r\n", 1)[0].strip().decode()
    headers = {**base, "Mcp-Session-Id": session, "MCP-Protocol-Version": LEGACY}
    status, _ = await conn.post("/mcp", b'{"jsonrpc": "2.0", "method": "notifications/initialized"}', headers)
    assert status == 202, status
    return headers


def arguments(tool: str, sid: str, n: int) -> dict[str, Any]:
    if tool == "signal_append":
        return {"project_id": "bench", "summary": "progress"}
    args: dict[str, Any] = {"path": f"/kv/k{n % KEYS}", "session_id": sid}
    if tool == "brain_put":
        args.update(content=VALUE, store="session")
    return args


async def worker(port: int, token: str, kind: str, sessions: list[str], stop: float, counts: list[int]) -> None:
    conn = await RawConn(port).open()
    tool, legacy = kind.removesuffix("_legacy"), kind.endswith("_legacy")
    try:
        if kind == "noop_post":
            headers = {"Content-Type": "application/json", "Authorization": f"Bearer {ADMIN}"}
        else:
            headers = await legacy_headers(conn, token) if legacy else modern_headers(token, tool)
        for n in itertools.count():
            if time.perf_counter() >= stop:
                return
            if kind == "noop_post":
                status, body = await conn.post("/bench/noop", b"{}", headers)
            else:
                sid = sessions[n % len(sessions)]
                status, body = await conn.post("/mcp", tool_body(tool, arguments(tool, sid, n // len(sessions)),
                                                                 modern=not legacy), headers)
                result_of(body)
            assert status == 200, (status, body[:200])
            counts[0] += 1
    finally:
        await conn.close()


def cpu_seconds(pid: int) -> float:
    """The server process's CPU time so far, every thread (utime + stime from /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


async def rates(port: int, pid: int, token: str, ids: list[str], args: argparse.Namespace) -> dict[str, list[float]]:
    """Per kind, the rate of each round, and (under `<kind>_cpu`) the server's CPU per call in µs."""
    # Each client's sessions; with fewer sessions than clients, clients share them (round-robin).
    shares = [ids[i::args.clients] or [ids[i % len(ids)]] for i in range(args.clients)]
    out: dict[str, list[float]] = {k: [] for kind in KINDS for k in (kind, kind + "_cpu")}
    for n in range(args.rounds):
        for kind in KINDS[n % len(KINDS):] + KINDS[:n % len(KINDS)]:
            counts = [0]
            start, cpu = time.perf_counter(), cpu_seconds(pid)
            await asyncio.gather(*(worker(port, token, kind, share, start + args.seconds, counts)
                                   for share in shares))
            out[kind].append(counts[0] / (time.perf_counter() - start))
            out[kind + "_cpu"].append((cpu_seconds(pid) - cpu) / max(counts[0], 1) * 1e6)
    return out


async def prepare(port: int, n_sessions: int) -> tuple[str, list[str]]:
    """Wait for the hub, make the agent, project and sessions; (token, session ids), and one
    brain_put per key and session so that every get finds its entry."""
    admin = {"Authorization": f"Bearer {ADMIN}"}
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
        for _ in range(300):
            try:
                if (await http.get("/healthz")).status_code == 200:
                    break
            except httpx.HTTPError:
                await asyncio.sleep(0.1)
        (await http.post("/api/v1/projects", json={"id": "bench"}, headers=admin)).raise_for_status()
        (await http.post("/api/v1/agents", json={"id": "bench"}, headers=admin)).raise_for_status()
        token = str((await http.post("/api/v1/agents/bench/token", headers=admin)).json()["token"])
    conn = await RawConn(port).open()
    try:
        ids = []
        for i in range(n_sessions):
            _, body = await conn.post("/mcp", tool_body("session_start", {"project_id": "bench", "name": f"s{i}"},
                                                        modern=True), modern_headers(token, "session_start"))
            sid = str(result_of(body)["session_id"])
            ids.append(sid)
            for k in range(KEYS):
                _, body = await conn.post("/mcp", tool_body("brain_put", arguments("brain_put", sid, k), modern=True),
                                          modern_headers(token, "brain_put"))
                result_of(body)
        return token, ids
    finally:
        await conn.close()


@contextmanager
def hub_process(port: int, open_max: int) -> Iterator[subprocess.Popen[bytes]]:
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "HUB_LOG_LEVEL": "warning"}
        server = subprocess.Popen([sys.executable, "-c", SERVER, str(Path(tmp) / "data"), str(port), ADMIN,
                                   str(open_max)], env=env, stderr=subprocess.DEVNULL)
        try:
            yield server
        finally:
            server.terminate()
            server.wait(30)


def report(out: dict[str, list[float]], args: argparse.Namespace) -> None:
    med = statistics.median
    print(f"{args.clients} clients, {args.sessions} sessions, {args.rounds} rounds of {args.seconds:.0f} s per kind "
          f"(load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores):")
    for kind in KINDS:
        print(f"  {kind:22s} {' '.join(f'{v:6.0f}' for v in out[kind])} /s; median {med(out[kind]):6.0f} /s")
    print("server CPU per call:")
    for kind in KINDS:
        print(f"  {kind} per call, median: {med(out[kind + '_cpu']):.1f} us")
    for era, suffix in (("2026-07-28", ""), ("2025-11-25", "_legacy")):
        print(f"{era}:")
        base = out["signal_append" + suffix]
        floor = [b / f for b, f in zip(base, out["noop_post"], strict=True)]
        print(f"  signal_append{suffix} over the floor, ratio {med(floor):.2f}")
        for tool, target in TARGETS.items():
            rates_ = out[tool + suffix]
            ratio = med([r / b for r, b in zip(rates_, base, strict=True)])
            over_floor = med([r / f for r, f in zip(rates_, out["noop_post"], strict=True)])
            verdict = "met" if ratio >= target else "NOT met"
            print(f"  {tool}{suffix} over signal_append, ratio {ratio:.2f} (target {target}: {verdict})")
            print(f"  {tool}{suffix} over the floor, ratio {over_floor:.2f}")


async def main_async(args: argparse.Namespace) -> None:
    port = free_port()
    with hub_process(port, args.open_max) as server:
        token, ids = await prepare(port, args.sessions)
        report(await rates(port, server.pid, token, ids, args), args)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=3.0, help="seconds per kind per round")
    parser.add_argument("--open-max", type=int, default=0, help="open_stores_max for the hub (0: its default)")
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
