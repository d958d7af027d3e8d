"""Benchmark driver: one benchmark against two code trees, run after run in turn (A B A B ...).

On the shared 2-core machine the load drifts by more than a restructuring should cost: the same
code measured ten minutes apart moved the MCP ratio from 0.76 to 0.66. So "before and after" is
measured here in one sitting: the same benchmark file (given once, so both trees are measured by
the same driver) is run against each tree's code in alternation, `--runs` times each, with the
tree first on PYTHONPATH and as the working directory (the hub server child process inherits
both). Every figure a run prints on a line holding "ratio", or as "median: N us", is collected
(round lines excepted) and the medians per tree are compared. Run it once with the same tree as A and B (an A/A run) to
see the noise floor before reading anything into an A/B difference.

    git worktree add /tmp/wt-before <commit>
    .venv/bin/python -m tools.bench.ab --a /tmp/wt-before --b . --runs 3 -- \\
        tools/bench/mcp_calls.py --waiters 0 --rounds 3
    .venv/bin/python -m tools.bench.ab --a /tmp/wt-before --b . --runs 3 -- \\
        tools/bench/actor.py --rounds 3 --no-ceiling
    .venv/bin/python -m tools.bench.ab --a /tmp/wt-before --b . --runs 3 -- tools/bench/mcp_cpu.py
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

FIGURE = re.compile(r"ratio\D*?(\d+\.\d+)|median: (\d+\.\d+) us")


def run_once(tree: Path, bench: Path, args: list[str]) -> str:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(
        [sys.executable, str(bench), *args], cwd=tree, env=env, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"{bench} failed in {tree} (exit {done.returncode}):\n{done.stdout}\n{done.stderr}")
    return done.stdout


def figures(output: str) -> dict[str, float]:
    """Every ratio the run printed, keyed by its section and the words before its line's colon."""
    found: dict[str, float] = {}
    section = ""
    for raw in output.splitlines():
        line = raw.strip()
        if line.startswith("==") or (raw and not raw.startswith(" ") and line.endswith(":")):
            section = re.split(r"[:,]", line.strip("= "))[0]
            continue
        match = FIGURE.search(line)
        if match is None or line.startswith("round"):
            continue
        label = line[: match.start()].split(":")[0].strip(" ,(") or "ratio"
        found[f"{section}: {label}" if section else label] = float(match.group(1) or match.group(2))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--a", type=Path, required=True, help="code tree A (before)")
    parser.add_argument("--b", type=Path, required=True, help="code tree B (after)")
    parser.add_argument("--runs", type=int, default=3, help="runs per tree, alternating")
    parser.add_argument("bench", help="the benchmark file, then its arguments after --")
    parser.add_argument("bench_args", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    bench = Path(args.bench).resolve()
    trees = {"A": args.a.resolve(), "B": args.b.resolve()}
    collected: dict[str, dict[str, list[float]]] = {"A": {}, "B": {}}
    for n in range(args.runs):
        for name, tree in trees.items() if n % 2 == 0 else reversed(trees.items()):
            for key, value in figures(run_once(tree, bench, args.bench_args)).items():
                collected[name].setdefault(key, []).append(value)
            print(f"run {n + 1} {name} done (load {os.getloadavg()[0]:.2f})", flush=True)
    print(f"\nA = {trees['A']}\nB = {trees['B']}\n{bench.name} {' '.join(args.bench_args)}, {args.runs} runs each\n")
    print("| figure | A runs | B runs | A median | B median | B / A |")
    print("|---|---|---|---|---|---|")
    for key, a_values in collected["A"].items():
        b_values = collected["B"].get(key, [])
        if not b_values:
            continue
        a_med, b_med = statistics.median(a_values), statistics.median(b_values)
        print(
            f"| {key} | {' '.join(f'{v:.2f}' for v in a_values)} | {' '.join(f'{v:.2f}' for v in b_values)} | "
            f"{a_med:.2f} | {b_med:.2f} | {b_med / a_med:.2f} |"
        )


if __name__ == "__main__":
    main()
