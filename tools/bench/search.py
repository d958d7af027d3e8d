"""Search at a million events (issue 15): lexical query latency, index lag, append throughput, size.

Run from the checkout: `.venv/bin/python -m tools.bench.search` or `.venv/bin/python tools/bench/search.py`
(options: --help; `--scale 0.01` for a quick run; `--data DIR` keeps the loaded corpus for the next
run, and `--queries-only` then times the queries alone).

1. Corpus (`--scale` 1.0): 1,000,000 feed events over 10 projects (bulk-loaded straight into
   hub.db with the rows `insert_event` writes; text drawn from a Zipf-distributed vocabulary of
   20,000 made-up words, a summary of 6 words and a string body of 20), then through the services:
   10,000 knowledge pages (10 projects), 1,000 artifacts (HTML and markdown, a tenth protected)
   and 10,000 session brain entries (100 sessions). The first search indexes everything (timed).
   hub.db bytes per indexed event: the file's growth (checkpointed) while the events alone were
   indexed, divided by their number.
2. Lexical queries (in-process `hub.search.search`, the index caught up): a common word, a mid
   word, a rare word, two words, a two-letter and a three-letter prefix, a quoted phrase, as the
   admin and as an agent that may not see a confidential project; p50 and p95 of each, and of all.
3. Index lag after a commit: a write with a new word (an event, a brain entry, a page, an artifact
   update), then the time from the write's reply to a search that returns it. The index follows
   the writes on the write side (a background pass after each), and a query waits for the pass
   that covers what committed before it, so the first search finds it; the lag is that search's
   latency. p50 and p99 per family and over all.
4. `signal_append` throughput with the index against without, in the same run, alternating rounds:
   without, appends alone (the index's passes held: nothing is indexed during the round); with,
   the same appends while the index follows them and a searcher queries every `--search-every` ms
   for the rarest word (the query matches almost nothing: what the round adds is the indexing).
5. Semantic query p95: `semantic_queries` runs `mode=semantic` and reports the backend it got
   (the semantic mode's own preparation goes in `prepare_semantic`).

Targets: lexical p95 under 20 ms; index lag p99 under 250 ms; throughput ratio at least 0.8;
semantic p95 under 60 ms.
"""

from __future__ import annotations

import argparse
import base64
import importlib.util
import os
import random
import secrets
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if not __package__:  # run as `python tools/bench/<name>.py`: tools/bench/__init__.py says why
    del sys.path[0]
    if importlib.util.find_spec("tools") is None:
        sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import anyio
import orjson

from hubcore.caller import Caller
from hubcore.config import HubSettings
from hubcore.hub import Hub
from hubcore.services import ids
from hubcore.services.agents import AgentCreate
from hubcore.services.artifacts import ArtifactPublish, ArtifactUpdate
from hubcore.services.brains import BrainPut
from hubcore.services.kb import models
from hubcore.services.posts import SignalAppend
from hubcore.services.projects import ProjectCreate
from hubcore.services.requests import parse
from hubcore.services.search.models import SearchRequest
from hubcore.services.sessions import SessionStart
from hubhttp.asgi import HubASGI
from tools.bench.feed import ADMIN_TOKEN, lifespan, pct, timed

ADMIN = Caller.admin()
AGENT = Caller.agent("reader")
PROJECTS = [f"p{n}" for n in range(10)]
SECRET_PROJECT = "p9"  # confidential: the agent holds no grant on it
CHUNK = 50_000
ENVELOPE = {
    "alg": "AES-256-GCM",
    "kdf": "PBKDF2-HMAC-SHA256",
    "iterations": 600000,
    "salt": base64.b64encode(b"s" * 16).decode(),
    "iv": base64.b64encode(b"i" * 12).decode(),
}
SYLLABLES = [
    "ka",
    "lo",
    "mi",
    "ne",
    "pu",
    "ra",
    "si",
    "to",
    "vu",
    "ze",
    "bar",
    "dol",
    "fen",
    "gur",
    "hal",
    "jor",
    "kem",
    "lin",
    "mor",
    "nus",
    "pel",
    "quin",
    "rost",
    "sal",
    "tem",
    "ulv",
    "ver",
    "wis",
    "yar",
    "zon",
]


