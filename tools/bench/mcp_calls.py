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
import importlib.util
import os
import statistics
import sys
import time
from pathlib import Path

if not __package__:  # run as `python tools/bench/<name>.py`: tools/bench/__init__.py says why
    del sys.path[0]
    if importlib.util.find_spec("tools") is None:
        sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import orjson

from tools.bench import mcp_wire as wire


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


async def throughput(
    host: str, port: int, token: str, clients: int, seconds: float, rounds: int, legacy: bool
) -> dict[str, list[float]]:
    """Per round, `seconds` of no-op POSTs then `seconds` of `signal_append` (and with `legacy`,
    `seconds` of it over 2025-11-25 sessions): rates per round."""
    # The gate refuses a route it has no entry for without the admin token (deny by default).
    noop_headers = {"Content-Type": "application/json", "Authorization": f"Bearer {wire.ADMIN}"}
    append_headers = wire.mcp_headers(token, "signal_append")

    async def worker(kind: str, stop: float, counts: list[int]) -> None:
        conn = await wire.RawConn(host, port).open()
        try:
            headers = await wire.legacy_session(conn, token) if kind == "signal_append_legacy" else append_headers
            while time.perf_counter() < stop:
                if kind == "noop_post":
                    status, _ = await conn.post("/bench/noop", b"{}", noop_headers)
                else:
                    status, _ = await conn.post(
                        "/mcp",
                        wire.tool_body(
                            "signal_append",
                            {"project_id": "bench", "summary": "progress"},
                            modern=kind == "signal_append",
                        ),
                        headers,
                    )
                assert status == 200, status
                counts[0] += 1
        finally:
            await conn.close()

    kinds = ("noop_post", "signal_append", "signal_append_legacy")[: 3 if legacy else 2]
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
    admin = {"Authorization": f"Bearer {wire.ADMIN}", "Content-Type": "application/json"}
    sem = asyncio.Semaphore(32)

    async def make(n: int) -> tuple[str, str]:
        async with sem:
            conn = await wire.RawConn(host, port).open()
            try:
                agent = f"w{n:04d}"
                status, _ = await conn.post("/api/v1/agents", orjson.dumps({"id": agent}), admin)
                assert status == 201, status
                _, body = await conn.post(f"/api/v1/agents/{agent}/token", b"", admin)
                token = orjson.loads(body)["token"]
                _, body = await conn.post(
                    "/mcp",
                    wire.tool_body("question_post", {"project_id": f"space-{agent}", "summary": "go?"}),
                    wire.mcp_headers(token, "question_post"),
                )
                return token, wire.result_of(body)["question_id"]
            finally:
                await conn.close()

    made = await asyncio.gather(*(make(n) for n in range(waiters)))
    conns = [await wire.RawConn(host, port).open() for _ in made]
    await asyncio.sleep(1)
    base_rss = rss_bytes(pid)
    returned: dict[str, float] = {}

    async def wait(conn: wire.RawConn, token: str, qid: str) -> None:
        _, body = await conn.post(
            "/mcp", wire.tool_body("inbox_wait", {"wait_seconds": 60}), wire.mcp_headers(token, "inbox_wait")
        )
        returned[qid] = time.time()
        assert wire.result_of(body)["timed_out"] is False

    tasks = [asyncio.create_task(wait(c, t, q)) for c, (t, q) in zip(conns, made, strict=True)]
    await asyncio.sleep(5)  # every waiter is parked on the server
    held_rss = rss_bytes(pid)
    answered: dict[str, float] = {}

    async def answer(qid: str) -> None:
        async with sem:
            conn = await wire.RawConn(host, port).open()
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
        "waiters": waiters,
        "rss_before_mib": base_rss / 2**20,
        "rss_held_mib": held_rss / 2**20,
        "kib_per_waiter": (held_rss - base_rss) / waiters / 1024,
        "wake_p50_ms": statistics.median(delays),
        "wake_p99_ms": delays[max(0, int(len(delays) * 0.99) - 1)],
        "wake_max_ms": delays[-1],
        "answer_all_s": total,
    }


# The calls timed against the no-op floor: (rates key, label, target ratio of the floor).
CALLS = (
    ("signal_append", f"signal_append {wire.MODERN}", 0.6),
    ("signal_append_legacy", f"signal_append {wire.LEGACY} session", 0.5),
)


def report_throughput(rates: dict[str, list[float]], args: argparse.Namespace) -> None:
    """Per round and as medians: each call's rate and its ratio of the same round's no-op rate."""
    calls = [c for c in CALLS if c[0] in rates]
    floor = rates["noop_post"]
    print(f"throughput, {args.clients} clients, {args.rounds} rounds of {args.seconds:.0f} s per kind:")
    for i, n in enumerate(floor):
        parts = "  ".join(f"{label} {rates[key][i]:6.0f}/s ({rates[key][i] / n:.2f})" for key, label, _ in calls)
        print(f"  round {i + 1}: plain POST {n:6.0f}/s  {parts}")
    med = statistics.median
    print(
        f"  plain Quart POST (no work): {med(floor):8.0f} /s median "
        f"(client process busy {med(rates['noop_post_client_cpu']):.0%} of one core)"
    )
    for key, label, _ in calls:
        print(f"  MCP {label}: {med(rates[key]):8.0f} /s median (client busy {med(rates[key + '_client_cpu']):.0%})")
    for key, label, target in calls:
        ratio = med([a / n for a, n in zip(rates[key], floor, strict=True)])
        print(
            f"  {label}, ratio of the floor (median of the rounds): {ratio:.2f} "
            f"(target {target:.2f}: {'met' if ratio >= target else 'NOT met'})"
        )


async def main_async(args: argparse.Namespace) -> None:
    port = wire.free_port()
    with wire.hub_process(port) as server:
        token = await wire.prepare_hub(port)
        rates = await throughput("127.0.0.1", port, token, args.clients, args.seconds, args.rounds, args.legacy)
        report_throughput(rates, args)
        print(f"  load average at the end: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
        if args.waiters <= 0:
            return
        held = await waiting("127.0.0.1", port, server.pid, args.waiters, args.rate)
        pace = f"{args.rate:.0f} answers/s" if args.rate > 0 else "as fast as 32 connections go"
        print(f"inbox_wait, {held['waiters']} waiters held, answered at {pace}:")
        print(
            f"  server RSS {held['rss_before_mib']:.1f} MiB before, {held['rss_held_mib']:.1f} MiB held: "
            f"{held['kib_per_waiter']:.1f} KiB per waiter"
        )
        print(
            f"  wake delay after the answer committed: p50 {held['wake_p50_ms']:.1f} ms, "
            f"p99 {held['wake_p99_ms']:.1f} ms, max {held['wake_max_ms']:.1f} ms "
            f"(all {held['waiters']} answered in {held['answer_all_s']:.1f} s)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=4.0, help="seconds per kind per round")
    parser.add_argument("--rounds", type=int, default=5, help="alternating no-op / signal_append rounds")
    parser.add_argument(
        "--legacy",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also time signal_append over 2025-11-25 sessions (initialize once per client)",
    )
    parser.add_argument("--waiters", type=int, default=1000, help="0 skips the waiting part")
    parser.add_argument("--rate", type=float, default=50.0, help="answers per second (0: a burst)")
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
