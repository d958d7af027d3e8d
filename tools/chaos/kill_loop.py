"""SIGKILL loop: acknowledged writes survive `kill -9`, and every SQLite file stays intact.

    .venv/bin/python -m tools.chaos.kill_loop --runs 30 --seconds 3

Starts a real `hub-cli serve` on a free loopback port over one data directory and, each run, drives
mixed writes concurrently for a random moment: feed events (MCP `signal_append` over 2026-07-28
requests and REST ideas), session starts (MCP `session_start` on a `Hub-Connection`) and brain
writes (MCP `brain_put` into the connection's active session). It records every write the hub
acknowledged (its id and content), SIGKILLs the process, runs `PRAGMA integrity_check` on every
SQLite file the kill left (hub.db, brains/*.db, kb/*.db), restarts the hub, measures the time to
ready (`/readyz` 200; the writers then wait for the MCP endpoint, which loads after ready), and
reads every acknowledged write back through the hub: events by id from the project's feed, sessions
by id, brain entries by path with their exact content. After the last run it reads everything back
once more, stops the hub with SIGTERM and checks the files again.

Prints a summary (runs, acknowledged writes, lost, integrity failures, time to ready) and exits
non-zero on any loss, integrity failure, hub that exits before it is killed, or hub that does not
become ready. All traffic goes to
127.0.0.1; every loop is bounded in count and time.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import secrets
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import orjson

PROTOCOL = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": PROTOCOL,
    "io.modelcontextprotocol/clientInfo": {"name": "kill-loop", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
PROJECT, AGENT = "chaos", "chaos-bot"
READY_TIMEOUT = 60.0  # seconds a (re)started hub gets to answer /readyz 200
CALL_TIMEOUT = 30.0
VERIFY_CONCURRENCY = 8


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Ledger:
    """What the hub acknowledged, and what has been read back since."""

    events: dict[str, str] = field(default_factory=dict)  # event id -> summary
    sessions: set[str] = field(default_factory=set)
    entries: dict[tuple[str, str], str] = field(default_factory=dict)  # (session id, path) -> content
    unchecked_sessions: set[str] = field(default_factory=set)
    unchecked_entries: dict[tuple[str, str], str] = field(default_factory=dict)
    refused: int = 0  # answered but not acknowledged (an error result): not counted, reported
    lost: list[str] = field(default_factory=list)
    integrity_failures: list[str] = field(default_factory=list)
    crashes: list[str] = field(default_factory=list)  # the hub exited before the kill
    ready_ms: list[float] = field(default_factory=list)
    first_start_ms: float = 0.0  # the fresh directory's start, for comparison

    @property
    def acknowledged(self) -> int:
        return len(self.events) + len(self.sessions) + len(self.entries)

    def ack_session(self, session_id: str) -> None:
        self.sessions.add(session_id)
        self.unchecked_sessions.add(session_id)

    def ack_entry(self, session_id: str, path: str, content: str) -> None:
        self.entries[(session_id, path)] = content
        self.unchecked_entries[(session_id, path)] = content


class Hub:
    """One `hub-cli serve` process over the shared data directory; a new port each start."""

    def __init__(self, work: Path, admin_token: str) -> None:
        self.work, self.admin_token = work, admin_token
        self.proc: subprocess.Popen[bytes] | None = None
        self.url = ""

    def start(self) -> float:
        """Start the hub; the milliseconds from spawn to `/readyz` 200."""
        port = free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith("HUB_")}
        env.update(
            HUB_CONFIG=str(self.work / "config.toml"),
            HUB_DATA_DIR=str(self.work / "data"),
            HUB_BIND=f"127.0.0.1:{port}",
            HUB_ADMIN_TOKEN=self.admin_token,
            HUB_MIN_FREE_BYTES="0",
            HUB_LOG_LEVEL="warning",
            HUB_INBOX_OPEN_PER_PROJECT="0",
            HUB_INBOX_OPEN_PER_AGENT="0",
        )
        hub_cli = Path(sys.executable).with_name("hub-cli")
        with open(self.work / "hub.log", "ab") as log:
            started = time.monotonic()
            self.proc = subprocess.Popen([str(hub_cli), "serve"], env=env, stdout=subprocess.DEVNULL, stderr=log)
        self.url = f"http://127.0.0.1:{port}"
        while time.monotonic() - started < READY_TIMEOUT:
            try:
                if httpx.get(f"{self.url}/readyz", timeout=2).status_code == 200:
                    ready_ms = (time.monotonic() - started) * 1000
                    self.wait_mcp()
                    return ready_ms
            except httpx.HTTPError:
                pass
            if self.proc.poll() is not None:
                break
            time.sleep(0.01)
        self.kill()
        raise HubDidNotStart(f"the hub did not become ready; see {self.work / 'hub.log'}")

    def wait_mcp(self) -> None:
        """One MCP call, answered once the endpoint has loaded (it loads just after ready): the
        writers' time starts with every surface serving, so their MCP writes are not all spent waiting."""
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "whoami", "arguments": {}, "_meta": META},
        }
        headers = {
            "Authorization": f"Bearer {self.admin_token}",
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
            "MCP-Protocol-Version": PROTOCOL,
            "Mcp-Method": "tools/call",
            "Mcp-Name": "whoami",
        }
        httpx.post(
            f"{self.url}/mcp", content=orjson.dumps(body), headers=headers, timeout=READY_TIMEOUT
        ).raise_for_status()

    def kill(self) -> bool:
        """SIGKILL the hub; False when it had already exited on its own."""
        if self.proc is None:
            return False
        alive = self.proc.poll() is None
        if alive:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(30)
        return alive

    def stop(self) -> int:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(60)


