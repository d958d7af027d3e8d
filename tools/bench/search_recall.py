"""Recall of search on a judged corpus (issue 15): recall@10 of lexical and semantic search.

Run from the checkout: `.venv/bin/python -m tools.bench.search_recall` or
`.venv/bin/python tools/bench/search_recall.py` (options: --help).

The corpus (`tools/bench/search_corpus/corpus.json`) holds 32 answer documents and 288 distractors
(engineering log lines), and 64 queries with their judged relevant document: for each answer one
query sharing words with it (`lexical`) and one paraphrase sharing no word with it (`paraphrase`).
Every document is posted as a signal (its text the summary) in one project of a fresh hub, then
every query runs as the admin with `limit=10` in `mode=lexical` and `mode=semantic`; recall@10 is
the share of a query's relevant documents among its hits, averaged per kind of query. With
`--variants`, the semantic side is also measured with other fusion constants and with the nearest
neighbours alone (what `semantic.RRF_K` was chosen from). With `--prefilter N`, the corpus plus N
made-up distractor documents is searched two ways, outside the hub: exact cosine over every vector,
and the hub's way (the 256 nearest by Hamming distance of the signs, re-ranked by cosine of the
int8 vectors): recall@10 of each on the paraphrases and how much their top 10s agree.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
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
from hubcore.services.posts import SignalAppend
from hubcore.services.projects import ProjectCreate
from hubcore.services.requests import parse
from hubcore.services.search import semantic
from hubcore.services.search.models import SearchRequest

CORPUS = Path(__file__).resolve().parent / "search_corpus" / "corpus.json"
ADMIN = Caller.admin()
PROJECT = "recall"
K = 10


def corpus() -> dict[str, Any]:
    data: dict[str, Any] = orjson.loads(CORPUS.read_bytes())
    return data


async def load(hub: Hub, data: dict[str, Any]) -> dict[str, str]:
    """Post every document; the event id of each document id."""
    await hub.projects.create(ADMIN, parse(ProjectCreate, {"id": PROJECT}))
    ids = {}
    for doc in data["docs"]:
        r = await hub.posts.signal_append(ADMIN, parse(SignalAppend, {"project_id": PROJECT, "summary": doc["text"]}))
        ids[r["event_id"]] = doc["id"]
    return ids


async def recall(hub: Hub, data: dict[str, Any], docs_of: dict[str, str], mode: str) -> dict[str, float]:
    """Mean recall@10 of each kind of query in `mode`; `backend` is checked to be what was asked."""
    per_kind: dict[str, list[float]] = {}
    for query in data["queries"]:
        r = await hub.search.search(ADMIN, parse(SearchRequest, {"q": query["q"], "limit": K, "mode": mode}))
        assert r["backend"] == ("fts" if mode == "lexical" else "hybrid"), r["backend"]
        found = {docs_of[h["event_id"]] for g in r["groups"] for h in g["hits"]}
        relevant = set(query["relevant"])
        per_kind.setdefault(query["kind"], []).append(len(found & relevant) / len(relevant))
    out = {kind: sum(v) / len(v) for kind, v in per_kind.items()}
    out["all"] = sum(sum(v) for v in per_kind.values()) / sum(len(v) for v in per_kind.values())
    return out


@contextmanager
def fusion(rrf_k: int, lexical_max: int) -> Iterator[None]:
    """Measure another fusion: the constant, and how many lexical ranks take part (0: none, the
    nearest neighbours alone)."""
    saved = semantic.RRF_K, semantic.LEXICAL_MAX
    semantic.RRF_K, semantic.LEXICAL_MAX = rrf_k, lexical_max
    try:
        yield
    finally:
        semantic.RRF_K, semantic.LEXICAL_MAX = saved


async def evaluate(data_dir: Path, variants: bool = False) -> dict[str, dict[str, float]]:
    """recall@10 by kind of query: `lexical`, `semantic` and, with `variants`, other fusions."""
    data = corpus()
    settings = HubSettings(data_dir=str(data_dir), admin_token="x" * 43, min_free_bytes=0)
    async with Hub.open(settings) as hub:
        docs_of = await load(hub, data)
        table = {"lexical": await recall(hub, data, docs_of, "lexical")}
        await hub.search.semantic.catch_up()  # more than a query embeds itself: in batches, as the background does
        table["semantic"] = await recall(hub, data, docs_of, "semantic")
        if variants:
            for name, k, lexical_max in (
                ("semantic, RRF k=10", 10, semantic.FUSED_MAX),
                ("semantic, RRF k=30", 30, semantic.FUSED_MAX),
                ("semantic, RRF k=120", 120, semantic.FUSED_MAX),
                ("nearest neighbours alone", semantic.RRF_K, 0),
            ):
                with fusion(k, lexical_max):
                    table[name] = await recall(hub, data, docs_of, "semantic")
    return table


def prefilter(extra: int, seed: int = 15) -> dict[str, float]:
    """The hub's nearest neighbours against exact cosine, over the corpus and `extra` distractors."""
    import random

    import numpy as np

    from hubcore.services.search.vectors import CANDIDATES, VectorSet, cosines, load_wordllama, quantize

    model = load_wordllama()
    assert model is not None, "the semantic extra is not installed"
    data = corpus()
    rng = random.Random(seed)
    vocabulary = ["".join(rng.choice("abdegiklmnorstuvz") for _ in range(rng.randint(4, 9))) for _ in range(5000)]
    texts = [d["text"] for d in data["docs"]] + [" ".join(rng.choices(vocabulary, k=20)) for _ in range(extra)]
    ids = [d["id"] for d in data["docs"]] + [f"x{i}" for i in range(extra)]
    floats = np.concatenate([model.embed(texts[i : i + 1024]) for i in range(0, len(texts), 1024)])
    stored = quantize(floats)
    vs = VectorSet.build([(i, v, "p", "feed", None) for i, v in enumerate(stored)])
    paraphrases = [q for q in data["queries"] if q["kind"] == "paraphrase"]
    out = {"documents": float(len(texts))}
    for candidates_k in (CANDIDATES, 4 * CANDIDATES):
        exact_hits = hub_hits = agree = 0
        for query in paraphrases:
            q = model.embed([query["q"]])[0]
            exact = [int(i) for i in np.argsort(-(floats @ q))[:K]]
            candidates = vs.nearest(q, vs.filter(None, None, None), k=candidates_k)
            scores = cosines(q, [stored[i] for i in candidates])
            mine = [candidates[i] for i in np.argsort(-scores)[:K]]
            relevant = set(query["relevant"])
            exact_hits += len({ids[i] for i in exact} & relevant)
            hub_hits += len({ids[i] for i in mine} & relevant)
            agree += len(set(exact) & set(mine))
        n = len(paraphrases)
        out["exact"] = exact_hits / n
        out[f"hub {candidates_k}"] = hub_hits / n
        out[f"agreement {candidates_k}"] = agree / (n * K)
    return out


