"""Soak: does the hub's memory level off under a steady mixed load, and fall back when clients leave?

    .venv/bin/python -m tools.chaos.soak [--minutes 30] [--rate 40] [--streams 50] [--waits 20]

Starts a real `hub-cli serve` on a free loopback port over its own data directory and drives it,
bounded in rate (`--rate` operations a second over all writers, so the soak does not eat a shared
machine), for `--minutes`:

- mixed writes from several agent tokens: `signal_append`, `question_post` with the human's answers
  over REST, `brain_put`/`brain_get` in sessions (2026-07-28 requests on a `Hub-Connection`, and now
  and then a 2025-11-25 MCP session opened with `initialize`, used, and either ended or abandoned),
  `artifact_publish`/`artifact_update` and `comment_post`, knowledge base page writes over REST,
  and search queries (REST and MCP);
- `--streams` open `GET /api/v1/stream` responses spread over several agent tokens and the admin
  token (each reopened when the hub ends it);
- `--waits` parked waits, half `inbox_wait` and half `notify_wait` (on a subscription), each renewed
  as soon as it returns.

Every `--sample` seconds it reads the hub process's resident memory (VmRSS from /proc) and its open
file descriptors. At the end it closes every client, waits `--settle` seconds and samples again.
It reports the RSS at warm (after `--warm` minutes, default 5, or a third of a shorter run), the
growth per minute over the last ten minutes (a least-squares slope; the last half of a shorter
run) and the level after the clients closed, against the targets (under 1 MiB a minute; within
10% of warm), with the rate reached and the load average. `--samples FILE` writes every sample as
JSON lines. Exit status 0 when both targets are met, 1 when not, 2 when the hub failed.

`HUB_TRACEMALLOC=N` in the soak's environment is passed to the hub (hubcli/memtrace.py): the hub
then traces N frames per allocation and writes what grew to its log on each SIGUSR2; `--trace`
sends one at warm and one at the end (the log is kept).
All traffic goes to 127.0.0.1; every loop is bounded in count and time.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import random
import secrets
import shutil
import signal
import socket
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
LEGACY_PROTOCOL = "2025-11-25"
META = {
    "io.modelcontextprotocol/protocolVersion": PROTOCOL,
    "io.modelcontextprotocol/clientInfo": {"name": "soak", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
PROJECT = "soak"
AGENTS = 10  # writer and stream tokens; streams spread over them (the per-token cap is 8)
READY_TIMEOUT = 60.0
CALL_TIMEOUT = 90.0  # a parked wait is up to 60 s
WAIT_SECONDS = 20  # each parked wait's wait_seconds (renewed on return)
WORDS = (
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
    "kilo",
    "lima",
    "mike",
    "november",
    "oscar",
    "papa",
    "quebec",
    "romeo",
    "sierra",
    "tango",
)
MIB = 1024 * 1024
LEGACY_CLIENTS = 4  # 2025-11-25 sessions held at once
LEGACY_CALLS = 20  # calls in one before it ends
LEGACY_ABANDON = 10  # one ending in this many is an abandoned session (the hub holds it 30 minutes)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def words(n: int) -> str:
    return " ".join(random.choice(WORDS) for _ in range(n))


@dataclass
class Sample:
    at: float  # seconds since the load started
    rss: int  # bytes: VmRSS, everything resident
    fds: int
    phase: str  # load, closed
    anon: int = 0  # bytes: RssAnon, the process's own memory (the heap, thread stacks)
    file: int = 0  # bytes: RssFile + RssShmem, pages of mapped files (the store readers' maps, WAL indexes)


@dataclass
class Tally:
    ops: dict[str, int] = field(default_factory=dict)
    refused: dict[str, int] = field(default_factory=dict)
    stream_opens: int = 0
    stream_bytes: int = 0
    waits_returned: int = 0
    errors: list[str] = field(default_factory=list)

    def count(self, op: str, ok: bool) -> None:
        target = self.ops if ok else self.refused
        target[op] = target.get(op, 0) + 1

    @property
    def total(self) -> int:
        return sum(self.ops.values()) + sum(self.refused.values())


class Hub:
    """One `hub-cli serve` process over its own data directory."""

    def __init__(self, work: Path, admin_token: str) -> None:
        self.work, self.admin_token = work, admin_token
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("HUB_") or k == "HUB_TRACEMALLOC"}
        env.update(
            HUB_CONFIG=str(self.work / "config.toml"),
            HUB_DATA_DIR=str(self.work / "data"),
            HUB_BIND=f"127.0.0.1:{self.port}",
            HUB_ADMIN_TOKEN=self.admin_token,
            HUB_MIN_FREE_BYTES="0",
            HUB_LOG_LEVEL="warning",
            HUB_INBOX_OPEN_PER_PROJECT="0",
            HUB_INBOX_OPEN_PER_AGENT="0",
        )
        hub_cli = Path(sys.executable).with_name("hub-cli")
        with open(self.work / "hub.log", "ab") as log:
            self.proc = subprocess.Popen([str(hub_cli), "serve"], env=env, stdout=subprocess.DEVNULL, stderr=log)
        started = time.monotonic()
        while time.monotonic() - started < READY_TIMEOUT:
            try:
                if httpx.get(f"{self.url}/readyz", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        raise HubFailed(f"the hub did not become ready; see {self.work / 'hub.log'}")

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def sample(self, at: float, phase: str) -> Sample:
        assert self.proc is not None
        kib: dict[str, int] = {}
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            name, _, value = line.partition(":")
            if name in ("VmRSS", "RssAnon", "RssFile", "RssShmem"):
                kib[name] = int(value.split()[0]) * 1024
        return Sample(
            at,
            kib["VmRSS"],
            len(os.listdir(f"/proc/{self.proc.pid}/fd")),
            phase,
            kib.get("RssAnon", 0),
            kib.get("RssFile", 0) + kib.get("RssShmem", 0),
        )

    def dump(self) -> None:
        """Ask the hub for a tracemalloc comparison (only when it runs with HUB_TRACEMALLOC set)."""
        if self.alive():
            assert self.proc is not None
            self.proc.send_signal(signal.SIGUSR2)

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(30)


class HubFailed(RuntimeError):
    pass


def structured(response: httpx.Response) -> dict[str, Any] | None:
    """A tools/call reply's structured content when it succeeded, else None."""
    text = response.text
    if text.lstrip().startswith(("event:", ":", "data:")):
        data = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
        if not data:
            return None
        text = data[-1]
    try:
        reply = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    result = reply.get("result") if isinstance(reply, dict) else None
    if response.status_code != 200 or not isinstance(result, dict) or result.get("isError"):
        return None
    content = result.get("structuredContent")
    return content if isinstance(content, dict) else {}


