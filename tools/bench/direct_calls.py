"""Benchmark: the hub's own CPU per MCP call, with its ASGI app called directly (no Hypercorn, no
socket): `signal_append`, `brain_get` and `brain_put`, the bodies, headers, sessions and values of
`tools/bench/brains.py`.

`brains.py` measures calls served over HTTP. Set beside its server CPU per call, this splits a
call's cost between the hub's own path (the gate, the MCP SDK, the tool, the stores) and serving
it over HTTP (Hypercorn, h11, the socket): docs/benchmarks.md, tenth session, found a get cheaper
than an append here and dearer than one when served. One process: `--tasks` concurrent tasks send
`--calls` calls of each kind per round, the kinds in a rotating order over `--rounds` rounds, each
round ending once the call log has moved its rows and the search index caught up (as `brains.py`'s
windows end). Reported per kind, the medians: the loop thread's CPU per call (`time.thread_time`
on the loop) and the process's (every thread: hub.db's and the brain files' writers too).

    .venv/bin/python -m tools.bench.direct_calls [--sessions 20] [--tasks 32] [--calls 3000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import statistics
import sys
import time
from pathlib import Path
from typing import Any

if not __package__:  # run as `python tools/bench/<name>.py`: tools/bench/__init__.py says why
    del sys.path[0]
    if importlib.util.find_spec("tools") is None:
        sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import httpx

from hubhttp.asgi import HubASGI
from tools.bench import mcp_wire as wire
from tools.bench.brains import KEYS, arguments
from tools.bench.feed import ADMIN_TOKEN, http_scope, served

KINDS = ("signal_append", "brain_get", "brain_put")


async def prepare(http: httpx.AsyncClient, sessions: int) -> tuple[str, list[str]]:
    """The `bench` project, an agent, its sessions and one put per key and session (as `brains.py`)."""
    admin = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    (await http.post("/api/v1/projects", json={"id": "bench"}, headers=admin)).raise_for_status()
    (await http.post("/api/v1/agents", json={"id": "bench"}, headers=admin)).raise_for_status()
    token = str((await http.post("/api/v1/agents/bench/token", headers=admin)).json()["token"])
    ids = []
    for i in range(sessions):
        start = wire.tool_body("session_start", {"project_id": "bench", "name": f"s{i}"})
        reply = await http.post("/mcp", content=start, headers=wire.mcp_headers(token, "session_start"))
        sid = str(wire.result_of(reply.content)["session_id"])
        ids.append(sid)
        for k in range(KEYS):
            put = wire.tool_body("brain_put", arguments("brain_put", sid, k))
            wire.result_of((await http.post("/mcp", content=put, headers=wire.mcp_headers(token, "brain_put"))).content)
    return token, ids


async def call(app: HubASGI, token: str, tool: str, args: dict[str, Any]) -> None:
    """One `tools/call` through the app's ASGI entry, as Hypercorn would hand it over."""
    body = wire.tool_body(tool, args)
    headers = [(b"host", b"127.0.0.1:8080"), (b"content-length", str(len(body)).encode())]
    headers += [(k.lower().encode(), v.encode()) for k, v in wire.mcp_headers(token, tool).items()]
    scope = http_scope("POST", "/mcp", headers)
    delivered = False
    status: list[int] = []

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.Event().wait()  # the client never disconnects
        raise AssertionError("unreachable")

    async def send(message: Any) -> None:
        if message["type"] == "http.response.start":
            status.append(message["status"])

    await app(scope, receive, send)  # type: ignore[arg-type]
    assert status == [200], (tool, status)


async def window(app: HubASGI, token: str, ids: list[str], kind: str, args: argparse.Namespace) -> tuple[float, float]:
    """(loop thread's, process's) CPU per call in microseconds, for one window of `kind`."""

    async def task(first: int) -> None:
        for n in range(first, args.calls, args.tasks):
            await call(app, token, kind, arguments(kind, ids[n % len(ids)], n // len(ids)))

    loop_cpu, all_cpu = time.thread_time(), time.process_time()
    await asyncio.gather(*(task(i) for i in range(args.tasks)))
    await app.hub.brains.calls.flush(None)  # the window's replay rows moved, as brains.py's settle
    await app.hub.search_index.settled()
    return (
        (time.thread_time() - loop_cpu) / args.calls * 1e6,
        (time.process_time() - all_cpu) / args.calls * 1e6,
    )


async def main_async(args: argparse.Namespace) -> None:
    async with served(None, bind="127.0.0.1:8080", inbox_open_per_project=0, inbox_open_per_agent=0) as (app, http):
        token, ids = await prepare(http, args.sessions)
        out: dict[str, list[tuple[float, float]]] = {kind: [] for kind in KINDS}
        for n in range(args.rounds):
            for kind in KINDS[n % len(KINDS) :] + KINDS[: n % len(KINDS)]:
                out[kind].append(await window(app, token, ids, kind, args))
    print(f"{args.tasks} tasks, {args.sessions} sessions, {args.rounds} rounds of {args.calls} calls per kind:")
    for kind in KINDS:
        loop = statistics.median(v[0] for v in out[kind])
        process = statistics.median(v[1] for v in out[kind])
        print(f"  {kind:14s} CPU per call: loop thread {loop:5.0f} us, process {process:5.0f} us")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--tasks", type=int, default=32)
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=5)
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
