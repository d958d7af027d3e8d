"""Benchmark: the agent endpoint under load.

1. Throughput: `signal_append` calls per second from 32 concurrent MCP clients (over streamable
   HTTP, one HTTP connection each), once as 2026-07-28 requests and once inside 2025-11-25 sessions
   (`initialize` once per client), next to a plain Quart POST route that does no work, on the same
   server in the same run. The three alternate for `--rounds` rounds; each call's rate is read as a
   ratio of the same round's no-op rate (the floor) and the median of the per-round ratios is
   reported (a shared machine's load drifts between runs). Targets: 0.6 of the floor on 2026-07-28,
   0.5 on 2025-11-25.
2. Waiting: 1,000 concurrent `inbox_wait` callers (1,000 agents, each waiting on its own question)
   held open; the server's resident memory per waiter; then every question answered over REST at a
   steady `--rate` (default 50 a second; 0 sends them as fast as 32 connections go) and the wake
   delay: from the answer's commit (the millisecond in its event id, same machine clock) to the
   waiter receiving its reply, p50/p99/max.

The hub runs in its own process (Hypercorn on asyncio, a fresh data directory); the clients run in
this one. Both share the machine, as they would on one host.

    .venv/bin/python tools/bench/mcp_calls.py [--clients 32] [--rounds 5] [--seconds 4] [--waiters 1000]
    .venv/bin/python -m tools.bench.mcp_calls --waiters 0 --rounds 3
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
PROTOCOL = "2026-07-28"
LEGACY_PROTOCOL = "2025-11-25"
META = {"io.modelcontextprotocol/protocolVersion": PROTOCOL,
        "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}}

SERVER = r'''
import asyncio, sys
from hypercorn.asyncio import serve
from hypercorn.config import Config
from quart import Blueprint, Response
from hubcore.config import HubSettings
from hubhttp.asgi import HubASGI

data_dir, port, token = sys.argv[1], int(sys.argv[2]), sys.argv[3]
settings = HubSettings(data_dir=data_dir, admin_token=token, min_free_bytes=0, bind=f"127.0.0.1:{port}",
                       inbox_open_per_project=0, inbox_open_per_agent=0)
app = HubASGI(settings)
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


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def ulid_seconds(event_id: str) -> float:
    """The wall-clock second an event id was minted (its first 10 characters, Crockford base32)."""
    alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
    ms = 0
    for ch in event_id[:10]:
        ms = ms * 32 + alphabet.index(ch)
    return ms / 1000


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


_ids = itertools.count(1)


def tool_body(name: str, arguments: dict[str, Any], *, modern: bool = True) -> bytes:
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if modern:
        params["_meta"] = META
    return orjson.dumps({"jsonrpc": "2.0", "id": next(_ids), "method": "tools/call", "params": params})


async def legacy_session(conn: RawConn, token: str) -> dict[str, str]:
    """Open a 2025-11-25 session on `conn` (initialize, initialized); the headers its calls carry."""
    base = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json"}
    status, _ = await conn.post("/mcp", orjson.dumps({
        "jsonrpc": "2.0", "id": next(_ids), "method": "initialize", "params": {
            "protocolVersion": LEGACY_PROTOCOL, "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"}}}), base)
    assert status == 200, status
    session = conn.last_head.split(b"mcp-session-id:", 1)[1].split(b"\r\n", 1)[0].strip().decode()
    headers = {**base, "Mcp-Session-Id": session, "MCP-Protocol-Version": LEGACY_PROTOCOL}
    status, _ = await conn.post("/mcp", b'{"jsonrpc": "2.0", "method": "notifications/initialized"}', headers)
    assert status == 202, status
    return headers


def mcp_headers(token: str, name: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json", "MCP-Protocol-Version": PROTOCOL,
            "Mcp-Method": "tools/call", "Mcp-Name": name}


class RawConn:
    """One keep-alive HTTP/1.1 connection with hand-built requests: cheap enough that the client
    process is not what the benchmark measures (httpx costs a few ms of CPU per request)."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.last_head = b""  # the status line and headers of the last reply, lower-cased

    async def open(self) -> RawConn:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        return self

    async def post(self, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
        assert self.reader is not None and self.writer is not None
        head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        self.writer.write(f"POST {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n{head}"
                          f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
        await self.writer.drain()
        raw = await self.reader.readuntil(b"\r\n\r\n")
        status = int(raw.split(b" ", 2)[1])
        lowered = self.last_head = raw.lower()
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


def result_of(body: bytes) -> dict[str, Any]:
    text = body.decode()
    if text.lstrip().startswith(("event:", ":", "data:")):
        text = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")][-1]
    reply = orjson.loads(text)
    if "error" in reply:
        raise RuntimeError(reply["error"])
    return dict(reply["result"]["structuredContent"])


async def throughput(host: str, port: int, token: str, clients: int, seconds: float,
                     rounds: int, legacy: bool) -> dict[str, list[float]]:
    """Per round, `seconds` of no-op POSTs then `seconds` of `signal_append` (and with `legacy`,
    `seconds` of it over 2025-11-25 sessions): rates per round."""
    # The gate refuses a route it has no entry for without the admin token (deny by default).
    noop_headers = {"Content-Type": "application/json", "Authorization": f"Bearer {ADMIN}"}
    append_headers = mcp_headers(token, "signal_append")

    async def worker(kind: str, stop: float, counts: list[int]) -> None:
        conn = await RawConn(host, port).open()
        try:
            headers = await legacy_session(conn, token) if kind == "signal_append_legacy" else append_headers
            while time.perf_counter() < stop:
                if kind == "noop_post":
                    status, _ = await conn.post("/bench/noop", b"{}", noop_headers)
                else:
                    status, _ = await conn.post("/mcp", tool_body("signal_append", {
                        "project_id": "bench", "summary": "progress"}, modern=kind == "signal_append"), headers)
                assert status == 200, status
                counts[0] += 1
        finally:
            await conn.close()

    kinds = ("noop_post", "signal_append", "signal_append_legacy")[:3 if legacy else 2]
    out: dict[str, list[float]] = {k: [] for kind in kinds for k in (kind, kind + "_client_cpu")}
    for _ in range(rounds):
        for kind in kinds:
            counts = [0]
            start, cpu = time.perf_counter(), time.process_time()
            await asyncio.gather(*(worker(kind, start + seconds, counts) for _ in range(clients)))
            wall = time.perf_counter() - start
            out[kind].append(counts[0] / wall)
            out[kind + "_client_cpu"].append((time.process_time() - cpu) / wall)
    return out


async def waiting(host: str, port: int, pid: int, waiters: int, rate: float) -> dict[str, float]:
    admin = {"Authorization": f"Bearer {ADMIN}", "Content-Type": "application/json"}
    sem = asyncio.Semaphore(32)

    async def make(n: int) -> tuple[str, str]:
        async with sem:
            conn = await RawConn(host, port).open()
            try:
                agent = f"w{n:04d}"
                status, _ = await conn.post("/api/v1/agents", orjson.dumps({"id": agent}), admin)
                assert status == 201, status
                _, body = await conn.post(f"/api/v1/agents/{agent}/token", b"", admin)
                token = orjson.loads(body)["token"]
                _, body = await conn.post("/mcp", tool_body("question_post", {
                    "project_id": f"space-{agent}", "summary": "go?"}), mcp_headers(token, "question_post"))
                return token, result_of(body)["question_id"]
            finally:
                await conn.close()

    made = await asyncio.gather(*(make(n) for n in range(waiters)))
    conns = [await RawConn(host, port).open() for _ in made]
    await asyncio.sleep(1)
    base_rss = rss_bytes(pid)
    returned: dict[str, float] = {}

    async def wait(conn: RawConn, token: str, qid: str) -> None:
        _, body = await conn.post("/mcp", tool_body("inbox_wait", {"wait_seconds": 60}),
                                  mcp_headers(token, "inbox_wait"))
        returned[qid] = time.time()
        assert result_of(body)["timed_out"] is False

    tasks = [asyncio.create_task(wait(c, t, q)) for c, (t, q) in zip(conns, made, strict=True)]
    await asyncio.sleep(5)  # every waiter is parked on the server
    held_rss = rss_bytes(pid)
    answered: dict[str, float] = {}

    async def answer(qid: str) -> None:
        async with sem:
            conn = await RawConn(host, port).open()
            try:
                status, body = await conn.post(f"/api/v1/questions/{qid}/answer", b'{"body": "yes"}', admin)
                assert status == 200, (status, body)
                answered[qid] = ulid_seconds(orjson.loads(body)["event_id"])
            finally:
                await conn.close()

    start = time.perf_counter()
    answering = []
    for n, (_, q) in enumerate(made):
        if rate > 0:
            await asyncio.sleep(max(0.0, start + n / rate - time.perf_counter()))
        answering.append(asyncio.create_task(answer(q)))
    await asyncio.gather(*answering)
    await asyncio.gather(*tasks)
    total = time.perf_counter() - start
    for conn in conns:
        await conn.close()
    delays = sorted((returned[q] - answered[q]) * 1000 for q in answered)
    return {
        "waiters": waiters, "rss_before_mib": base_rss / 2**20, "rss_held_mib": held_rss / 2**20,
        "kib_per_waiter": (held_rss - base_rss) / waiters / 1024,
        "wake_p50_ms": statistics.median(delays), "wake_p99_ms": delays[max(0, int(len(delays) * 0.99) - 1)],
        "wake_max_ms": delays[-1], "answer_all_s": total,
    }


@contextmanager
def hub_process(port: int) -> Iterator[subprocess.Popen[bytes]]:
    """A hub serving a fresh temporary data directory on `port`, stopped on exit."""
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "HUB_LOG_LEVEL": "warning"}
        server = subprocess.Popen([sys.executable, "-c", SERVER, str(Path(tmp) / "data"), str(port), ADMIN],
                                  env=env, stderr=subprocess.DEVNULL)
        try:
            yield server
        finally:
            server.terminate()
            server.wait(30)


async def prepare_hub(port: int) -> str:
    """Wait for the hub on `port`, make the bench project and agent; the agent's token."""
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=5) as http:
        for _ in range(200):
            try:
                if (await http.get("/healthz")).status_code == 200:
                    break
            except httpx.HTTPError:
                await asyncio.sleep(0.1)
        admin = {"Authorization": f"Bearer {ADMIN}"}
        await http.post("/api/v1/projects", json={"id": "bench"}, headers=admin)
        await http.post("/api/v1/agents", json={"id": "bench-agent"}, headers=admin)
        return str((await http.post("/api/v1/agents/bench-agent/token", headers=admin)).json()["token"])