class Words:
    """A made-up vocabulary drawn with Zipf-like frequencies (word n with weight 1/(n+1))."""

    def __init__(self, size: int, seed: int = 7) -> None:
        rng = random.Random(seed)
        found: dict[str, None] = {}
        while len(found) < size:
            found["".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4)))] = None
        self.words = list(found)
        weights = [1 / (n + 1) for n in range(size)]
        total = 0.0
        self.cumulative = []
        for w in weights:
            total += w
            self.cumulative.append(total)
        self.rng = random.Random(seed + 1)

    def text(self, count: int) -> str:
        return " ".join(self.rng.choices(self.words, cum_weights=self.cumulative, k=count))


def bulk_events(conn: sqlite3.Connection, words: Words, start: int, count: int, base_ms: int) -> None:
    """`count` signal events as `insert_event` writes them (rows and tallies), over the projects."""
    rows = []
    for n in range(start, start + count):
        eid = ids.encode(base_ms + n, secrets.randbits(80))
        project = PROJECTS[n % len(PROJECTS)]
        payload = orjson.dumps({"body": words.text(20), "n": n}).decode()
        rows.append((eid, project, "signal", "bot", words.text(6), payload, None, None, (base_ms + n) / 1000))
    conn.executemany(
        "INSERT INTO events (id, project_id, kind, actor, summary, payload, session_id, "
        "thread_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        rows,
    )
    for project in PROJECTS:
        conn.execute(
            """INSERT INTO feed_stats (project_id, events, bytes, newest_id, newest_at, unseen)
                        VALUES (?, ?, 0, ?, ?, 0) ON CONFLICT (project_id) DO UPDATE SET
                        events = events + excluded.events, newest_id = excluded.newest_id,
                        newest_at = excluded.newest_at""",
            (project, count // len(PROJECTS), rows[-1][0], rows[-1][-1]),
        )
    conn.execute(
        "INSERT OR REPLACE INTO hub_meta (key, value) VALUES (?, ?)", (ids.MARK_KEY, str(base_ms + start + count))
    )


def db_bytes(hub: Hub) -> int:
    """hub.db's size once its write-ahead log is checkpointed into it."""
    conn = sqlite3.connect(hub.data_dir / "hub.db")
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    return os.path.getsize(hub.data_dir / "hub.db")


async def load(hub: Hub, words: Words, args: argparse.Namespace, out: list[str]) -> None:
    scale = args.scale
    events, pages, artifacts, entries = (max(10, int(n * scale)) for n in (1_000_000, 10_000, 1_000, 10_000))
    for project in PROJECTS:
        await hub.projects.create(
            ADMIN, parse(ProjectCreate, {"id": project, "confidential": project == SECRET_PROJECT})
        )
    await hub.agents.create(ADMIN, parse(AgentCreate, {"id": "reader"}))
    started = time.perf_counter()
    base_ms = int(time.time() * 1000) - events - 60_000
    for start in range(0, events, CHUNK):
        count = min(CHUNK, events - start)
        await hub.core.store.execute(lambda conn, s=start, c=count: bulk_events(conn, words, s, c, base_ms))
    loaded = time.perf_counter() - started
    before = db_bytes(hub)
    started = time.perf_counter()
    await hub.search_index.rebuild()  # every source from its mark: only the events exist so far
    indexed = time.perf_counter() - started
    per_event = (db_bytes(hub) - before) / events
    out.append(
        f"Loaded {events:,} events in {loaded:.1f} s; indexed them in {indexed:.1f} s "
        f"({events / indexed:,.0f} a second); hub.db bytes per indexed event: {per_event:.0f}."
    )
    started = time.perf_counter()
    await load_services(hub, words, pages, artifacts, entries)
    loaded = time.perf_counter() - started
    started = time.perf_counter()
    await hub.search.search(ADMIN, parse(SearchRequest, {"q": "warmup"}))
    out.append(
        f"Wrote {pages:,} pages, {artifacts:,} artifacts and {entries:,} brain entries through the services "
        f"in {loaded:.1f} s; the next search indexed them in {time.perf_counter() - started:.1f} s "
        f"(hub.db {db_bytes(hub) / 2**20:.0f} MiB).\n"
    )


async def load_services(hub: Hub, words: Words, pages: int, artifacts: int, entries: int) -> None:
    for n in range(pages):
        content = f"---\ntype: Concept\ntitle: {words.text(3)}\n---\n# {words.text(4)}\n\n{words.text(150)}\n"
        await hub.kb.write(
            ADMIN,
            parse(
                models.KbWrite,
                {"project_id": PROJECTS[n % len(PROJECTS)], "path": f"/fs/sec{n % 40}/page{n}.md", "content": content},
            ),
        )
    for n in range(artifacts):
        body: dict[str, Any] = {"project_id": PROJECTS[n % len(PROJECTS)], "title": words.text(4)}
        if n % 10 == 9:  # protected: ciphertext with its envelope (indexed by title only)
            body |= {
                "kind": "html",
                "content": base64.b64encode(secrets.token_bytes(600)).decode(),
                "envelope": ENVELOPE,
            }
        elif n % 2:
            body |= {"kind": "html", "content": f"<h1>{words.text(4)}</h1><p>{words.text(400)}</p>"}
        else:
            body |= {"kind": "markdown", "content": f"# {words.text(4)}\n\n{words.text(400)}\n"}
        await hub.artifacts.publish_artifact(ADMIN, parse(ArtifactPublish, body))
    sessions = max(1, entries // 100)
    for s in range(sessions):
        sid = (
            await hub.sessions.start(
                ADMIN, parse(SessionStart, {"project_id": PROJECTS[s % len(PROJECTS)], "name": f"work{s}"})
            )
        )["session_id"]
        for n in range(entries // sessions):
            await hub.brains.write_entry(
                ADMIN,
                parse(
                    BrainPut,
                    {"path": f"/fs/notes/n{n}.md", "content": words.text(60), "store": "session", "session_id": sid},
                ),
            )


def row(name: str, samples: list[float], q: float, target_ms: float | None = None) -> str:
    value = pct(samples, q) * 1000
    goal = f"under {target_ms:g} ms: {'met' if value < target_ms else 'NOT met'}" if target_ms else ""
    return f"| {name} | {len(samples)} | {statistics.median(samples) * 1000:.2f} | {value:.2f} | {goal} |"


def queries(words: Words) -> list[tuple[str, str]]:
    common, mid, rare = words.words[3], words.words[300], words.words[15_000 % len(words.words)]
    return [
        ("common word", common),
        ("mid word", mid),
        ("rare word", rare),
        ("two words", f"{common} {mid}"),
        ("two-letter prefix", mid[:2]),
        ("three-letter prefix", mid[:3]),
        ("two words, one a two-letter prefix", f"{mid} {words.words[40][:2]}"),
        ("quoted phrase", f'"{words.words[1]} {words.words[2]}"'),
    ]


async def bench_queries(hub: Hub, words: Words, args: argparse.Namespace, out: list[str]) -> list[float]:
    out.append("Lexical queries (in-process, the index caught up; limit 50):\n")
    out.append("| query | runs | p50 ms | p95 ms | |\n|---|---|---|---|---|")
    everything: list[float] = []
    for who, caller in (("admin", ADMIN), ("agent", AGENT)):
        for name, text in queries(words):
            req = parse(SearchRequest, {"q": text})
            samples = await timed(lambda r=req, c=caller: hub.search.search(c, r), args.reads)  # type: ignore[misc]
            found = await hub.search.search(caller, req)
            everything += samples
            shown = f"{found['count']} hits{', truncated' if found['truncated'] else ''}"
            out.append(row(f"{who}: {name} `{text}` ({shown})", samples, 0.95))
    out.append(row("**all lexical queries**", everything, 0.95, 20))
    return everything


async def bench_lag(hub: Hub, words: Words, args: argparse.Namespace, out: list[str]) -> None:
    """From a write's reply to the first search that returns it (that first search does find it)."""
    sid = (await hub.sessions.start(ADMIN, parse(SessionStart, {"project_id": "p0", "name": "lag"})))["session_id"]
    art = await hub.artifacts.publish_artifact(
        ADMIN, parse(ArtifactPublish, {"project_id": "p0", "title": "lag", "kind": "markdown", "content": "start"})
    )
    await hub.search.search(ADMIN, parse(SearchRequest, {"q": "warmup"}))

    async def event(token: str) -> None:
        await hub.posts.signal_append(
            ADMIN, parse(SignalAppend, {"project_id": "p1", "summary": f"{token} seen", "body": words.text(20)})
        )

    async def brain(token: str) -> None:
        await hub.brains.write_entry(
            ADMIN,
            parse(BrainPut, {"path": f"/fs/lag/{token}.md", "content": token, "store": "session", "session_id": sid}),
        )

    async def page(token: str) -> None:
        await hub.kb.write(
            ADMIN,
            parse(
                models.KbWrite,
                {"project_id": "p2", "path": f"/fs/lag/{token}.md", "content": f"---\ntype: Concept\n---\n{token}\n"},
            ),
        )

    async def artifact(token: str) -> None:
        await hub.artifacts.update(
            ADMIN,
            parse(ArtifactUpdate, {"artifact_id": art["artifact_id"], "content": f"# {token}\n\n{words.text(400)}"}),
        )

    out.append(
        f"\nIndex lag after a commit (from the write's reply to the search that returns it), "
        f"{args.rounds} writes each:\n"
    )
    out.append("| write | writes | p50 ms | p99 ms | |\n|---|---|---|---|---|")
    everything: list[float] = []
    for name, write in (
        ("feed event (`signal_append`)", event),
        ("session brain entry", brain),
        ("knowledge page (project of ~1/10 of the pages)", page),
        ("artifact update", artifact),
    ):
        samples = []
        for n in range(args.rounds):
            token = f"lagtoken{secrets.token_hex(4)}x{n}"
            await write(token)
            started = time.perf_counter()
            found = await hub.search.search(ADMIN, parse(SearchRequest, {"q": token}))
            samples.append(time.perf_counter() - started)
            if not found["count"]:
                raise SystemExit(f"lag: {name} {token} not found by the first search")
        everything += samples
        out.append(row(name, samples, 0.99))
    out.append(row("**all writes**", everything, 0.99, 250))


async def bench_appends(hub: Hub, words: Words, args: argparse.Namespace, out: list[str]) -> None:
    """Alternating rounds: appends alone, then the same appends with a searcher indexing them."""
    # A query matching almost nothing: what the searcher adds is the indexing, not ranking work.
    req = parse(SearchRequest, {"q": words.words[-1]})
    rates: dict[bool, list[float]] = {False: [], True: []}
    searches = 0

    async def appends() -> float:
        started = time.perf_counter()
        for _ in range(args.appends):
            await hub.posts.signal_append(
                ADMIN, parse(SignalAppend, {"project_id": "p3", "summary": words.text(6), "body": words.text(20)})
            )
        return args.appends / (time.perf_counter() - started)

    for rnd in range(args.append_rounds * 2):
        with_index = rnd % 2 == 1
        await hub.search.search(ADMIN, req)  # each round starts with the index caught up
        if not with_index:
            async with hub.search_index.held():  # no pass runs during the round
                rates[False].append(await appends())
            continue
        async with anyio.create_task_group() as tg:

            async def searcher() -> None:
                nonlocal searches
                while True:
                    await anyio.sleep(args.search_every / 1000)
                    await hub.search.search(ADMIN, req)
                    searches += 1

            tg.start_soon(searcher)
            rates[True].append(await appends())
            tg.cancel_scope.cancel()
    without, with_ = statistics.median(rates[False]), statistics.median(rates[True])
    out.append(
        f"\n`signal_append` throughput (in-process, sequential, {args.appends} appends a round, "
        f"{args.append_rounds} rounds each, alternating): without the index {without:,.0f}/s; with a search "
        f"every {args.search_every} ms indexing them ({searches} searches) {with_:,.0f}/s; "
        f"ratio {with_ / without:.2f} (target at least 0.8: {'met' if with_ / without >= 0.8 else 'NOT met'})."
    )


async def prepare_semantic(hub: Hub, out: list[str]) -> None:
    """The semantic mode's vectors caught up before its queries are timed: every indexed document
    embedded in batches, as the background task does (timed), and the vector set read."""
    started = time.perf_counter()
    embedded = await hub.search.semantic.catch_up()
    took = time.perf_counter() - started
    await hub.search.search(ADMIN, parse(SearchRequest, {"q": "warmup", "mode": "semantic"}))
    read = time.perf_counter() - started - took
    out.append(
        f"\nEmbedding: {embedded:,} documents in {took:.1f} s ({embedded / max(took, 1e-9):,.0f}/s, "
        f"written to hub.db in batches of 256); the first semantic query read the vector set in {read:.1f} s."
    )


async def semantic_queries(hub: Hub, words: Words, args: argparse.Namespace, out: list[str]) -> None:
    await prepare_semantic(hub, out)
    by_caller: dict[str, list[float]] = {"admin": [], "agent": []}
    lexical: dict[str, list[float]] = {"admin": [], "agent": []}  # the same queries, alternating: the baseline
    backends: set[str] = set()
    for _, text in queries(words):
        req = parse(SearchRequest, {"q": text, "mode": "semantic"})
        plain = parse(SearchRequest, {"q": text})
        for _ in range(max(5, args.reads // 4)):
            for who, caller in (("admin", ADMIN), ("agent", AGENT)):  # the agent's: through its projects' filter
                by_caller[who] += await timed(lambda r=req, c=caller: hub.search.search(c, r), 1)  # type: ignore[misc]
                lexical[who] += await timed(lambda r=plain, c=caller: hub.search.search(c, r), 1)  # type: ignore[misc]
        backends.add((await hub.search.search(ADMIN, req))["backend"])
    out.append(
        f"\n`mode=semantic` queries (backend {', '.join(sorted(backends))}), each run alternating with "
        "the same query in lexical mode (the baseline of the same run):\n"
    )
    out.append("| queries | runs | p50 ms | p95 ms | |\n|---|---|---|---|---|")
    for who, samples in by_caller.items():
        out.append(row(f"as the {who}", samples, 0.95, 60))
        out.append(row(f"as the {who}, the same queries lexical", lexical[who], 0.95))
    out.append(row("all", by_caller["admin"] + by_caller["agent"], 0.95, 60))
    both = lexical["admin"] + lexical["agent"]
    out.append(row("all, the same queries lexical", both, 0.95))
    ratio = statistics.median(by_caller["admin"] + by_caller["agent"]) / statistics.median(both)
    out.append(f"\nSemantic over lexical, same queries, same run: p50 x{ratio:.2f}.")


async def first_search_after_start(settings: HubSettings, out: list[str]) -> None:
    app = HubASGI(settings)
    async with lifespan(app):
        started = time.perf_counter()
        await app.hub.search.search(ADMIN, parse(SearchRequest, {"q": "warmup"}))
        out.append(
            f"\nFirst search after a restart (it reconciles every source's mark): "
            f"{(time.perf_counter() - started) * 1000:.0f} ms."
        )


async def main(args: argparse.Namespace) -> None:
    words = Words(args.vocabulary)
    if args.data is not None:  # kept: a later run with the same corpus options reuses it
        await run(Path(args.data), words, args)
        return
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        await run(Path(tmp), words, args)


def corpus_loaded(where: Path, args: argparse.Namespace) -> bool:
    """Whether `where` holds a finished corpus of these options (its `corpus.json` says so; it is
    written only once the load is whole); an unfinished or different one is refused."""
    mark = where / "corpus.json"
    if not mark.exists():
        if where.exists() and any(where.iterdir()):
            raise SystemExit(f"{where} holds no finished corpus (an interrupted load?): give a new directory")
        return False
    held = orjson.loads(mark.read_bytes())
    wanted = {"scale": args.scale, "vocabulary": args.vocabulary}
    if held != wanted:
        raise SystemExit(f"{where} holds a corpus of {held}, not {wanted}")
    return True


async def run(where: Path, words: Words, args: argparse.Namespace) -> None:
    settings = HubSettings(data_dir=str(where / "data"), admin_token=ADMIN_TOKEN, min_free_bytes=0)
    out: list[str] = [f"Search bench, scale {args.scale} (load {os.getloadavg()[0]:.1f} at the start).\n"]
    reuse = corpus_loaded(where, args)
    app = HubASGI(settings)
    async with lifespan(app):
        hub = app.hub
        if reuse:  # what earlier runs' lag and throughput rounds wrote stays in it
            await hub.search.search(ADMIN, parse(SearchRequest, {"q": "warmup"}))
            # A hub with vectors reads its vector set and loads the model at start, in the
            # background: the queries are timed once that is over, not beside it.
            await hub.search.semantic.idle()
            out.append(f"Reused the corpus kept in {where} (loaded by an earlier run).\n")
        else:
            await load(hub, words, args, out)
            if args.data is not None:
                (where / "corpus.json").write_bytes(orjson.dumps({"scale": args.scale, "vocabulary": args.vocabulary}))
        await bench_queries(hub, words, args, out)
        if not args.queries_only:
            await bench_lag(hub, words, args, out)
            await bench_appends(hub, words, args, out)
        if not args.no_semantic:
            await semantic_queries(hub, words, args, out)
    await first_search_after_start(settings, out)
    out.append(f"\nLoad at the end: {os.getloadavg()[0]:.1f}.")
    print("\n".join(out))


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--scale",
        type=float,
        default=1.0,
        help="corpus size against 1M events, 10k pages, 1k artifacts, 10k brain entries",
    )
    parser.add_argument("--vocabulary", type=int, default=20_000)
    parser.add_argument("--reads", type=int, default=100, help="runs of each query")
    parser.add_argument("--rounds", type=int, default=100, help="writes of each family for the lag")
    parser.add_argument("--appends", type=int, default=1000, help="appends a throughput round")
    parser.add_argument("--append-rounds", type=int, default=5)
    parser.add_argument("--search-every", type=int, default=100, help="ms between the searcher's queries")
    parser.add_argument("--no-semantic", action="store_true", help="leave out the mode=semantic queries")
    parser.add_argument("--dir", default=None, help="where the temporary data directory goes")
    parser.add_argument(
        "--data",
        default=None,
        help="keep the corpus in this directory; a later run with the same --data, --scale and "
        "--vocabulary reuses it instead of loading again",
    )
    parser.add_argument(
        "--queries-only",
        action="store_true",
        help="leave out the index lag and append throughput (they add events to a kept corpus)",
    )
    return parser.parse_args(argv)


if __name__ == "__main__":
    anyio.run(main, parse_args(sys.argv[1:]))