def render(table: dict[str, dict[str, float]]) -> str:
    lines = ["| search | recall@10, lexical queries | recall@10, paraphrases | recall@10, all |", "|---|---|---|---|"]
    for name, r in table.items():
        lines.append(f"| {name} | {r['lexical']:.2f} | {r['paraphrase']:.2f} | {r['all']:.2f} |")
    return "\n".join(lines)


async def main(args: argparse.Namespace) -> None:
    data = corpus()
    kinds = [q["kind"] for q in data["queries"]]
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        table = await evaluate(Path(tmp) / "data", variants=args.variants)
    print(f"{len(data['docs'])} documents, {len(kinds)} queries ({kinds.count('paraphrase')} paraphrases)\n")
    print(render(table))
    if args.prefilter:
        from hubcore.services.search.vectors import CANDIDATES

        r = prefilter(args.prefilter)
        print(
            f"\nNearest neighbours of the paraphrases over {r['documents']:,.0f} documents (the corpus and "
            f"{args.prefilter:,} made-up ones): recall@10 by exact cosine {r['exact']:.2f}; the hub's way, "
            f"the {CANDIDATES} nearest by Hamming distance re-ranked, {r[f'hub {CANDIDATES}']:.2f} (top 10 "
            f"agreeing with exact cosine {r[f'agreement {CANDIDATES}']:.0%}); with {4 * CANDIDATES} candidates "
            f"{r[f'hub {4 * CANDIDATES}']:.2f} ({r[f'agreement {4 * CANDIDATES}']:.0%})."
        )


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--variants", action="store_true", help="also other fusion constants and no fusion")
    parser.add_argument(
        "--prefilter",
        type=int,
        default=0,
        metavar="N",
        help="also compare the Hamming prefilter with exact cosine over the corpus and N more",
    )
    parser.add_argument("--dir", default=None, help="where the temporary data directory goes")
    return parser.parse_args(argv)


if __name__ == "__main__":
    anyio.run(main, parse_args(sys.argv[1:]))
