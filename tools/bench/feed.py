"""Feed reads at a million events, the inbox at ten thousand items, and stream fan-out.

Run from the checkout: `.venv/bin/python tools/bench/feed.py` (options: --help).

1. One project holds `--events` events (default one million, bulk-loaded straight into hub.db with
   the same rows and tallies `insert_event` writes). A page of 50 is read in-process through
   `FeedService.project_feed` as the admin: the newest page, a backward page from a cursor in the
   middle (`before`), and a forward page from the same cursor (`since`); also an agent's stateful
   `feed_read` from a mid-feed cursor. Each is repeated `--reads` times; p50 and p99 are reported.
   The project listing (which counts unseen events per project) is timed on the same feed.
2. `GET /api/v1/inbox` (default page of 50, and `limit=500`) with `--inbox` items, through the real
   ASGI app (gate, Quart, JSON rendering) on httpx's in-process transport.
3. `--streams` open `GET /api/v1/stream` connections (driven at the ASGI level, in-process); the
   human answers a question and the delay from the answer's commit (the service call returning) to
   the last connection receiving its `event: inbox` message is measured, `--rounds` times.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import secrets
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

if not __package__:  # run as `python tools/bench/<name>.py`: tools/bench/__init__.py says why
    del sys.path[0]
    if importlib.util.find_spec("tools") is None:
        sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import anyio
import httpx
import orjson

from hubcore.caller import Caller
from hubcore.config import HubSettings
from hubcore.services import ids
from hubcore.services.agents import AgentCreate
from hubcore.services.feed import FeedRead, FeedSeen
from hubcore.services.posts import QuestionPost
from hubcore.services.projects import ProjectCreate
from hubcore.services.requests import parse as parse_request
from hubcore.services.resolutions import AnswerPost
from hubhttp.asgi import HubASGI

ADMIN_TOKEN = "bench-admin-token-0123456789abcdef0123456789abcdef"
ADMIN = Caller.admin()
CHUNK = 100_000


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def report(name: str, samples: list[float]) -> str:
    return f"| {name} | {len(samples)} | {statistics.median(samples) * 1000:.2f} | {pct(samples, 0.99) * 1000:.2f} |"


def bulk_events(
    conn: sqlite3.Connection, project: str, start: int, count: int, base_ms: int, kind: str = "signal"
) -> list[str]:
    """Append `count` events one millisecond apart, with the tallies `insert_event` keeps (a store
    that keeps an unseen count gets it too: every loaded event is the newest, so above the cursor)."""
    made, rows = [], []
    for n in range(start, start + count):
        eid = ids.encode(base_ms + n, secrets.randbits(80))
        summary, payload = f"event {n} did something", orjson.dumps({"body": f"event {n} body text"}).decode()
        rows.append((eid, project, kind, "bot", summary, payload, None, None, (base_ms + n) / 1000))
        made.append(eid)
    conn.executemany(
        "INSERT INTO events (id, project_id, kind, actor, summary, payload, session_id, "
        "thread_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        rows,
    )
    weight = sum(len(r[4].encode()) + len(r[5].encode()) for r in rows)
    kept = "unseen" in {c[1] for c in conn.execute("PRAGMA table_info(feed_stats)")}
    conn.execute(
        f"""INSERT INTO feed_stats (project_id, events, bytes, newest_id, newest_at{", unseen" if kept else ""})
            VALUES (:p, :n, :b, :id, :at{", :n" if kept else ""})
            ON CONFLICT (project_id) DO UPDATE SET events = events + excluded.events, bytes = bytes + excluded.bytes,
            newest_id = excluded.newest_id, newest_at = excluded.newest_at{
            ", unseen = unseen + excluded.unseen" if kept else ""
        }""",
        {"p": project, "n": count, "b": weight, "id": made[-1], "at": rows[-1][-1]},
    )
    conn.execute(
        """INSERT INTO feed_actors (project_id, actor, events, last_at) VALUES (?, 'bot', ?, ?)
                    ON CONFLICT (project_id, actor) DO UPDATE SET events = events + excluded.events,
                    last_at = excluded.last_at""",
        (project, count, rows[-1][-1]),
    )
    conn.execute(
        "INSERT OR REPLACE INTO hub_meta (key, value) VALUES (?, ?)", (ids.MARK_KEY, str(base_ms + start + count))
    )
    return made


@asynccontextmanager
async def lifespan(app: HubASGI) -> AsyncIterator[None]:
    to_app, app_in = anyio.create_memory_object_stream[MutableMapping[str, Any]](4)
    app_out, from_app = anyio.create_memory_object_stream[MutableMapping[str, Any]](4)
    async with to_app, app_in, app_out, from_app, anyio.create_task_group() as tg:
        tg.start_soon(app, {"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}}, app_in.receive, app_out.send)
        await to_app.send({"type": "lifespan.startup"})
        assert (await from_app.receive())["type"] == "lifespan.startup.complete"
        yield
        await to_app.send({"type": "lifespan.shutdown"})
        await from_app.receive()


@asynccontextmanager
async def served(data_root: str | None, **settings: Any) -> AsyncIterator[tuple[HubASGI, httpx.AsyncClient]]:
    """A hub on a fresh temporary data directory (under `data_root`, else the system's), started in
    this process with `settings` on top of the benches' own, and a client reaching it through ASGI."""
    with tempfile.TemporaryDirectory(dir=data_root) as tmp:
        app = HubASGI(
            HubSettings(data_dir=str(Path(tmp) / "data"), admin_token=ADMIN_TOKEN, min_free_bytes=0, **settings)
        )
        async with lifespan(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8080") as client:
                yield app, client


async def timed(fn: Callable[[], Awaitable[Any]], times: int, *, warm: bool = False) -> list[float]:
    """`times` timings of `fn`, in seconds; with `warm`, one untimed call first (the first read opens a
    connection and fills the page cache)."""
    if warm:
        await fn()
    samples = []
    for _ in range(times):
        start = time.perf_counter()
        await fn()
        samples.append(time.perf_counter() - start)
    return samples


async def bench_feed(app: HubASGI, args: argparse.Namespace, out: list[str]) -> None:
    hub = app.hub
    await hub.projects.create(ADMIN, parse_request(ProjectCreate, {"id": "big"}))
    base_ms = int(time.time() * 1000) - args.events - 10_000
    started = time.perf_counter()
    all_ids: list[str] = []
    for start in range(0, args.events, CHUNK):
        count = min(CHUNK, args.events - start)
        all_ids += await hub.core.store.execute(lambda conn, s=start, c=count: bulk_events(conn, "big", s, c, base_ms))
    load = time.perf_counter() - started
    size = os.path.getsize(hub.data_dir / "hub.db") + os.path.getsize(hub.data_dir / "hub.db-wal")
    mid = all_ids[len(all_ids) // 2]
    out.append(f"Loaded {args.events:,} events in {load:.1f} s (hub.db with WAL {size / 2**20:.0f} MiB).\n")
    out.append("| read | reads | p50 ms | p99 ms |\n|---|---|---|---|")
    feed = hub.feed
    out.append(
        report(
            "newest page",
            await timed(lambda: feed.project_feed(ADMIN, FeedRead(project_id="big", limit=50)), args.reads),
        )
    )
    out.append(
        report(
            "backward from a mid cursor (`before`)",
            await timed(lambda: feed.project_feed(ADMIN, FeedRead(project_id="big", before=mid, limit=50)), args.reads),
        )
    )
    out.append(
        report(
            "forward from a mid cursor (`since`)",
            await timed(lambda: feed.project_feed(ADMIN, FeedRead(project_id="big", since=mid, limit=50)), args.reads),
        )
    )
    out.append(
        report(
            "kind filter, newest page",
            await timed(
                lambda: feed.project_feed(ADMIN, FeedRead(project_id="big", kind=("signal",), limit=50)), args.reads
            ),
        )
    )
    out.append(
        report(
            "project listing, no cursor yet (all unseen)",
            await timed(lambda: hub.projects.list(ADMIN), max(20, args.reads // 10)),
        )
    )
    await feed.seen(ADMIN, parse_request(FeedSeen, {"project_id": "big", "event_id": mid}))
    out.append(
        report(
            "project listing, the human's cursor mid-feed",
            await timed(lambda: hub.projects.list(ADMIN), max(20, args.reads // 10)),
        )
    )
    await feed.seen(ADMIN, parse_request(FeedSeen, {"project_id": "big", "event_id": all_ids[-51]}))
    out.append(
        report(
            "project listing, 50 unseen events",
            await timed(lambda: hub.projects.list(ADMIN), max(20, args.reads // 10)),
        )
    )
    await hub.agents.create(ADMIN, parse_request(AgentCreate, {"id": "reader"}))
    reader = Caller.agent("reader")
    await feed.feed_read(reader, FeedRead(project_id="big", since=mid, limit=1))  # put its durable cursor mid-feed
    out.append(
        report(
            "agent `feed_read` from its cursor (advances it)",
            await timed(lambda: feed.feed_read(reader, FeedRead(project_id="big", limit=50)), args.reads),
        )
    )


async def bench_inbox(app: HubASGI, client: httpx.AsyncClient, args: argparse.Namespace, out: list[str]) -> None:
    hub = app.hub
    await hub.projects.create(ADMIN, parse_request(ProjectCreate, {"id": "ideas"}))
    now = time.time()

    def load(conn: sqlite3.Connection) -> None:
        made = bulk_events(conn, "ideas", 0, args.inbox, int(now * 1000) + 1000, kind="idea")
        conn.executemany(
            "INSERT INTO inbox (event_id, project_id, kind, actor, status, created_at, updated_at) "
            "VALUES (?, 'ideas', 'idea', 'bot', 'unread', ?, ?)",
            [(e, now, now) for e in made],
        )

    await hub.core.store.execute(load)
    headers = {"Authorization": f"Bearer {ADMIN_TOKEN}"}

    async def get(params: dict[str, Any]) -> None:
        r = await client.get("/api/v1/inbox", params=params, headers=headers)
        assert r.status_code == 200, r.text

    out.append(f"\n`GET /api/v1/inbox` with {args.inbox:,} items (through the ASGI app, in-process):\n")
    out.append("| request | requests | p50 ms | p99 ms |\n|---|---|---|---|")
    out.append(report("default page (50)", await timed(lambda: get({}), args.reads)))
    out.append(
        report(
            "`status=unread&limit=500`",
            await timed(lambda: get({"status": "unread", "limit": 500}), max(20, args.reads // 10)),
        )
    )


class Arrivals:
    """When each stream received each inbox event; `all_in(event_id)` is set once every stream has."""

    def __init__(self, streams: int) -> None:
        self.streams = streams
        self.times: dict[str, list[float]] = {}
        self._complete: dict[str, anyio.Event] = {}

    def record(self, event_id: str) -> None:
        times = self.times.setdefault(event_id, [])
        times.append(time.perf_counter())
        if len(times) == self.streams:
            self.all_in(event_id).set()

    def all_in(self, event_id: str) -> anyio.Event:
        return self._complete.setdefault(event_id, anyio.Event())

    def forget(self, event_id: str) -> None:
        self.times.pop(event_id, None)
        self._complete.pop(event_id, None)


def http_scope(method: str, path: str, headers: list[tuple[bytes, bytes]]) -> dict[str, Any]:
    """The ASGI scope of one HTTP/1.1 request to the app, as a server would hand it over (the benches
    that drive the app without a server or a socket)."""
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 40000),
        "server": ("127.0.0.1", 8080),
    }


async def open_stream(app: HubASGI, arrivals: Arrivals, gone: anyio.Event, connected: anyio.Event) -> None:
    headers = [(b"host", b"bench"), (b"authorization", f"Bearer {ADMIN_TOKEN}".encode())]
    scope = http_scope("GET", "/api/v1/stream", headers)
    asked = False

    async def receive() -> dict[str, Any]:
        nonlocal asked
        if not asked:
            asked = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await gone.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        body = message.get("body", b"")
        if body.startswith(b": connected"):
            connected.set()
        for block in body.split(b"\n\n"):
            if block.startswith(b"event: inbox"):
                arrivals.record(orjson.loads(block.split(b"data: ", 1)[1])["event_id"])

    await app(scope, receive, send)


async def bench_stream(app: HubASGI, args: argparse.Namespace, out: list[str]) -> None:
    hub = app.hub
    await hub.projects.create(ADMIN, parse_request(ProjectCreate, {"id": "live"}))
    arrivals = Arrivals(args.streams)
    gone = anyio.Event()
    delays = []
    async with anyio.create_task_group() as tg:
        for _ in range(args.streams):
            connected = anyio.Event()
            tg.start_soon(open_stream, app, arrivals, gone, connected)
            await connected.wait()
        for _ in range(args.rounds):
            q = (await hub.posts.question_post(ADMIN, QuestionPost(project_id="live", summary="Go?")))["event_id"]
            await anyio.sleep(0.05)
            arrivals.forget(q)
            await hub.resolutions.answer(ADMIN, AnswerPost(question_id=q, body="yes"))
            committed = time.perf_counter()
            with anyio.fail_after(30):  # woken by the last stream's arrival, not by polling
                await arrivals.all_in(q).wait()
            delays.append(max(arrivals.times[q]) - committed)
        gone.set()
    out.append(
        f"\nStream fan-out: {args.streams} open `GET /api/v1/stream` connections (admin token, "
        "in-process ASGI), delay from a committed answer to the last connection receiving it:\n"
    )
    out.append("| rounds | p50 ms | p99 ms | max ms |\n|---|---|---|---|")
    out.append(
        f"| {len(delays)} | {statistics.median(delays) * 1000:.2f} | {pct(delays, 0.99) * 1000:.2f} | "
        f"{max(delays) * 1000:.2f} |"
    )


async def main(args: argparse.Namespace) -> None:
    out: list[str] = []
    # Every stream here is the admin's: no per-token cap.
    async with served(args.dir, inbox_open_per_agent=0, inbox_open_per_project=0, streams_per_token=0) as (app, client):
        await bench_feed(app, args, out)
        await bench_inbox(app, client, args, out)
        await bench_stream(app, args, out)
    print("\n".join(out))


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--inbox", type=int, default=10_000)
    parser.add_argument("--streams", type=int, default=500)
    parser.add_argument("--reads", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--dir", default=None, help="where the temporary data directory goes")
    return parser.parse_args(argv)


if __name__ == "__main__":
    anyio.run(main, parse(sys.argv[1:]))
