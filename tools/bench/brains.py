"""Benchmark: brain_put and brain_get over MCP across 200 sessions, against direct sqlite3.

A hub is served by `hub-cli serve` in its own process on a free loopback port, with
`open_stores_max` below the session count, so the brain actor pool opens and closes files as the
calls move between sessions. One agent
owns every session; `--clients` connections each work through their share of the sessions, naming
the session on every call, with the hand-built HTTP/1.1 requests of the MCP benchmark (protocol
2026-07-28, one request per call) so that client CPU is not what is measured. The baseline writes and reads the same
values with plain sqlite3, one connection per file, opened and closed per operation like a pool
miss, in the same process and run.

    .venv/bin/python -m tools.bench.brains [--sessions 200] [--rounds 5] [--clients 20] [--open-max 64]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if not __package__:  # run as `python tools/bench/<name>.py`: tools/bench/__init__.py says why
    del sys.path[0]
    if importlib.util.find_spec("tools") is None:
        sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import httpx

from hubcore.services import entries
from hubcore.store import brain
from tools.bench.mcp_calls import RawConn, mcp_headers, result_of, tool_body

ADMIN = "hub_bench-admin-token"
VALUE = "v" * 2048


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def admin(http: httpx.AsyncClient, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
    r = await http.request(method, path, json=body, headers={"Authorization": f"Bearer {ADMIN}"})
    r.raise_for_status()
    return r.json()


async def worker(host: str, port: int, token: str, sessions: list[str], rounds: int, op: str,
                 lat: list[float]) -> None:
    conn = await RawConn(host, port).open()
    try:
        for r in range(rounds):
            for sid in sessions:
                args: dict[str, Any] = {"path": f"/kv/k{r}", "session_id": sid}
                if op == "put":
                    args.update(content=VALUE, store="session")
                name = f"brain_{op}"
                t0 = time.perf_counter()
                status, body = await conn.post("/mcp", tool_body(name, args), mcp_headers(token, name))
                lat.append(time.perf_counter() - t0)
                assert status == 200, body
                result_of(body)
    finally:
        await conn.close()


async def over_mcp(n_sessions: int, rounds: int, clients: int, open_max: int) -> dict[str, Any]:
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "HUB_CONFIG": f"{tmp}/config.toml", "HUB_DATA_DIR": f"{tmp}/data",
               "HUB_BIND": f"127.0.0.1:{port}", "HUB_ADMIN_TOKEN": ADMIN, "HUB_MIN_FREE_BYTES": "0",
               "HUB_OPEN_STORES_MAX": str(open_max), "HUB_LOG_LEVEL": "warning"}
        server = subprocess.Popen([sys.executable, "-P", "-m", "hubcli", "serve"], env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        try:
            assert server.stdout is not None
            server.stdout.readline()  # the startup line: bound and serving
            base = f"http://127.0.0.1:{port}"
            async with httpx.AsyncClient(base_url=base, timeout=60) as http:
                await admin(http, "POST", "/api/v1/agents", {"id": "bench"})
                token = (await admin(http, "POST", "/api/v1/agents/bench/token"))["token"]
                await admin(http, "POST", "/api/v1/projects", {"id": "bench"})
            ids = await start_sessions(port, token, n_sessions)
            shares = [ids[i::clients] for i in range(clients)]
            figures: dict[str, Any] = {}
            for op in ("put", "get"):
                lat: list[float] = []
                t0 = time.perf_counter()
                await asyncio.gather(*(worker("127.0.0.1", port, token, share, rounds, op, lat)
                                       for share in shares))
                elapsed = time.perf_counter() - t0
                lat.sort()
                figures[op] = {"ops": len(lat), "per_sec": len(lat) / elapsed,
                               "p50_ms": statistics.median(lat) * 1000,
                               "p99_ms": lat[int(len(lat) * 0.99) - 1] * 1000}
            return figures
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=30)


async def start_sessions(port: int, token: str, count: int) -> list[str]:
    conn = await RawConn("127.0.0.1", port).open()
    try:
        ids = []
        for i in range(count):
            args = {"project_id": "bench", "name": f"s{i}"}
            _, body = await conn.post("/mcp", tool_body("session_start", args), mcp_headers(token, "session_start"))
            ids.append(str(result_of(body)["session_id"]))
        return ids
    finally:
        await conn.close()


def direct(n_sessions: int, rounds: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        paths = [Path(tmp) / f"s{i}.db" for i in range(n_sessions)]
        figures: dict[str, Any] = {}
        for op in ("put", "get"):
            t0 = time.perf_counter()
            count = 0
            for r in range(rounds):
                for path in paths:
                    conn = sqlite3.connect(path, isolation_level=None)
                    conn.execute("PRAGMA journal_mode=WAL")
                    conn.execute("PRAGMA synchronous=NORMAL")
                    brain.setup(conn)
                    if op == "put":
                        data = VALUE.encode()
                        conn.execute("INSERT OR REPLACE INTO entries (path, value, version, written_at) "
                                     "VALUES (?, ?, ?, ?)", (f"/kv/k{r}", data, entries.version_of(data), time.time()))
                    else:
                        conn.execute("SELECT value FROM entries WHERE path = ?", (f"/kv/k{r}",)).fetchone()
                    conn.close()
                    count += 1
            figures[op] = {"ops": count, "per_sec": count / (time.perf_counter() - t0)}
    return figures


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--open-max", type=int, default=64)
    a = ap.parse_args()
    mcp = asyncio.run(over_mcp(a.sessions, a.rounds, a.clients, a.open_max))
    raw = direct(a.sessions, a.rounds)
    for op in ("put", "get"):
        m, d = mcp[op], raw[op]
        print(f"brain_{op}: MCP {m['per_sec']:.0f}/s (p50 {m['p50_ms']:.1f} ms, p99 {m['p99_ms']:.1f} ms, "
              f"hub in its own process) | direct sqlite3 {d['per_sec']:.0f}/s | "
              f"ratio {m['per_sec'] / d['per_sec']:.2f}")


if __name__ == "__main__":
    main()
