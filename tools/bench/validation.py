"""Benchmark: which library should define the hub's typed requests (issue 10, part 3).

Every operation gets one typed request model; the MCP input schema is generated from it, REST
parses into it, services take it. This measures the candidates on the hub's own rules, for four
requests (signal_append, the hot path; brain_put; feed_read; inbox_wait for a float bound):

- `jsonschema`: today's check (a Draft202012Validator over the tool's hand-written input schema,
  every error collected and sorted, the first one explained), a snapshot of the schemas at commit
  8bcf7d0. It checks types and raw lengths only; the services then check again by hand.
- `today`: that schema check followed by the services' hand checks (what a call pays now).
- `hand`: plain dataclasses built by hand-written checks, like `hubcore.services.validate` (the
  floor: no library at all; its JSON Schema must be written by hand beside it, the limits twice).
- `pydantic`: a BaseModel (strict, extra forbidden) with Field/StringConstraints limits and
  `model_validate` from the dict the MCP SDK hands over.
- `pydantic-td`: a pydantic TypeAdapter over a TypedDict (the same constraints; returns a dict).
- `msgspec`: a Struct (forbid_unknown_fields) with Meta limits and `msgspec.convert(strict=True)`;
  skipped when msgspec is not installed (it is not a project dependency).

Each candidate applies the same rules (trim, then check the length; one line; the 256 KiB payload;
the canonical brain path of at most 512 bytes; a blank summary taken from the body) and answers a
refusal as (code, argument, message). Per-call times are the median of `--rounds` alternating
rounds of `--calls` calls, in this process's CPU time. Then: the cost of building the models and
generating their JSON Schemas (once at start), an edge-case table (over-limit strings, trimming,
booleans and floats as integers, integers past 64 bits, NaN, unknown members, whether a message
echoes the value), and how clean each generated schema is for MCP clients (titles, $defs, null
branches, additionalProperties, and whether the schema agrees with the validator on the edges).

    .venv/bin/python -m tools.bench.validation [--rounds 15] [--calls 2000]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

if not __package__:  # run as `python tools/bench/<name>.py`: tools/bench/__init__.py says why
    del sys.path[0]
    if importlib.util.find_spec("tools") is None:
        sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from jsonschema import Draft202012Validator

from tools.bench import validation_models as vm
from tools.bench.validation_models import OPS, Refusal

Check = Callable[[dict[str, Any]], Any]

BIG = 2**70
CASES: list[tuple[str, str, dict[str, Any], str]] = [
    # (operation, label, arguments, expected code or "ok")
    ("signal_append", "hot path: project + summary", {"project_id": "bench", "summary": "progress"}, "ok"),
    (
        "signal_append",
        "full: 1024-char summary, payload, key, session",
        {
            "project_id": "bench",
            "kind": "finished",
            "summary": "s" * 1024,
            "payload": {"files": ["a.py", "b.py"], "tests": 514, "ok": True},
            "idempotency_key": "k-0001",
            "session_id": "01M84GQQG79T7SPHFH8RBRJ7PR",
        },
        "ok",
    ),
    (
        "brain_put",
        "2 KiB value at /fs/notes/plan.md",
        {"path": "/fs/notes/./plan.md", "value": "v" * 2048, "store": "session", "if_version": "sha256:" + "0" * 64},
        "ok",
    ),
    (
        "feed_read",
        "since + kind list + limit",
        {"project_id": "bench", "since": "01M84GQQG79T7SPHFH8RBRJ7PR", "kind": ["signal", "finished"], "limit": 100},
        "ok",
    ),
    ("inbox_wait", "wait_seconds 30", {"wait_seconds": 30}, "ok"),
    ("signal_append", "error: summary 1025 chars", {"project_id": "bench", "summary": "s" * 1025}, "payload_too_large"),
    ("signal_append", "error: summary of wrong type", {"project_id": "bench", "summary": 5}, "invalid_argument"),
    ("feed_read", "error: limit 501", {"project_id": "bench", "limit": 501}, "invalid_argument"),
]

EDGES: list[tuple[str, str, dict[str, Any], str]] = [
    (
        "signal_append",
        "summary 1024 chars + 2 spaces (1024 kept)",
        {"project_id": "p", "summary": " " + "s" * 1024 + " "},
        "ok",
    ),
    ("signal_append", "summary 1025 chars", {"project_id": "p", "summary": "s" * 1025}, "payload_too_large"),
    ("signal_append", "summary 5000 chars (echoed?)", {"project_id": "p", "summary": "Z" * 5000}, "payload_too_large"),
    ("signal_append", "summary two lines", {"project_id": "p", "summary": "a\nb"}, "invalid_argument"),
    ("signal_append", "summary blank, body given", {"project_id": "p", "summary": "  ", "body": "first\nsecond"}, "ok"),
    (
        "signal_append",
        "summary null (reads as absent), body given",
        {"project_id": "p", "summary": None, "body": "text"},
        "ok",
    ),
    (
        "signal_append",
        "project_id 'bench\\n' (regex `$` before a final newline)",
        {"project_id": "bench\n", "summary": "s"},
        "invalid_argument",
    ),
    (
        "signal_append",
        "session_id 's\\n'",
        {"project_id": "p", "summary": "s", "session_id": "s\n"},
        "invalid_argument",
    ),
    ("signal_append", "unknown member", {"project_id": "p", "summary": "s", "bogus": 1}, "invalid_argument"),
    (
        "signal_append",
        "payload with 2**70 inside",
        {"project_id": "p", "summary": "s", "payload": {"n": BIG}},
        "invalid_argument",
    ),
    (
        "signal_append",
        "payload 300 KiB",
        {"project_id": "p", "summary": "s", "payload": {"b": "x" * 300_000}},
        "payload_too_large",
    ),
    ("signal_append", "payload not an object", {"project_id": "p", "summary": "s", "payload": [1]}, "invalid_argument"),
    (
        "signal_append",
        "expires_in_seconds true",
        {"project_id": "p", "summary": "s", "kind": "approval", "expires_in_seconds": True},
        "invalid_argument",
    ),
    (
        "signal_append",
        "expires_in_seconds 2**70",
        {"project_id": "p", "summary": "s", "kind": "approval", "expires_in_seconds": BIG},
        "invalid_argument",
    ),
    ("feed_read", "limit true", {"project_id": "p", "limit": True}, "invalid_argument"),
    ("feed_read", "limit 5.0", {"project_id": "p", "limit": 5.0}, "invalid_argument"),
    ("feed_read", "limit '5'", {"project_id": "p", "limit": "5"}, "invalid_argument"),
    ("feed_read", "kind unknown in list", {"project_id": "p", "kind": ["signal", "nope"]}, "invalid_argument"),
    ("inbox_wait", "wait_seconds NaN", {"wait_seconds": float("nan")}, "invalid_argument"),
    ("inbox_wait", "wait_seconds Infinity", {"wait_seconds": float("inf")}, "invalid_argument"),
    ("inbox_wait", "wait_seconds 5 (an int for a float)", {"wait_seconds": 5}, "ok"),
    (
        "brain_put",
        "path 604 chars, 604 bytes",
        {"path": "/fs/" + "a" * 600, "value": "v", "store": "session"},
        "invalid_argument",
    ),
    (
        "brain_put",
        "path 2000 chars canonicalising to 8",
        {"path": "/fs/" + "./" * 998 + "a", "value": "v", "store": "session"},
        "ok",
    ),
    (
        "brain_put",
        "path 300 chars of 2-byte UTF-8",
        {"path": "/fs/" + "é" * 300, "value": "v", "store": "session"},
        "invalid_argument",
    ),
    (
        "brain_put",
        "value 4 MiB + 1 byte",
        {"path": "/kv/k", "value": "v" * (4 * 2**20 + 1), "store": "session"},
        "payload_too_large",
    ),
    (
        "brain_put",
        "session as {agent, name}",
        {"path": "/kv/k", "value": "v", "store": "session", "session": {"agent": "a", "name": "n"}},
        "ok",
    ),
]


def refusal_of(check: Check, args: dict[str, Any]) -> Refusal | None:
    try:
        check(args)
    except Refusal as refused:
        return refused
    return None


def per_call_us(check: Check, args: dict[str, Any], calls: int) -> float:
    # CPU time of this process, not wall time: on a shared machine a wall clock also counts the
    # time other work held the core, which moved the medians by a factor of two between runs.
    start = time.process_time_ns()
    for _ in range(calls):
        try:  # noqa: SIM105 (contextlib.suppress would add its own cost to every timed call)
            check(args)
        except Refusal:
            pass
    return (time.process_time_ns() - start) / calls / 1000


def timings(candidates: dict[str, vm.Candidate], rounds: int, calls: int) -> dict[tuple[str, str], float]:
    """Median µs per call for every (case label, candidate), candidates alternating within each
    round and their order rotated between rounds, so drift of a shared machine lands on all."""
    samples: dict[tuple[str, str], list[float]] = {}
    names = list(candidates)
    for r in range(rounds):
        order = names[r % len(names) :] + names[: r % len(names)]
        for op, label, args, _ in CASES:
            for name in order:
                check = candidates[name].checks[op]
                samples.setdefault((label, name), []).append(per_call_us(check, args, calls))
    return {key: statistics.median(values) for key, values in samples.items()}


def print_timings(candidates: dict[str, vm.Candidate], med: dict[tuple[str, str], float]) -> None:
    names = list(candidates)
    print("| request | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for _, label, _, _ in CASES:
        print(f"| {label} | " + " | ".join(f"{med[(label, n)]:.1f}" for n in names) + " |")


def build_costs(rounds: int) -> None:
    """Once at start: defining the models (pydantic builds a core schema per class) and
    generating the four MCP input schemas from them."""
    print("\n| candidate | define the 4 request types, ms | generate the 4 JSON Schemas, ms |")
    print("|---|---|---|")
    for name, factory in vm.factories().items():
        build, gen = [], []
        for _ in range(rounds):
            start = time.process_time()
            candidate = factory()
            middle = time.process_time()
            for op in OPS:
                candidate.schema(op)
            build.append((middle - start) * 1000)
            gen.append((time.process_time() - middle) * 1000)
        print(f"| {name} | {statistics.median(build):.2f} | {statistics.median(gen):.2f} |")


def edge_table(candidates: dict[str, vm.Candidate]) -> None:
    names = list(candidates)
    print("\n| edge | wanted | " + " | ".join(names) + " |")
    print("|---|---|" + "---|" * len(names))
    for op, label, args, wanted in EDGES:
        cells = [outcome(candidates[n].checks[op], args) for n in names]
        print(f"| {op}: {label} | {short(wanted)} | " + " | ".join(cells) + " |")


def short(code: str) -> str:
    return {"ok": "ok", "invalid_argument": "400", "payload_too_large": "413"}.get(code, code)


def outcome(check: Check, args: dict[str, Any]) -> str:
    try:
        refused = refusal_of(check, args)
    except Exception as exc:  # a candidate that breaks on an input is a finding, not a crash
        return f"raised {type(exc).__name__}"
    if refused is None:
        return "ok"
    echoed = " ECHOES VALUE" if "ZZZZZZZZ" in refused.message or "xxxxxxxx" in refused.message else ""
    return f"{short(refused.code)} `{refused.field}`{echoed}"


def messages(candidates: dict[str, vm.Candidate]) -> None:
    """How each names a wrong member (the message a model reads)."""
    samples: list[tuple[str, dict[str, Any]]] = [
        ("signal_append", {"project_id": "p", "summary": 5}),
        ("signal_append", {"project_id": "p", "summary": "Z" * 5000}),
        ("feed_read", {"project_id": "p", "kind": ["signal", "nope"]}),
        ("signal_append", {"project_id": "p", "summary": "s", "bogus": 1}),
    ]
    print("\nMessages:")
    for name, candidate in candidates.items():
        for op, args in samples:
            refused = refusal_of(candidate.checks[op], args)
            text = refused.message if refused else "(accepted)"
            print(f"  {name:12} {op}: {text[:160]}")


def schema_report(candidates: dict[str, vm.Candidate]) -> None:
    print("\n| schema | titles | $defs/$ref | null types | additionalProperties false | summary limit stated as |")
    print("|---|---|---|---|---|---|")
    for name, candidate in candidates.items():
        rows = [(name, candidate.schema)]
        if candidate.raw_schema is not None:
            rows.append((f"{name} (library's own output)", candidate.raw_schema))
        for label, make in rows:
            stats = {"titles": 0, "refs": 0, "nulls": 0}
            closed = True
            for op in OPS:
                schema = make(op)
                Draft202012Validator.check_schema(schema)
                walk(schema, stats)
                closed = closed and schema.get("additionalProperties") is False
            summary_max = find_max_length(make("signal_append").get("properties", {}).get("summary", {}))
            print(f"| {label} | {stats['titles']} | {stats['refs']} | {stats['nulls']} | {closed} | {summary_max} |")
    print("\nWhere a client validating against the published schema decides otherwise than the hub:")
    for name, candidate in candidates.items():
        refuses, accepts = disagreements(candidate)
        print(f"  {name}: schema refuses what the hub accepts: {refuses or 'none'}")
        print(f"  {' ' * len(name)}  schema accepts what the hub refuses: {accepts or 'none'}")


def walk(node: Any, stats: dict[str, int]) -> None:
    if isinstance(node, Mapping):
        stats["titles"] += "title" in node
        stats["refs"] += ("$ref" in node) + ("$defs" in node)
        stats["nulls"] += node.get("type") == "null" or (isinstance(node.get("type"), list) and "null" in node["type"])
        for value in node.values():
            walk(value, stats)
    elif isinstance(node, list):
        for value in node:
            walk(value, stats)


def find_max_length(node: Any) -> Any:
    """How the summary's limit is stated: `maxLength N` or `x-max-chars-trimmed N`."""
    if isinstance(node, Mapping):
        for key in ("maxLength", "x-max-chars-trimmed"):
            if key in node:
                return f"{key} {node[key]}"
        return next((m for v in node.values() if (m := find_max_length(v)) is not None), None)
    if isinstance(node, list):
        return next((m for v in node if (m := find_max_length(v)) is not None), None)
    return None


