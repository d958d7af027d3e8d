"""`hub-cli kb export` and `kb import` of the knowledge base bench's bundle, end to end.

Run from the checkout: `.venv/bin/python -m tools.bench.kb_sync` or `.venv/bin/python
tools/bench/kb_sync.py` (options: --help).

1. One project holds `--pages` pages (default 10,000): `tools/bench/kb.py`'s bundle, written through
   the service in-process. That load is the run's baseline (pages a second through `KbService.write`,
   no command line, no HTTP).
2. On the local data directory (no HUB_URL): `hub-cli kb export` of the project into an empty
   folder; `hub-cli kb import` of a copy of that folder without its manifest into a new project
   (every page a create); the same import again (nothing to change: every page read and compared).
3. Over REST (a `hub-cli serve` process on the same data directory, HUB_URL set): the same three.

Each figure is the wall time of the whole `hub-cli` process, with pages a second and the ratio of
that rate to the baseline's, and the CPU seconds it took: the `hub-cli` process's own, and over REST
also the serving hub's (read from /proc; on a loaded machine the wall time measures the machine,
the CPU time what the command costs). Target (issue 13): export and import each under 60 s.
Quick run: `--pages 200`.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if not __package__:  # run as `python tools/bench/<name>.py`: tools/bench/__init__.py says why
    del sys.path[0]
    if importlib.util.find_spec("tools") is None:
        sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import anyio
import httpx

from hubcore.config import HubSettings
from hubcore.hub import Hub
from tools.bench.kb import Bundle, load

TOKEN = "hub_bench-kb-sync-admin-token-0123456789abcdef"
HUB_CLI = str(Path(sys.executable).with_name("hub-cli"))
TARGET_S = 60.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


Took = tuple[float, float, float | None]
"""Wall seconds, the `hub-cli` process's CPU seconds, the serving hub's CPU seconds (None: local)."""


def children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def process_cpu(pid: int | None) -> float | None:
    """A running process's CPU seconds (Linux /proc), or None."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cli(env: dict[str, str], *args: str, server: int | None = None) -> Took:
    """Run one `hub-cli` command to its end; its wall and CPU time. A failure stops the bench."""
    started, cpu, served = time.perf_counter(), children_cpu(), process_cpu(server)
    done = subprocess.run([HUB_CLI, *args], env=env, capture_output=True, check=False)
    took = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"hub-cli {' '.join(args)} exited {done.returncode}: {done.stderr.decode()[-2000:]}")
    after = process_cpu(server)
    return took, children_cpu() - cpu, None if served is None or after is None else after - served


def without_manifest(folder: Path, target: Path) -> Path:
    shutil.copytree(folder, target, symlinks=True)
    (target / ".hub-kb.json").unlink()
    return target


def round_of(env: dict[str, str], work: Path, tag: str, server: int | None = None) -> list[tuple[str, Took]]:
    """Export, import as new, import again, in the place `env` points to."""
    exported = work / f"{tag}-export"
    took = [("export", cli(env, "kb", "export", "--dir", str(exported), "--project", "big", server=server))]
    fresh = without_manifest(exported, work / f"{tag}-import")
    cli(env, "project", "create", "--id", f"copy-{tag}")
    for what in ("import (all new)", "import again (no change)"):
        took.append((what, cli(env, "kb", "import", "--dir", str(fresh), "--project", f"copy-{tag}", server=server)))
    return took


def serve(env: dict[str, str], port: int) -> subprocess.Popen[bytes]:
    server = subprocess.Popen(
        [HUB_CLI, "serve"],
        env={**env, "HUB_BIND": f"127.0.0.1:{port}"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    for _ in range(300):
        try:
            if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=1).status_code == 200:
                return server
        except httpx.HTTPError:
            pass
        time.sleep(0.1)  # a bench waiting for its server, not a test
    server.terminate()
    raise SystemExit("the hub did not get ready")


def report(pages: int, baseline: float, rows: list[tuple[str, str, Took]]) -> None:
    base_rate = pages / baseline
    print(
        f"{pages:,} pages; baseline: the service's own writes, {baseline:.1f} s ({base_rate:,.0f} pages/s), "
        f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores"
    )
    for place, what, (took, cpu, served) in rows:
        rate = pages / took
        verdict = "met" if took < TARGET_S else "NOT met"
        hub = "" if served is None else f" + hub {served:5.1f} s"
        print(
            f"  {place:6s} {what:25s} {took:6.1f} s  {rate:7,.0f} pages/s  ratio to baseline {rate / base_rate:5.2f}"
            f"  CPU hub-cli {cpu:5.1f} s{hub}  (under {TARGET_S:.0f} s: {verdict})"
        )


async def seed(settings: HubSettings, pages: int) -> float:
    async with Hub.open(settings) as hub:
        took, _ = await load(hub, "big", Bundle(pages))
    return took


def main(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        work = Path(tmp)
        data = work / "data"
        settings = HubSettings(data_dir=str(data), admin_token=TOKEN, min_free_bytes=0)
        baseline = anyio.run(seed, settings, args.pages)
        env = {k: v for k, v in os.environ.items() if not k.startswith("HUB_")}
        env.update(
            {
                "HUB_CONFIG": str(work / "config.toml"),
                "HUB_DATA_DIR": str(data),
                "HUB_ADMIN_TOKEN": TOKEN,
                "HUB_MIN_FREE_BYTES": "0",
                "HUB_LOG_LEVEL": "warning",
            }
        )
        rows = [("local", what, took) for what, took in round_of(env, work, "local")]
        port = free_port()
        server = serve(env, port)
        try:
            remote = {**env, "HUB_URL": f"http://127.0.0.1:{port}", "HUB_TOKEN": TOKEN}
            rows += [("REST", what, took) for what, took in round_of(remote, work, "rest", server.pid)]
        finally:
            server.terminate()
            server.wait(30)
        report(args.pages, baseline, rows)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=10_000)
    parser.add_argument("--dir", default=None, help="where the temporary data directory and folders go")
    return parser.parse_args(argv)


if __name__ == "__main__":
    main(parse_args(sys.argv[1:]))
