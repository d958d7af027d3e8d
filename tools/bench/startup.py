"""Start-to-ready and RSS at ready of `hub-cli serve`, on an empty data directory and on one holding
10,000 sessions with their brain files, against the floor `python -c "import quart, hypercorn"`.

Run from the checkout: `.venv/bin/python tools/bench/startup.py` (options: --help; `--compare
/path/to/other/checkout` also starts that checkout's hub in each round, a before-and-after in one
run). Each round starts the floor, then the hub on the empty directory, then the hub on the loaded
one (interleaved, so a noisy neighbour weighs on all alike), `--rounds` times; medians are reported.

Start-to-ready is the wall time from spawning the process to the first `200` from `/readyz` (polled
every 2 ms over a raw socket, so the poll costs the hub next to nothing); RSS is the process's
`VmRSS` read from /proc at that moment. Then one MCP call (`whoami`, 2026-07-28) is sent at once:
the MCP endpoint loads in the background after ready (hubhttp/asgi.py), so "to MCP" is the wall
time from spawn to that call's answer, with the RSS and CPU then (the endpoint loaded: what the hub
holds from then on). The hub is then stopped with SIGTERM. The floor is the wall time and peak RSS
(`VmHWM`) of a Python that only imports Quart and Hypercorn: what any hub built on them pays before
it does anything of its own. Targets (issue 26): under 1 s empty, under 1.5 s with 10,000 sessions,
RSS under 90 MB.

Bytecode: an installed hub runs from compiled bytecode (pip writes it at install). Where
PYTHONDONTWRITEBYTECODE is set, each start would compile the hub's ~300 modules from source instead
(about 0.1 s of CPU), so the children write and read it under the run's temporary directory
(PYTHONPYCACHEPREFIX), and a first round, not counted, warms it.

The loaded directory is built once per run: 10,000 sessions started through the services (one
agent, one project), one real brain file written through them, copied under every other session's
id (the start reads no brain; it is the files' count that could weigh, not their contents).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

if not __package__:  # run as `python tools/bench/<name>.py`: tools/bench/__init__.py says why
    del sys.path[0]
    if importlib.util.find_spec("tools") is None:
        sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import anyio

from hubcore.caller import Caller
from hubcore.config import HubSettings
from hubcore.hub import Hub
from hubcore.services.agents import AgentCreate
from hubcore.services.brains import BrainPut
from hubcore.services.projects import ProjectCreate
from hubcore.services.requests import parse
from hubcore.services.sessions import SessionStart

ADMIN = Caller.admin()
# The floor's peak RSS is VmHWM, not getrusage's ru_maxrss: on Linux a child's ru_maxrss starts from
# its parent's peak at the fork (this bench's, which holds a loaded hub's code), not from its own.
FLOOR = (
    "import quart, hypercorn, os, sys; t = os.times(); "
    "hwm = next(l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM:')); "
    "sys.stdout.write(f'{hwm} {t.user + t.system}')"
)
TOKEN = "bench-admin-token-0123456789abcdef"
MCP_CALL = (
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{},'
    b'"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
    b'"io.modelcontextprotocol/clientCapabilities":{}}}}'
)
TICKS = os.sysconf("SC_CLK_TCK")
READY_TIMEOUT = 60.0


async def load(data_dir: Path, sessions: int) -> None:
    """`sessions` session rows through the services; one brain written, copied for the rest."""
    settings = replace(HubSettings(), data_dir=str(data_dir), min_free_bytes=0)
    ids: list[str] = []
    async with Hub.open(settings) as hub:
        await hub.agents.create(ADMIN, parse(AgentCreate, {"id": "coder", "display_name": "Coder"}))
        await hub.projects.create(ADMIN, parse(ProjectCreate, {"id": "webshop"}))
        owner = Caller.agent("coder")
        for i in range(sessions):
            made = await hub.sessions.start(owner, parse(SessionStart, {"project_id": "webshop", "name": f"s{i}"}))
            ids.append(str(made["session_id"]))
        for n in range(5):
            await hub.brains.write_entry(
                owner,
                parse(BrainPut, {"path": f"/kv/n{n}", "content": "x" * 2000, "store": "session", "session_id": ids[0]}),
            )
    for sid in ids[1:]:
        shutil.copyfile(data_dir / "brains" / f"{ids[0]}.db", data_dir / "brains" / f"{sid}.db")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def ready(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
            s.sendall(b"GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            return s.recv(64).startswith(b"HTTP/1.1 200")
    except OSError:
        return False


def mcp_answers(port: int) -> bool:
    """One `whoami` over /mcp (2026-07-28, answered as one JSON body): True on its 200."""
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nAuthorization: Bearer {TOKEN}\r\n"
        "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
        "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: whoami\r\n"
        f"Content-Length: {len(MCP_CALL)}\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", port), timeout=READY_TIMEOUT) as s:
        s.sendall(head.encode() + MCP_CALL)
        answer = b""
        while chunk := s.recv(65536):
            answer += chunk
    return answer.startswith(b"HTTP/1.1 200") and b'"actor":"human"' in answer


def cpu_secs(pid: int) -> float:
    """User and system CPU time the process has used (less disturbed by a busy machine than the wall)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def hub_command() -> list[str]:
    """`python -m hubcli serve`: the same entry point as the installed `hub-cli` script
    (`hubcli.entry.run`), run from the code on PYTHONPATH (a worktree's, not the installed one's)."""
    return [sys.executable, "-m", "hubcli", "serve"]