def disagreements(candidate: vm.Candidate) -> tuple[str, str]:
    """Edges where a client validating against the published schema would decide otherwise than
    the hub: (refused by the schema though the hub accepts, accepted though the hub refuses)."""
    refuses: list[str] = []
    accepts: list[str] = []
    for op, label, args, _ in EDGES:
        if label.startswith("value 4 MiB"):
            continue  # 4 MiB through a pure-Python validator: slow, and a byte limit no schema states
        schema_ok = Draft202012Validator(candidate.schema(op)).is_valid(args)
        hub_ok = refusal_of(candidate.checks[op], args) is None
        if schema_ok != hub_ok:
            (accepts if schema_ok else refuses).append(label)
    return "; ".join(refuses), "; ".join(accepts)


def rest_path(rounds: int, calls: int) -> None:
    """REST parses the body bytes: JSON decode then validate, or the library's own decode into the type."""
    body = b'{"project_id": "bench", "summary": "progress", "payload": {"tests": 514}}'
    runs = vm.rest_decoders()
    samples: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(rounds):
        for name, decode in runs.items():
            start = time.process_time_ns()
            for _ in range(calls):
                decode(body)
            samples[name].append((time.process_time_ns() - start) / calls / 1000)
    print("\nREST body bytes to a checked signal_append request, µs of CPU per call:")
    for name, values in samples.items():
        print(f"  {name:40} {statistics.median(values):6.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15, help="alternating rounds (median reported)")
    parser.add_argument("--calls", type=int, default=2000, help="calls per case per round")
    args = parser.parse_args()
    candidates = {name: factory() for name, factory in vm.factories().items()}
    have_msgspec = importlib.util.find_spec("msgspec") is not None
    versions = vm.versions()
    print(f"versions: {versions}; msgspec {'installed' if have_msgspec else 'not installed: skipped'}")
    print(
        f"\nµs of CPU per validation, median of {args.rounds} rounds of {args.calls} calls "
        f"(load average {os.getloadavg()[0]:.2f}):\n"
    )
    print_timings(candidates, timings(candidates, args.rounds, args.calls))
    build_costs(max(3, args.rounds // 3))
    edge_table(candidates)
    messages(candidates)
    schema_report(candidates)
    rest_path(args.rounds, args.calls)


if __name__ == "__main__":
    main()