class Clients:
    """Everything that talks to the hub: writers, streams, parked waits. `stop` ends them all."""

    def __init__(self, hub: Hub, tokens: list[str], args: argparse.Namespace, tally: Tally) -> None:
        self.hub, self.tokens, self.args, self.tally = hub, tokens, args, tally
        self.admin = {"Authorization": f"Bearer {hub.admin_token}"}
        self.http = httpx.AsyncClient(
            base_url=hub.url,
            timeout=CALL_TIMEOUT,
            limits=httpx.Limits(max_connections=16, max_keepalive_connections=16),
        )
        self.waits = httpx.AsyncClient(
            base_url=hub.url, timeout=CALL_TIMEOUT, limits=httpx.Limits(max_connections=args.waits + 2)
        )
        self.stop = asyncio.Event()
        self.questions: list[str] = []  # open questions, answered by the human a moment later
        self.artifacts: list[str] = []
        self.sessions: dict[int, str] = {}  # writer token index -> its connection's session name
        self.written: dict[str, list[str]] = {}  # session name -> brain paths written in it
        self.legacy: dict[int, tuple[dict[str, str], int]] = {}  # slot -> its session's headers, calls made
        # One call at a time per slot: two writers on one slot ended its session twice (a KeyError
        # on the second `del`) and sent a call on the session the other had just ended.
        self.legacy_locks = [asyncio.Lock() for _ in range(LEGACY_CLIENTS)]
        # The same for each token's connection: a writer starting a new session on it while another
        # read back a path of the old one read the new session and was refused not_found.
        self.connection_locks: dict[int, asyncio.Lock] = {}
        self.tasks: list[asyncio.Task[None]] = []

    async def call(
        self,
        token: str,
        name: str,
        arguments: dict[str, Any],
        *,
        connection: str | None = None,
        client: httpx.AsyncClient | None = None,
    ) -> dict[str, Any] | None:
        headers = {
            "Authorization": f"Bearer {token}",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": PROTOCOL,
            "Mcp-Method": "tools/call",
            "Mcp-Name": name,
            "Content-Type": "application/json",
        }
        if connection:
            headers["Hub-Connection"] = connection
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments, "_meta": META},
        }
        r = await (client or self.http).post("/mcp", content=orjson.dumps(body), headers=headers)
        result = structured(r)
        if client is None:
            self.tally.count(name, result is not None)
            if result is None:  # what the hub said, so a refusal in a long run can be told from a bug
                self.note(f"{name}: {r.status_code} {r.text[:160]}")
        return result

    # -- the writers: one operation at a time, chosen from the mix, at a bounded rate

    def token(self) -> tuple[int, str]:
        n = random.randrange(len(self.tokens))
        return n, self.tokens[n]

    async def op_signal(self) -> None:
        _, token = self.token()
        await self.call(
            token, "signal_append", {"project_id": PROJECT, "summary": f"progress {words(6)}", "body": words(40)}
        )

    async def op_question(self) -> None:
        _, token = self.token()
        result = await self.call(
            token, "question_post", {"project_id": PROJECT, "summary": f"which {words(4)}?", "body": words(30)}
        )
        if result and result.get("question_id"):
            self.questions.append(str(result["question_id"]))

    async def op_answer(self) -> None:
        if not self.questions:
            return await self.op_signal()
        question = self.questions.pop(0)
        r = await self.http.post(
            f"/api/v1/questions/{question}/answer", json={"body": f"yes, {words(5)}"}, headers=self.admin
        )
        self.tally.count("answer (REST)", r.status_code in (200, 201))

    async def op_brain(self) -> None:
        n, token = self.token()
        async with self.connection_locks.setdefault(n, asyncio.Lock()):
            await self.brain_call(n, token)

    async def brain_call(self, n: int, token: str) -> None:
        connection = f"soak-{n}"
        if n not in self.sessions or random.random() < 0.02:  # now and then a new session
            name = f"s{n}-{secrets.token_hex(3)}"
            if (
                await self.call(token, "session_start", {"project_id": PROJECT, "name": name}, connection=connection)
                is None
            ):
                return
            self.sessions[n] = name
        written = self.written.setdefault(self.sessions[n], [])
        if written and random.random() < 0.5:  # read back something this session wrote
            await self.call(token, "brain_get", {"path": random.choice(written)}, connection=connection)
            return
        path = f"/kv/{random.choice(WORDS)}/{random.randrange(50)}"
        if (
            await self.call(
                token,
                "brain_put",
                {"path": path, "store": "session", "content": words(random.choice((10, 200, 2000)))},
                connection=connection,
            )
            is not None
            and path not in written
        ):
            written.append(path)

    async def op_artifact(self) -> None:
        _, token = self.token()
        roll = random.random()
        if not self.artifacts or roll < 0.3:
            result = await self.call(
                token,
                "artifact_publish",
                {
                    "project_id": PROJECT,
                    "title": f"report {words(3)}",
                    "kind": random.choice(("html", "markdown")),
                    "content": f"<h1>{words(3)}</h1><p>{words(300)}</p>",
                },
            )
            if result and result.get("artifact_id"):
                self.artifacts.append(str(result["artifact_id"]))
                del self.artifacts[:-200]
        elif roll < 0.6:
            await self.call(
                token,
                "artifact_update",
                {"artifact_id": random.choice(self.artifacts), "force": True, "content": f"<p>{words(300)}</p>"},
            )
        else:
            await self.call(token, "comment_post", {"artifact_id": random.choice(self.artifacts), "body": words(20)})

    async def op_kb(self) -> None:
        path = f"notes/{random.choice(WORDS)}/{random.randrange(40)}.md"
        content = f"---\ntitle: {words(3)}\n---\n# {words(3)}\n\n{words(random.choice((50, 500)))}\n"
        r = await self.http.put(
            f"/api/v1/projects/{PROJECT}/kb/pages/{path}", json={"content": content}, headers=self.admin
        )
        self.tally.count("kb page write (REST)", r.status_code == 200)

    async def op_search(self) -> None:
        query = " ".join(random.sample(WORDS, random.choice((1, 2))))
        if random.random() < 0.5:
            r = await self.http.get("/api/v1/search", params={"q": query}, headers=self.admin)
            self.tally.count("search (REST)", r.status_code == 200)
        else:
            _, token = self.token()
            await self.call(token, "search", {"query": query, "project_id": PROJECT})

    async def op_legacy(self) -> None:
        """A call from a 2025-11-25 client: one of `LEGACY_CLIENTS` MCP sessions, each opened with
        `initialize` and used for `LEGACY_CALLS` calls, then ended (DELETE) or, one time in
        `LEGACY_ABANDON`, left to the hub's idle timeout, as a crashed client leaves it."""
        slot = random.randrange(LEGACY_CLIENTS)
        async with self.legacy_locks[slot]:
            held = self.legacy.get(slot)
            if held is None or held[1] >= LEGACY_CALLS:
                if held is not None:
                    if random.randrange(LEGACY_ABANDON):
                        r = await self.http.delete("/mcp", headers=held[0])
                        self.tally.count("legacy session end", r.status_code in (200, 202, 204))
                    else:
                        self.tally.count("legacy session abandoned", True)
                    del self.legacy[slot]
                headers = await self.legacy_session()
                if headers is None:
                    return
                held = self.legacy[slot] = (headers, 0)
            self.legacy[slot] = (held[0], held[1] + 1)
            body = {
                "jsonrpc": "2.0",
                "id": held[1] + 2,
                "method": "tools/call",
                "params": {"name": "signal_append", "arguments": {"project_id": PROJECT, "summary": words(5)}},
            }
            r = await self.http.post("/mcp", content=orjson.dumps(body), headers=held[0])
            self.tally.count("legacy signal_append", structured(r) is not None)

    async def legacy_session(self) -> dict[str, str] | None:
        _, token = self.token()
        base = {
            "Authorization": f"Bearer {token}",
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
            "MCP-Protocol-Version": LEGACY_PROTOCOL,
        }
        init = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": LEGACY_PROTOCOL,
                "capabilities": {},
                "clientInfo": {"name": "soak-legacy", "version": "1"},
            },
        }
        r = await self.http.post("/mcp", content=orjson.dumps(init), headers=base)
        session = r.headers.get("mcp-session-id")
        self.tally.count("legacy initialize", r.status_code == 200 and bool(session))
        if not session:
            return None
        headers = {**base, "Mcp-Session-Id": session}
        await self.http.post(
            "/mcp", content=orjson.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}), headers=headers
        )
        return headers

    def mix(self) -> list[tuple[Callable[[], Awaitable[None]], int]]:
        return [
            (self.op_signal, 25),
            (self.op_question, 8),
            (self.op_answer, 8),
            (self.op_brain, 25),
            (self.op_artifact, 10),
            (self.op_kb, 8),
            (self.op_search, 12),
            (self.op_legacy, 8),
        ]

    async def writer(self, interval: float) -> None:
        ops, weights = zip(*self.mix(), strict=True)
        next_at = time.monotonic()
        while not self.stop.is_set():
            op = random.choices(ops, weights)[0]
            try:
                await op()
            except (httpx.HTTPError, ValueError, KeyError, TypeError) as exc:  # one op fails, the soak goes on
                self.tally.count(f"{op.__name__} error", False)
                self.note(f"{op.__name__}: {type(exc).__name__}: {exc}"[:200])
            next_at = max(next_at + interval, time.monotonic() - 1.0)  # never catch up more than a second
            await self.pause(next_at - time.monotonic())

    async def pause(self, seconds: float) -> None:
        if seconds > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.stop.wait(), seconds)

    def note(self, error: str) -> None:
        if len(self.tally.errors) < 50:
            self.tally.errors.append(error)

    # -- streams and parked waits

    async def stream(self, token: str) -> None:
        """One `GET /api/v1/stream`, read and dropped; reopened when the hub ends it."""
        while not self.stop.is_set():
            writer = None
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", self.hub.port)
                writer.write(
                    f"GET /api/v1/stream HTTP/1.1\r\nHost: 127.0.0.1:{self.hub.port}\r\n"
                    f"Authorization: Bearer {token}\r\nAccept: text/event-stream\r\n\r\n".encode()
                )
                head = await reader.readuntil(b"\r\n\r\n")
                if not head.startswith(b"HTTP/1.1 200"):
                    self.note(f"stream refused: {head.splitlines()[0]!r}")
                    await self.pause(5)
                    continue
                self.tally.stream_opens += 1
                while data := await reader.read(1 << 16):
                    self.tally.stream_bytes += len(data)
            except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError) as exc:
                self.note(f"stream: {type(exc).__name__}")
                await self.pause(1)
            finally:
                if writer is not None:
                    writer.close()

    async def parked(self, token: str, tool: str) -> None:
        if tool == "notify_wait":
            await self.call(
                token, "notify_subscribe", {"kinds": ["answer", "artifact"], "project_id": PROJECT}, client=self.waits
            )
        while not self.stop.is_set():
            try:
                await self.call(token, tool, {"wait_seconds": WAIT_SECONDS}, client=self.waits)
                self.tally.waits_returned += 1
            except httpx.HTTPError as exc:
                self.note(f"{tool}: {type(exc).__name__}")
                await self.pause(1)

    def start(self) -> None:
        holders = [*self.tokens, self.hub.admin_token]
        streams = [holders[n % len(holders)] for n in range(self.args.streams)]
        self.tasks += [asyncio.create_task(self.stream(t)) for t in streams]
        self.tasks += [
            asyncio.create_task(
                self.parked(self.tokens[n % len(self.tokens)], "inbox_wait" if n % 2 == 0 else "notify_wait")
            )
            for n in range(self.args.waits)
        ]
        writers = max(1, min(8, round(self.args.rate / 5)))
        self.tasks += [asyncio.create_task(self.writer(writers / self.args.rate)) for _ in range(writers)]

    async def close(self) -> None:
        self.stop.set()
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        await self.http.aclose()
        await self.waits.aclose()