class HubDidNotStart(RuntimeError):
    pass


class Stopped(Exception):
    """The hub went away mid-call (the kill): the call is not acknowledged."""


def tool_result(response: httpx.Response) -> dict[str, Any] | None:
    """A tools/call reply's structured content when it succeeded, else None (refused)."""
    text = response.text
    if text.lstrip().startswith(("event:", ":", "data:")):  # a streamed reply: its last data line
        text = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")][-1]
    reply = orjson.loads(text)
    result = reply.get("result")
    if response.status_code != 200 or not isinstance(result, dict) or result.get("isError"):
        return None
    content = result.get("structuredContent")
    return content if isinstance(content, dict) else None


class Driver:
    """The clients of one run: they write until told to stop or until the hub is gone."""

    def __init__(self, hub_url: str, agent_token: str, admin_token: str, ledger: Ledger, run: int) -> None:
        self.http = httpx.AsyncClient(base_url=hub_url, timeout=CALL_TIMEOUT, limits=httpx.Limits(max_connections=64))
        self.agent_token, self.admin_token = agent_token, admin_token
        self.ledger, self.run = ledger, run
        self.stop = asyncio.Event()

    async def call(self, name: str, arguments: dict[str, Any], connection: str | None = None) -> dict[str, Any] | None:
        headers = {
            "Authorization": f"Bearer {self.agent_token}",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": PROTOCOL,
            "Mcp-Method": "tools/call",
            "Mcp-Name": name,
        }
        if connection:
            headers["Hub-Connection"] = connection
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments, "_meta": META},
        }
        try:
            response = await self.http.post(
                "/mcp", content=orjson.dumps(body), headers={**headers, "Content-Type": "application/json"}
            )
        except httpx.TransportError as exc:
            raise Stopped from exc
        result = tool_result(response)
        self.ledger.refused += result is None
        return result

    async def signals(self, worker: int) -> None:
        for n in range(1_000_000):
            summary = f"run {self.run} signal {worker}.{n} {secrets.token_hex(4)}"
            result = await self.call("signal_append", {"project_id": PROJECT, "summary": summary})
            if result is not None:
                self.ledger.events[str(result["event_id"])] = summary
            if self.stop.is_set():
                return

    async def ideas(self, worker: int) -> None:
        auth = {"Authorization": f"Bearer {self.admin_token}"}
        for n in range(1_000_000):
            summary = f"run {self.run} idea {worker}.{n} {secrets.token_hex(4)}"
            try:
                r = await self.http.post(f"/api/v1/projects/{PROJECT}/ideas", json={"summary": summary}, headers=auth)
            except httpx.TransportError as exc:
                raise Stopped from exc
            if r.status_code == 201:
                self.ledger.events[str(r.json()["id"])] = summary
            else:
                self.ledger.refused += 1
            if self.stop.is_set():
                return

    async def brains(self, worker: int) -> None:
        """Start a session on this worker's connection, write into it, now and then start another."""
        connection = f"kill-loop-{worker}"
        for n in range(1_000_000):
            if n % 40 == 0:
                name = f"worker-{worker}" if n == 0 else f"worker-{worker}-run-{self.run}-{n}"
                started = await self.call("session_start", {"project_id": PROJECT, "name": name}, connection)
                if started is None:
                    return
                session = str(started["session_id"])
                self.ledger.ack_session(session)
            path = f"/kv/run-{self.run}/w{worker}-{n}"
            content = secrets.token_urlsafe(random.choice((16, 256, 4096, 32768)))
            written = await self.call("brain_put", {"path": path, "content": content, "store": "session"}, connection)
            if written is not None:
                self.ledger.ack_entry(str(written.get("session_id") or session), str(written["path"]), content)
            if self.stop.is_set():
                return

    async def drive(self, kill_after: float, kill: Callable[[], bool], workers: int) -> None:
        """Run the writers; SIGKILL the hub after `kill_after` seconds while they are mid-flight."""
        jobs: list[Callable[[int], Awaitable[None]]] = [self.signals, self.brains, self.ideas, self.brains]

        async def guarded(job: Callable[[int], Awaitable[None]], worker: int) -> None:
            try:
                await job(worker)
            except Stopped:
                return

        tasks = [asyncio.create_task(guarded(jobs[w % len(jobs)], w)) for w in range(workers)]
        try:
            await asyncio.sleep(kill_after)
            if not kill():  # mid-flight: the calls in progress get no answer and are not acknowledged
                self.ledger.crashes.append(f"run {self.run}: the hub exited before it was killed")
            self.stop.set()
            await asyncio.wait_for(asyncio.gather(*tasks), CALL_TIMEOUT * 2)
        finally:
            for task in tasks:
                task.cancel()
            await self.http.aclose()


