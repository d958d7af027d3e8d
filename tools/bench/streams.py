"""Benchmark: what open `GET /api/v1/stream` responses cost the writers.

`signal_append` calls per second (32 concurrent MCP clients, 2026-07-28 requests, one HTTP
connection each) with 0, 100 and 500 agent-token streams open, on one real `hub-cli serve` process
over loopback. The three settings alternate for `--rounds` rounds and each round's rate is
compared with the same round's 0-stream rate; the median of those ratios is reported (a shared
machine's load drifts between rounds). Every stream belongs to its own agent (one token each, so
the per-token cap is not in the way) and can see the project written to, so every write is news
to every stream: the worst case. The streams are held and read by a separate process, so reading
them does not slow the load generator. While the load runs, `/readyz` is timed every 100 ms, and
the hub process's CPU time per write is taken from /proc: on a shared machine the rates also
move with whatever else runs, the hub's own CPU per write much less.

    .venv/bin/python tools/bench/streams.py [--streams 0,100,500] [--rounds 3] [--seconds 4]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tools.bench.mcp_wire import RawConn, free_port, mcp_headers, tool_body

ADMIN = "hub_bench-admin-token-0123456789abcdef"
PROJECT = "bench"

# The stream holder: a child process that opens and reads streams on command (stdin: `open N`,
# `close`, `quit`), answering each command with one JSON line: how many streams are open, and
# how many feed events and refresh messages they received since the last command.
HOLDER = r"""
import asyncio, json, sys

host, port, tokens = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(",")

async def stream(token, ready, counts):
    reader, writer = await asyncio.open_connection(host, port)
    writer.write(f"GET /api/v1/stream HTTP/1.1\r\nHost: {host}:{port}\r\nAuthorization: Bearer {token}\r\n"
                 "Accept: text/event-stream\r\n\r\n".encode())
    head = await reader.readuntil(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), head
    ready.release()
    try:
        while data := await reader.read(1 << 16):
            counts[0] += data.count(b"event: feed")
            counts[1] += data.count(b"event: refresh")
    finally:
        writer.close()

async def main():
    loop = asyncio.get_running_loop()
    counts, tasks = [0, 0], []
    lines = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(lines), sys.stdin)
    while command := (await lines.readline()).decode().split():
        if command[0] == "open":
            ready, gate = asyncio.Semaphore(0), asyncio.Semaphore(50)
            async def opened(token):
                async with gate:
                    task = asyncio.create_task(stream(token, ready, counts))
                    await ready.acquire()
                    return task
            tasks += await asyncio.gather(*(opened(t) for t in tokens[len(tasks):len(tasks) + int(command[1])]))
        elif command[0] == "close":
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            tasks = []
        elif command[0] == "quit":
            break
        print(json.dumps({"open": len(tasks), "feed": counts[0], "refresh": counts[1]}), flush=True)
        counts[0] = counts[1] = 0

asyncio.run(main())
"""


class Holder:
    def __init__(self, port: int, tokens: list[str]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", HOLDER, "127.0.0.1", str(port), ",".join(tokens)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def command(self, line: str) -> dict[str, int]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        return dict(orjson.loads(self.proc.stdout.readline()))

    def stop(self) -> None:
        self.command("close")
        assert self.proc.stdin is not None
        self.proc.stdin.write("quit\n")
        self.proc.stdin.close()
        self.proc.wait(30)


async def append_load(port: int, token: str, clients: int, seconds: float) -> tuple[float, list[float]]:
    """`signal_append` calls per second over `seconds`, and `/readyz` latencies meanwhile (ms)."""
    headers = mcp_headers(token, "signal_append")
    count = [0]
    stop = time.perf_counter() + seconds

    async def worker() -> None:
        conn = await RawConn("127.0.0.1", port).open()
        try:
            while time.perf_counter() < stop:
                status, _ = await conn.post(
                    "/mcp", tool_body("signal_append", {"project_id": PROJECT, "summary": "progress"}), headers
                )
                assert status == 200, status
                count[0] += 1
        finally:
            await conn.close()

    async def probe(latencies: list[float]) -> None:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
            while time.perf_counter() < stop:
                start = time.perf_counter()
                r = await http.get("/readyz")
                latencies.append((time.perf_counter() - start) * 1000)
                assert r.status_code == 200, r.text
                await asyncio.sleep(0.1)

    latencies: list[float] = []
    start = time.perf_counter()
    await asyncio.gather(probe(latencies), *(worker() for _ in range(clients)))
    return count[0] / (time.perf_counter() - start), latencies


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time a process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_hub(data_dir: Path, port: int) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HUB_")}
    env.update(
        {
            "HUB_CONFIG": str(data_dir.parent / "config.toml"),
            "HUB_DATA_DIR": str(data_dir),
            "HUB_ADMIN_TOKEN": ADMIN,
            "HUB_BIND": f"127.0.0.1:{port}",
            "HUB_MIN_FREE_BYTES": "0",
            "HUB_LOG_LEVEL": "warning",
        }
    )
    return subprocess.Popen(
        [sys.executable, "-m", "hubcli", "serve"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


async def setup(port: int, agents: int) -> tuple[str, list[str]]:
    """The writer's token and one token per stream agent (each sees the bench project)."""
    admin = {"Authorization": f"Bearer {ADMIN}"}
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30, headers=admin) as http:
        for _ in range(300):
            try:
                if (await http.get("/readyz")).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.1)
        assert (await http.post("/api/v1/projects", json={"id": PROJECT})).status_code == 201
        gate = asyncio.Semaphore(16)

        async def agent(agent_id: str) -> str:
            async with gate:
                r = await http.post("/api/v1/agents", json={"id": agent_id})
                assert r.status_code == 201, r.text
                return str((await http.post(f"/api/v1/agents/{agent_id}/token")).json()["token"])

        writer = await agent("writer")
        readers = await asyncio.gather(*(agent(f"s{n:04d}") for n in range(agents)))
    return writer, list(readers)