# The calls timed against the no-op floor: (rates key, label, target ratio of the floor).
CALLS = (("signal_append", f"signal_append {PROTOCOL}", 0.6),
         ("signal_append_legacy", f"signal_append {LEGACY_PROTOCOL} session", 0.5))


def report_throughput(rates: dict[str, list[float]], args: argparse.Namespace) -> None:
    """Per round and as medians: each call's rate and its ratio of the same round's no-op rate."""
    calls = [c for c in CALLS if c[0] in rates]
    floor = rates["noop_post"]
    print(f"throughput, {args.clients} clients, {args.rounds} rounds of {args.seconds:.0f} s per kind:")
    for i, n in enumerate(floor):
        parts = "  ".join(f"{label} {rates[key][i]:6.0f}/s ({rates[key][i] / n:.2f})" for key, label, _ in calls)
        print(f"  round {i + 1}: plain POST {n:6.0f}/s  {parts}")
    med = statistics.median
    print(f"  plain Quart POST (no work): {med(floor):8.0f} /s median "
          f"(client process busy {med(rates['noop_post_client_cpu']):.0%} of one core)")
    for key, label, _ in calls:
        print(f"  MCP {label}: {med(rates[key]):8.0f} /s median (client busy {med(rates[key + '_client_cpu']):.0%})")
    for key, label, target in calls:
        ratio = med([a / n for a, n in zip(rates[key], floor, strict=True)])
        print(f"  {label}, ratio of the floor (median of the rounds): {ratio:.2f} "
              f"(target {target:.2f}: {'met' if ratio >= target else 'NOT met'})")