async def setup(hub: Hub) -> list[str]:
    """The project and the agents (with their tokens)."""
    admin = {"Authorization": f"Bearer {hub.admin_token}"}
    async with httpx.AsyncClient(base_url=hub.url, timeout=30, headers=admin) as http:
        (await http.post("/api/v1/projects", json={"id": PROJECT})).raise_for_status()
        tokens = []
        for n in range(AGENTS):
            (await http.post("/api/v1/agents", json={"id": f"soak-{n}"})).raise_for_status()
            r = await http.post(f"/api/v1/agents/soak-{n}/token")
            r.raise_for_status()
            tokens.append(str(r.json()["token"]))
    return tokens


async def soak(args: argparse.Namespace, hub: Hub, tally: Tally) -> list[Sample]:
    tokens = await setup(hub)
    clients = Clients(hub, tokens, args, tally)
    samples: list[Sample] = []
    started = time.monotonic()
    duration = args.minutes * 60
    warm_at = warm_seconds(args)
    traced = False
    clients.start()
    try:
        for tick in itertools.count(1):
            next_at = min(started + tick * args.sample, started + duration)
            await asyncio.sleep(max(0.0, next_at - time.monotonic()))
            if not hub.alive():
                raise HubFailed("the hub exited during the soak")
            samples.append(hub.sample(time.monotonic() - started, "load"))
            if args.verbose:
                s = samples[-1]
                print(
                    f"{s.at:7.0f} s  rss {s.rss / MIB:7.1f} MiB (anon {s.anon / MIB:6.1f}, files {s.file / MIB:5.1f})"
                    f"  fds {s.fds:4d}  ops {tally.total}  "
                    f"load {os.getloadavg()[0]:.2f}",
                    flush=True,
                )
            if args.trace and not traced and samples[-1].at >= warm_at:
                hub.dump()
                traced = True
            if time.monotonic() - started >= duration:
                break
    finally:
        await clients.close()
    closed_at = time.monotonic()
    while time.monotonic() - closed_at < args.settle:
        await asyncio.sleep(min(args.sample, args.settle))
        samples.append(hub.sample(time.monotonic() - started, "closed"))
    if args.trace:
        hub.dump()
        await asyncio.sleep(2)
    return samples