def report(
    args: argparse.Namespace,
    rates: dict[int, list[float]],
    probes: dict[int, list[float]],
    received: dict[int, list[dict[str, int]]],
    cpu_per_write: dict[int, list[float]],
) -> None:
    base = rates.get(0)
    print(
        f"signal_append, {args.clients} clients, {args.rounds} rounds of {args.seconds:.0f} s per setting "
        f"(streams alternate {','.join(map(str, rates))}):"
    )
    for n, values in rates.items():
        line = f"  {n:4d} streams: {statistics.median(values):7.0f}/s median ({', '.join(f'{v:.0f}' for v in values)})"
        if base is not None and n:
            ratios = [v / b for v, b in zip(values, base, strict=True)]
            each = ", ".join(f"{r:.2f}" for r in ratios)
            line += f"  ratio to 0 streams {statistics.median(ratios):.2f} (rounds {each})"
        print(line)
        print(f"        hub CPU per write: {statistics.median(cpu_per_write[n]):.0f} us median")
        lat = sorted(probes[n])
        print(
            f"        /readyz during the load: p50 {statistics.median(lat):.1f} ms, "
            f"p99 {lat[max(0, int(len(lat) * 0.99) - 1)]:.1f} ms, max {lat[-1]:.1f} ms ({len(lat)} probes)"
        )
        if n:
            feed = sum(r["feed"] for r in received[n])
            refresh = sum(r["refresh"] for r in received[n])
            print(f"        streams received {feed} feed events in all, {refresh} refresh messages")
    if base is not None and max(rates) >= 500:
        most = max(rates)
        ratios = [v / b for v, b in zip(rates[most], base, strict=True)]
        verdict = "met" if statistics.median(ratios) >= 0.8 else "NOT met"
        print(
            f"  target: with {most} streams at least 0.80 of the 0-stream rate: {verdict} "
            f"(median ratio {statistics.median(ratios):.2f})"
        )
        # The rates share two cores with the stream reader and the load generator; the hub's own
        # CPU per write says what the streams cost the hub: its inverse is the rate a hub with a
        # core to itself would keep.
        cpu = [c0 / cn for c0, cn in zip(cpu_per_write[0], cpu_per_write[most], strict=True)]
        print(
            f"  hub CPU per write, 0 streams over {most}: median {statistics.median(cpu):.2f} "
            f"(rounds {', '.join(f'{c:.2f}' for c in cpu)})"
        )
    print(f"  load average at the end: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")


async def main_async(args: argparse.Namespace) -> None:
    settings = [int(n) for n in args.streams.split(",")]
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        hub = start_hub(Path(tmp) / "data", port)
        holder: Holder | None = None
        try:
            writer, readers = await setup(port, max(settings))
            holder = Holder(port, readers)
            rates: dict[int, list[float]] = {n: [] for n in settings}
            probes: dict[int, list[float]] = {n: [] for n in settings}
            cpu_per_write: dict[int, list[float]] = {n: [] for n in settings}
            received: dict[int, list[dict[str, int]]] = {n: [] for n in settings}
            for _ in range(args.rounds):
                for n in settings:
                    if n:
                        opened = holder.command(f"open {n}")
                        assert opened["open"] == n, opened
                    await asyncio.sleep(1)  # let the streams settle before the load starts
                    cpu = cpu_seconds(hub.pid)
                    rate, latencies = await append_load(port, writer, args.clients, args.seconds)
                    cpu_per_write[n].append((cpu_seconds(hub.pid) - cpu) / (rate * args.seconds) * 1e6)
                    rates[n].append(rate)
                    probes[n].extend(latencies)
                    await asyncio.sleep(1)  # the streams' last chunks arrive
                    received[n].append(holder.command("close"))
            report(args, rates, probes, received, cpu_per_write)
        finally:
            if holder is not None:
                holder.stop()
            hub.terminate()
            hub.wait(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--streams", default="0,100,500", help="stream counts to alternate, comma-separated")
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=4.0, help="seconds of load per setting per round")
    parser.add_argument("--rounds", type=int, default=3)
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