Sample = tuple[float, float, float]


def start_hub(data_dir: Path, work: Path, code: str | None = None) -> tuple[Sample, Sample]:
    """Seconds from spawn to the first 200 from /readyz, RSS (MB) and CPU seconds then; the same at
    the answer of an MCP call sent right after. `code`: a checkout whose code runs instead
    (PYTHONPATH), for a before-and-after in the same run."""
    port = free_port()
    config = work / "config.toml"
    config.write_text(f'[hub]\nadmin_token = "{TOKEN}"\n')
    env = {
        **os.environ,
        "HUB_CONFIG": str(config),
        "HUB_DATA_DIR": str(data_dir),
        "HUB_BIND": f"127.0.0.1:{port}",
        "HUB_LOG_LEVEL": "warning",
    }
    if code is not None:
        env["PYTHONPATH"] = code
    started = time.perf_counter()
    # Run from the work directory: `-m` puts the current directory first on the path, which would
    # otherwise pick the checkout the bench was started from over `code`.
    proc = subprocess.Popen(hub_command(), env=env, cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        while not ready(port):
            if proc.poll() is not None:
                raise RuntimeError(f"the hub exited {proc.returncode}: {proc.stderr.read().decode()[-2000:]}")
            if time.perf_counter() - started > READY_TIMEOUT:
                raise RuntimeError("the hub was not ready in time")
            time.sleep(0.002)
        at_ready = (time.perf_counter() - started, rss_mb(proc.pid), cpu_secs(proc.pid))
        if not mcp_answers(port):
            raise RuntimeError("the MCP call was not answered")
        return at_ready, (time.perf_counter() - started, rss_mb(proc.pid), cpu_secs(proc.pid))
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stderr.close()


def floor() -> Sample:
    started = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", FLOOR], capture_output=True, text=True, check=True)
    rss, cpu = out.stdout.split()
    return time.perf_counter() - started, int(rss) / 1024, float(cpu)


def start_both(runs: dict[str, list[Sample]], name: str, data_dir: Path, work: Path, code: str | None = None) -> None:
    ready_at, mcp_at = start_hub(data_dir, work, code)
    runs[name].append(ready_at)
    runs[f"{name}, to MCP"].append(mcp_at)


def loadavg() -> str:
    return Path("/proc/loadavg").read_text().split(" ", 1)[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--dir", default=None, help="where the temporary data directories go")
    parser.add_argument(
        "--compare",
        default=None,
        metavar="CHECKOUT",
        help="also start another checkout's hub (e.g. the main branch) in each round",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        work = Path(tmp)
        loaded = work / "loaded"
        built = time.perf_counter()
        anyio.run(load, loaded, args.sessions)
        print(f"loaded {args.sessions} sessions in {time.perf_counter() - built:.0f} s", file=sys.stderr)
        names = ("floor", "empty", "loaded", "other empty", "other loaded")
        runs: dict[str, list[Sample]] = {n: [] for n in names} | {f"{n}, to MCP": [] for n in names}
        if os.environ.pop("PYTHONDONTWRITEBYTECODE", None):
            os.environ["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
        loads = [loadavg()]
        for round_no in range(args.rounds + 1):
            if round_no == 1:  # round 0 warmed the bytecode and the page cache: not counted
                runs = {n: [] for n in runs}
            runs["floor"].append(floor())
            empty = work / "empty"
            shutil.rmtree(empty, ignore_errors=True)
            start_both(runs, "empty", empty, work)
            start_both(runs, "loaded", loaded, work)
            if args.compare:
                shutil.rmtree(empty, ignore_errors=True)
                start_both(runs, "other empty", empty, work, args.compare)
                start_both(runs, "other loaded", loaded, work, args.compare)
        loads.append(loadavg())
    base = [statistics.median(r[i] for r in runs["floor"]) for i in range(3)]
    print(f"start-to-ready, RSS and CPU at ready, median of {args.rounds} (load {loads[0]} to {loads[-1]})")
    rows = [
        ("floor", "floor: import quart, hypercorn"),
        ("empty", "hub, empty data directory"),
        ("loaded", f"hub, {args.sessions:,} sessions"),
    ]
    if args.compare:
        rows += [("other empty", f"{args.compare}, empty"), ("other loaded", f"{args.compare}, {args.sessions:,}")]
    rows = [
        row
        for name, label in rows
        for row in ((name, label), (f"{name}, to MCP", "  answered an MCP call"))
        if row[0] != "floor, to MCP"
    ]
    for name, label in rows:
        t, m, c = (statistics.median(r[i] for r in runs[name]) for i in range(3))
        print(
            f"  {label:<32} {t * 1000:6.0f} ms ({t / base[0]:3.1f}x floor)  RSS {m:5.1f} MB "
            f"(+{m - base[1]:4.1f})  CPU {c * 1000:5.0f} ms ({c / base[2]:3.1f}x)  "
            f"[{', '.join(f'{r[0] * 1000:.0f}' for r in runs[name])} ms]"
        )


if __name__ == "__main__":
    main()