async def main_async(args: argparse.Namespace) -> None:
    port = free_port()
    with hub_process(port) as server:
        token = await prepare_hub(port)
        rates = await throughput("127.0.0.1", port, token, args.clients, args.seconds, args.rounds,
                                 args.legacy)
        report_throughput(rates, args)
        print(f"  load average at the end: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
        if args.waiters <= 0:
            return
        held = await waiting("127.0.0.1", port, server.pid, args.waiters, args.rate)
        pace = f"{args.rate:.0f} answers/s" if args.rate > 0 else "as fast as 32 connections go"
        print(f"inbox_wait, {held['waiters']} waiters held, answered at {pace}:")
        print(f"  server RSS {held['rss_before_mib']:.1f} MiB before, {held['rss_held_mib']:.1f} MiB held: "
              f"{held['kib_per_waiter']:.1f} KiB per waiter")
        print(f"  wake delay after the answer committed: p50 {held['wake_p50_ms']:.1f} ms, "
              f"p99 {held['wake_p99_ms']:.1f} ms, max {held['wake_max_ms']:.1f} ms "
              f"(all {held['waiters']} answered in {held['answer_all_s']:.1f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=4.0, help="seconds per kind per round")
    parser.add_argument("--rounds", type=int, default=5, help="alternating no-op / signal_append rounds")
    parser.add_argument("--legacy", action=argparse.BooleanOptionalAction, default=True,
                        help="also time signal_append over 2025-11-25 sessions (initialize once per client)")
    parser.add_argument("--waiters", type=int, default=1000, help="0 skips the waiting part")
    parser.add_argument("--rate", type=float, default=50.0, help="answers per second (0: a burst)")
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