def integrity(data_dir: Path, when: str, ledger: Ledger) -> None:
    """`PRAGMA integrity_check` on every SQLite file, read-only so the check changes nothing."""
    for path in sorted([*data_dir.glob("*.db"), *data_dir.glob("brains/*.db"), *data_dir.glob("kb/*.db")]):
        try:
            conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
            try:
                rows = conn.execute("PRAGMA integrity_check").fetchall()
            finally:
                conn.close()
        except sqlite3.Error as exc:
            rows = [(f"cannot open: {exc}",)]
        if rows != [("ok",)]:
            ledger.integrity_failures.append(f"{when}: {path.relative_to(data_dir)}: {rows[:5]}")


async def verify(hub_url: str, admin_token: str, ledger: Ledger, *, everything: bool) -> None:
    """Read acknowledged writes back through the hub; a missing or changed one is a loss."""
    auth = {"Authorization": f"Bearer {admin_token}"}
    async with httpx.AsyncClient(base_url=hub_url, headers=auth, timeout=CALL_TIMEOUT) as http:
        stored = await feed_events(http)
        for event_id, summary in ledger.events.items():
            if stored.get(event_id) != summary:
                ledger.lost.append(f"event {event_id} ({summary!r}): stored {stored.get(event_id)!r}")
        sessions = set(ledger.sessions) if everything else set(ledger.unchecked_sessions)
        entries = dict(ledger.entries) if everything else dict(ledger.unchecked_entries)
        limiter = asyncio.Semaphore(VERIFY_CONCURRENCY)

        async def session_present(session_id: str) -> None:
            async with limiter:
                r = await http.get(f"/api/v1/sessions/{session_id}")
            if r.status_code != 200:
                ledger.lost.append(f"session {session_id}: HTTP {r.status_code}")

        async def entry_present(key: tuple[str, str], content: str) -> None:
            async with limiter:
                r = await http.get(f"/api/v1/sessions/{key[0]}/brain/entry", params={"path": key[1]})
            if r.status_code != 200 or r.json().get("content") != content:
                ledger.lost.append(f"brain entry {key[0]} {key[1]}: HTTP {r.status_code}")

        await asyncio.gather(
            *(session_present(s) for s in sessions), *(entry_present(k, c) for k, c in entries.items())
        )
    ledger.unchecked_sessions.clear()
    ledger.unchecked_entries.clear()