def warm_seconds(args: argparse.Namespace) -> float:
    return float(min(args.warm * 60, args.minutes * 60 / 3))


def slope(points: list[Sample], measure: str = "rss") -> float:
    """Least-squares growth of `measure` (a Sample field) in MiB a minute."""
    if len(points) < 2:
        return 0.0
    xs = [p.at / 60 for p in points]
    ys = [getattr(p, measure) / MIB for p in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / den if den else 0.0


@dataclass
class Verdict:
    measure: str  # rss (VmRSS) or anon (RssAnon)
    warm: Sample
    end: Sample
    closed: Sample
    growth: float  # MiB a minute over the tail window
    window: float  # minutes
    after_close: float  # the level after the clients closed over the warm level

    @property
    def met(self) -> bool:
        return self.growth < GROWTH_TARGET and self.after_close <= CLOSE_TARGET

    def level(self, sample: Sample) -> float:
        return float(getattr(sample, self.measure)) / MIB


GROWTH_TARGET = 1.0  # MiB a minute over the last ten minutes
CLOSE_TARGET = 1.10  # the level after the clients close, over the warm level


def judge(args: argparse.Namespace, samples: list[Sample], measure: str = "rss") -> Verdict:
    load = [s for s in samples if s.phase == "load"]
    closed = [s for s in samples if s.phase == "closed"] or load[-1:]
    warm = next((s for s in load if s.at >= warm_seconds(args)), load[-1])
    window = min(10.0, args.minutes / 2)
    tail = [s for s in load if s.at >= load[-1].at - window * 60]
    after = getattr(closed[-1], measure) / max(1, getattr(warm, measure))
    return Verdict(measure, warm, load[-1], closed[-1], slope(tail, measure), window, after)


def verdict_lines(v: Verdict, settle: float) -> list[str]:
    name = {"rss": "RSS (VmRSS)", "anon": "own memory (RssAnon)"}[v.measure]
    return [
        f"  {name} warm (at {v.warm.at / 60:.1f} min): {v.level(v.warm):.1f} MiB; "
        f"end of load: {v.level(v.end):.1f} MiB; "
        f"after the clients closed ({settle:g} s): {v.level(v.closed):.1f} MiB",
        f"    growth over the last {v.window:g} min: {v.growth:+.2f} MiB/min (target under {GROWTH_TARGET:g}): "
        f"{'met' if v.growth < GROWTH_TARGET else 'NOT met'}; after close / warm: {v.after_close:.3f} "
        f"(target at most {CLOSE_TARGET:.2f}): {'met' if v.after_close <= CLOSE_TARGET else 'NOT met'}",
    ]


def report(args: argparse.Namespace, samples: list[Sample], tally: Tally, seconds: float) -> int:
    rss, anon = judge(args, samples, "rss"), judge(args, samples, "anon")
    fds = [s.fds for s in samples if s.phase == "load"]
    print(
        f"soak: {args.minutes:g} min, {tally.total} operations ({tally.total / seconds:.1f}/s, "
        f"asked {args.rate:g}/s), {args.streams} streams ({tally.stream_opens} opens, "
        f"{tally.stream_bytes / MIB:.1f} MiB read), {args.waits} parked waits ({tally.waits_returned} returned)"
    )
    print("  operations: " + ", ".join(f"{k} {n}" for k, n in sorted(tally.ops.items())))
    if tally.refused:
        print("  refused or failed: " + ", ".join(f"{k} {n}" for k, n in sorted(tally.refused.items())))
    for error in tally.errors[:10]:
        print(f"  ! {error}")
    for line in [*verdict_lines(rss, args.settle), *verdict_lines(anon, args.settle)]:
        print(line)
    print(
        f"  mapped store files resident: {rss.warm.file / MIB:.1f} MiB warm, {rss.end.file / MIB:.1f} MiB at the "
        f"end of load (page cache the kernel reclaims; counted in VmRSS, not in RssAnon)"
    )
    print(f"  open fds: min {min(fds)}, max {max(fds)} under load; {rss.closed.fds} after close")
    print(f"  load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    return 0 if rss.met and anon.met else 1


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=30.0, help="minutes of load (0.05-600)")
    parser.add_argument("--rate", type=float, default=40.0, help="operations a second over all writers (0.5-500)")
    parser.add_argument("--streams", type=int, default=50, help="open streams (0-500)")
    parser.add_argument("--waits", type=int, default=20, help="parked waits (0-200)")
    parser.add_argument("--sample", type=float, default=10.0, help="seconds between samples (0.5-600)")
    parser.add_argument("--warm", type=float, default=5.0, help="minutes until the warm sample")
    parser.add_argument("--settle", type=float, default=30.0, help="seconds to wait after closing the clients")
    parser.add_argument("--samples", type=Path, default=None, help="write every sample here as JSON lines")
    parser.add_argument("--trace", action="store_true", help="SIGUSR2 the hub at warm and at the end")
    parser.add_argument("--keep", action="store_true", help="keep the data directory and the hub's log")
    parser.add_argument("--verbose", action="store_true", help="print each sample")
    args = parser.parse_args(argv)
    if not (
        0.05 <= args.minutes <= 600
        and 0.5 <= args.rate <= 500
        and 0 <= args.streams <= 500
        and 0 <= args.waits <= 200
        and 0.5 <= args.sample <= 600
        and 0 <= args.settle <= 600
    ):
        parser.error("a value is out of range; see --help")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    work = Path(tempfile.mkdtemp(prefix="hub-soak-"))
    hub = Hub(work, "hub_" + secrets.token_urlsafe(32))
    tally = Tally()
    code = 2
    try:
        hub.start()
        began = time.monotonic()
        samples = asyncio.run(soak(args, hub, tally))
        if args.samples:
            args.samples.write_text("".join(json.dumps(s.__dict__) + "\n" for s in samples))
        code = report(args, samples, tally, time.monotonic() - began - args.settle)
    except HubFailed as exc:
        print(f"FAIL: {exc}")
    finally:
        hub.stop()
        if args.keep or code == 2 or args.trace:
            print(f"data directory and hub.log kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
