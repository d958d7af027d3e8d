"""Benchmark: the hub server's own CPU time per request, a no-op POST against MCP `signal_append`.

Throughput on the shared 2-core machine moves with other work: an A/A run of `tools/bench/mcp_calls.py`
(the same code as A and B, alternating, 3 runs each) read a median ratio of 0.63 for one and 0.77
for the other. The CPU time the server process spends per request (all its threads, from
/proc/<pid>/stat) moves far less, so a before/after comparison of a restructuring reads this
figure (with `tools/bench/ab.py`). Each round sends a fixed number of requests of each kind from
`--clients` keep-alive connections (the hand-built client of `tools/bench/mcp_calls.py`) and divides the
server's CPU time by the count; the median of the rounds is reported.

    .venv/bin/python -m tools.bench.mcp_cpu [--clients 8] [--requests 2000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import statistics
import sys
from pathlib import Path

if not __package__:  # run as `python tools/bench/<name>.py`: tools/bench/__init__.py says why
    del sys.path[0]
    if importlib.util.find_spec("tools") is None:
        sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tools.bench import mcp_wire as wire

TICK = os.sysconf("SC_CLK_TCK")
KINDS = ("noop_post", "signal_append", "signal_append_legacy")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime + stime, every thread of the process


async def send(port: int, token: str, kind: str, count: int) -> None:
    conn = await wire.RawConn("127.0.0.1", port).open()
    try:
        if kind == "noop_post":
            headers = {"Content-Type": "application/json", "Authorization": f"Bearer {wire.ADMIN}"}
        elif kind == "signal_append_legacy":
            headers = await wire.legacy_session(conn, token)
        else:
            headers = wire.mcp_headers(token, "signal_append")
        for _ in range(count):
            if kind == "noop_post":
                status, _ = await conn.post("/bench/noop", b"{}", headers)
            else:
                status, _ = await conn.post(
                    "/mcp",
                    wire.tool_body(
                        "signal_append", {"project_id": "bench", "summary": "progress"}, modern=kind == "signal_append"
                    ),
                    headers,
                )
            assert status == 200, status
    finally:
        await conn.close()


async def rounds(port: int, pid: int, token: str, args: argparse.Namespace) -> dict[str, list[float]]:
    per = args.requests // args.clients
    out: dict[str, list[float]] = {kind: [] for kind in KINDS}
    for n in range(args.rounds):
        order = KINDS[n % 3 :] + KINDS[: n % 3]
        for kind in order:
            before = cpu_seconds(pid)
            await asyncio.gather(*(send(port, token, kind, per) for _ in range(args.clients)))
            out[kind].append((cpu_seconds(pid) - before) / (per * args.clients) * 1e6)
    return out


async def main_async(args: argparse.Namespace) -> None:
    port = wire.free_port()
    with wire.hub_process(port) as server:
        token = await wire.prepare_hub(port)
        cpu = await rounds(port, server.pid, token, args)
    med = {kind: statistics.median(values) for kind, values in cpu.items()}
    print(
        f"server CPU per request, median of {args.rounds} rounds of {args.requests} requests "
        f"({args.clients} connections; load average {os.getloadavg()[0]:.2f}):"
    )
    for kind in KINDS:
        print(f"  {kind}: {' '.join(f'{v:.0f}' for v in cpu[kind])} us per round; median: {med[kind]:.1f} us")
    print(f"  signal_append over noop, CPU ratio {med['signal_append'] / med['noop_post']:.2f}")
    print(f"  signal_append_legacy over noop, CPU ratio {med['signal_append_legacy'] / med['noop_post']:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--requests", type=int, default=2000, help="requests of each kind per round")
    parser.add_argument("--rounds", type=int, default=5)
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
