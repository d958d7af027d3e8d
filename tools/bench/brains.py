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

A window ends once the call log has moved its calls into the replay records and the search index
has taken its writes (`settle_index`): the writes a kind's calls cause behind them are charged to
that kind, however long the hub gathers them first.

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
import importlib.util
import itertools
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

if not __package__:  # run as `python tools/bench/<name>.py`: tools/bench/__init__.py says why
    del sys.path[0]
    if importlib.util.find_spec("tools") is None:
        sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tools.bench import mcp_wire as wire

VALUE = "v" * 2048
TICK = os.sysconf("SC_CLK_TCK")
KEYS = 4  # distinct entry paths per session: gets read what the puts wrote
TARGETS = {"brain_get": 1.0, "brain_put": 0.8}
KINDS = (
    "noop_post",
    "signal_append",
    "brain_put",
    "brain_get",
    "signal_append_legacy",
    "brain_put_legacy",
    "brain_get_legacy",
)


def arguments(tool: str, sid: str, n: int) -> dict[str, Any]:
    if tool == "signal_append":
        return {"project_id": "bench", "summary": "progress"}
    args: dict[str, Any] = {"path": f"/kv/k{n % KEYS}", "session_id": sid}
    if tool == "brain_put":
        args.update(content=VALUE, store="session")
    return args


async def worker(port: int, token: str, kind: str, sessions: list[str], stop: float, counts: list[int]) -> None:
    conn = await wire.RawConn("127.0.0.1", port).open()
    tool, legacy = kind.removesuffix("_legacy"), kind.endswith("_legacy")
    try:
        if kind == "noop_post":
            headers = {"Content-Type": "application/json", "Authorization": f"Bearer {wire.ADMIN}"}
        else:
            headers = await wire.legacy_session(conn, token) if legacy else wire.mcp_headers(token, tool)
        for n in itertools.count():
            if time.perf_counter() >= stop:
                return
            if kind == "noop_post":
                status, body = await conn.post("/bench/noop", b"{}", headers)
            else:
                sid = sessions[n % len(sessions)]
                status, body = await conn.post(
                    "/mcp", wire.tool_body(tool, arguments(tool, sid, n // len(sessions)), modern=not legacy), headers
                )
                wire.result_of(body)
            assert status == 200, (status, body[:200])
            counts[0] += 1
    finally:
        await conn.close()


async def settle_index(port: int, token: str) -> None:
    """Wait until the hub has done what the calls made so far left behind them: the call log's
    rows moved into the brains' replay records (`/bench/settle`; the hub moves them every 30 s), then
    the search index's pass (one `search` call, which starts it at once and answers after it). A
    window ends here, so the writes its own calls caused behind them are charged to its rate and
    CPU, not to whichever window runs when they land."""
    conn = await wire.RawConn("127.0.0.1", port).open()
    try:
        auth = {"Content-Type": "application/json", "Authorization": f"Bearer {wire.ADMIN}"}
        status, reply = await conn.post("/bench/settle", b"{}", auth)
        assert status == 200, (status, reply[:200])
        body = wire.tool_body("search", {"query": "settle", "project_id": "bench", "limit": 1}, modern=True)
        status, reply = await conn.post("/mcp", body, wire.mcp_headers(token, "search"))
        assert status == 200, (status, reply[:200])
        wire.result_of(reply)
    finally:
        await conn.close()


def cpu_seconds(pid: int) -> float:
    """The server process's CPU time so far, every thread (utime + stime from /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


async def rates(port: int, pid: int, token: str, ids: list[str], args: argparse.Namespace) -> dict[str, list[float]]:
    """Per kind, the rate of each round, and (under `<kind>_cpu`) the server's CPU per call in µs."""
    # Each client's sessions; with fewer sessions than clients, clients share them (round-robin).
    shares = [ids[i :: args.clients] or [ids[i % len(ids)]] for i in range(args.clients)]
    out: dict[str, list[float]] = {k: [] for kind in KINDS for k in (kind, kind + "_cpu")}
    await settle_index(port, token)  # the preparation's puts are indexed before the first window
    for n in range(args.rounds):
        for kind in KINDS[n % len(KINDS) :] + KINDS[: n % len(KINDS)]:
            counts = [0]
            start, cpu = time.perf_counter(), cpu_seconds(pid)
            await asyncio.gather(*(worker(port, token, kind, share, start + args.seconds, counts) for share in shares))
            await settle_index(port, token)  # the window's search indexing lands in the window
            out[kind].append(counts[0] / (time.perf_counter() - start))
            out[kind + "_cpu"].append((cpu_seconds(pid) - cpu) / max(counts[0], 1) * 1e6)
    return out


async def prepare(port: int, n_sessions: int) -> tuple[str, list[str]]:
    """Wait for the hub, make the agent, project and sessions; (token, session ids), and one
    brain_put per key and session so that every get finds its entry."""
    token = await wire.prepare_hub(port, "bench")
    conn = await wire.RawConn("127.0.0.1", port).open()
    try:
        ids = []
        for i in range(n_sessions):
            _, body = await conn.post(
                "/mcp",
                wire.tool_body("session_start", {"project_id": "bench", "name": f"s{i}"}, modern=True),
                wire.mcp_headers(token, "session_start"),
            )
            sid = str(wire.result_of(body)["session_id"])
            ids.append(sid)
            for k in range(KEYS):
                put = wire.tool_body("brain_put", arguments("brain_put", sid, k), modern=True)
                _, body = await conn.post("/mcp", put, wire.mcp_headers(token, "brain_put"))
                wire.result_of(body)
        return token, ids
    finally:
        await conn.close()


def report(out: dict[str, list[float]], args: argparse.Namespace) -> None:
    med = statistics.median
    print(
        f"{args.clients} clients, {args.sessions} sessions, {args.rounds} rounds of {args.seconds:.0f} s per kind "
        f"(load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores):"
    )
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
            per_round = [r / b for r, b in zip(rates_, base, strict=True)]
            ratio = med(per_round)
            over_floor = med([r / f for r, f in zip(rates_, out["noop_post"], strict=True)])
            verdict = "met" if ratio >= target else "NOT met"
            spread = f"rounds {min(per_round):.2f}-{max(per_round):.2f}"  # one run's swing, beside its median
            print(f"  {tool}{suffix} over signal_append, ratio {ratio:.2f}, {spread} (target {target}: {verdict})")
            print(f"  {tool}{suffix} over the floor, ratio {over_floor:.2f}")


async def main_async(args: argparse.Namespace) -> None:
    port = wire.free_port()
    with wire.hub_process(port, args.open_max) as server:
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