async def feed_events(http: httpx.AsyncClient) -> dict[str, str]:
    """Every event of the project (id -> summary), paging back from the newest."""
    events: dict[str, str] = {}
    before: str | None = None
    for _ in range(100_000):
        params: dict[str, Any] = {"limit": 500, **({"before": before} if before else {})}
        r = await http.get(f"/api/v1/projects/{PROJECT}/feed", params=params)
        r.raise_for_status()
        page = r.json()
        events.update({e["id"]: e["summary"] for e in page["events"]})
        before = page.get("next_before")
        if not page["events"] or not before:
            break
    return events


def setup(hub: Hub) -> str:
    """The agent, its token and the project (acknowledged before the first kill); the agent token."""
    auth = {"Authorization": f"Bearer {hub.admin_token}"}
    with httpx.Client(base_url=hub.url, headers=auth, timeout=CALL_TIMEOUT) as http:
        http.post("/api/v1/agents", json={"id": AGENT}).raise_for_status()
        http.post("/api/v1/projects", json={"id": PROJECT}).raise_for_status()
        r = http.post(f"/api/v1/agents/{AGENT}/token")
        r.raise_for_status()
        return str(r.json()["token"])


def loop(args: argparse.Namespace, work: Path) -> Ledger:
    ledger = Ledger()
    rng = random.Random(args.seed)
    hub = Hub(work, "hub_" + secrets.token_urlsafe(32))
    ledger.first_start_ms = hub.start()
    try:
        agent_token = setup(hub)
        for run in range(1, args.runs + 1):
            kill_after = rng.uniform(args.seconds * 0.2, args.seconds)
            driver = Driver(hub.url, agent_token, hub.admin_token, ledger, run)
            asyncio.run(driver.drive(kill_after, hub.kill, args.workers))
            integrity(work / "data", f"after kill {run}", ledger)
            ledger.ready_ms.append(hub.start())
            asyncio.run(verify(hub.url, hub.admin_token, ledger, everything=run == args.runs))
            if args.verbose:
                print(
                    f"run {run}: killed after {kill_after:.2f} s, ready in {ledger.ready_ms[-1]:.0f} ms, "
                    f"{ledger.acknowledged} acknowledged, {len(ledger.lost)} lost",
                    flush=True,
                )
        if hub.stop() != 0:
            ledger.integrity_failures.append("the hub did not stop cleanly on SIGTERM")
        integrity(work / "data", "after the clean stop", ledger)
    finally:
        hub.kill()
    return ledger


def report(args: argparse.Namespace, ledger: Ledger) -> int:
    for line in (ledger.crashes + ledger.lost + ledger.integrity_failures)[:20]:
        print(f"  ! {line}")
    ready = ledger.ready_ms or [0.0]
    print(
        f"runs: {args.runs}  acknowledged writes: {ledger.acknowledged} (events {len(ledger.events)}, "
        f"session starts {len(ledger.sessions)}, brain entries {len(ledger.entries)})  "
        f"refused: {ledger.refused}"
    )
    print(
        f"lost: {len(ledger.lost)}  integrity failures: {len(ledger.integrity_failures)}  "
        f"crashes: {len(ledger.crashes)}"
    )
    print(
        f"time to ready after SIGKILL: median {statistics.median(ready):.0f} ms, max {max(ready):.0f} ms "
        f"(first start on an empty directory: {ledger.first_start_ms:.0f} ms)"
    )
    return 1 if ledger.lost or ledger.integrity_failures or ledger.crashes else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=30, help="kill and restart this many times (1-1000)")
    parser.add_argument(
        "--seconds",
        type=float,
        default=3.0,
        help="each run writes for a random 20%%-100%% of this many seconds (0.1-60)",
    )
    parser.add_argument("--workers", type=int, default=8, help="concurrent writers (1-64)")
    parser.add_argument("--seed", type=int, default=None, help="seed the kill moments")
    parser.add_argument("--keep", action="store_true", help="keep the data directory")
    parser.add_argument("--verbose", action="store_true", help="a line per run")
    args = parser.parse_args(argv)
    if not (1 <= args.runs <= 1000 and 0.1 <= args.seconds <= 60 and 1 <= args.workers <= 64):
        parser.error("--runs 1-1000, --seconds 0.1-60, --workers 1-64")
    work = Path(tempfile.mkdtemp(prefix="hub-kill-loop-"))
    try:
        ledger = loop(args, work)
    except HubDidNotStart as exc:
        print(f"FAIL: {exc}")
        return 2
    code = report(args, ledger)
    if code == 0 and not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print(f"data directory kept: {work}")
    return code


if __name__ == "__main__":
    sys.exit(main())
