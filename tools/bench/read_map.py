"""What the store readers' memory map buys: one bench run with each map size in turn (A B C A B C).

    .venv/bin/python -m tools.bench.read_map --maps 0,16M,2G --runs 3 -- \\
        tools.bench.search --scale 0.02 --no-semantic --queries-only --reads 200 --data /tmp/corpus

Each run is a fresh process that sets the pooled readers' `PRAGMA mmap_size`
(`hubcore.store.readers.READ_MMAP_BYTES`) before the bench module (given by its dotted name) runs
as `__main__`, and prints the process's CPU time and memory when it exits (VmHWM and VmRSS, and how VmRSS
splits into RssAnon, the process's own memory, and RssFile, resident pages of mapped files).
The map sizes alternate run by run, since the shared machine's load drifts by more than the map
moves a query. Every table row the bench prints (a markdown row whose first cell names it) is
collected, and each numeric cell's median over the runs is reported per map size, beside the
memory medians and the load average at the start and the end.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MIB = 1024 * 1024
SIZES = {"": 1, "K": 1024, "M": MIB, "G": 1024 * MIB}
NUMBER = re.compile(r"^-?\d[\d,]*(?:\.\d+)?$")
MEMORY = "read-map memory:"
CPU = "read-map cpu seconds:"
# Runs in the child: set the readers' map, report memory at exit, run the bench as a script.
CHILD = f"""
import atexit, os, runpy, sys
import hubcore.store.readers as readers
readers.READ_MMAP_BYTES = int(sys.argv[1])
def memory():
    fields = dict(line.split(":", 1) for line in open("/proc/self/status") if ":" in line)
    kib = {{k: int(fields[k].split()[0]) for k in ("VmHWM", "VmRSS", "RssAnon", "RssFile", "RssShmem")}}
    cpu = os.times()
    print("{CPU}", f"{{(cpu.user + cpu.system):.3f}}", flush=True)
    print("{MEMORY}", " ".join(f"{{k}}={{v}}" for k, v in kib.items()), flush=True)
atexit.register(memory)
module = sys.argv[2]
sys.argv = [module, *sys.argv[3:]]
runpy.run_module(module, run_name="__main__", alter_sys=True)
"""


def size(text: str) -> int:
    """`0`, `16M`, `2G`, `65536`: bytes."""
    match = re.fullmatch(r"(\d+)([KMG]?)", text.strip().upper())
    if match is None:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (say 0, 16M, 2G)")
    return int(match.group(1)) * SIZES[match.group(2)]


def label(n: int) -> str:
    for unit in ("G", "M", "K"):
        if n and n % SIZES[unit] == 0:
            return f"{n // SIZES[unit]} {unit}iB"
    return f"{n} B" if n else "no map"


def rows(output: str) -> dict[str, list[float]]:
    """Each markdown table row's numeric cells, keyed by its first cell; the memory line's KiB."""
    found: dict[str, list[float]] = {}
    for line in output.splitlines():
        if line.startswith(CPU):
            found["process CPU (s)"] = [float(line.split()[-1])]
            continue
        if line.startswith(MEMORY):
            found["memory (MiB)"] = [int(item.split("=")[1]) / 1024 for item in line.split()[2:]]
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) < 2 or set(cells[1]) <= set("-: "):
            continue
        numbers = [float(c.replace(",", "")) for c in cells[1:] if NUMBER.match(c)]
        if numbers:
            found[cells[0]] = numbers
    return found


def run_once(map_bytes: int, module: str, args: list[str]) -> str:
    path = os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), str(ROOT)) if p)  # a tree given first wins
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(map_bytes), module, *args],
        env={**os.environ, "PYTHONPATH": path},
        capture_output=True,
        text=True,
        check=False,
        timeout=3600,
    )
    if done.returncode != 0:
        raise SystemExit(f"{module} with a {label(map_bytes)} map failed (exit {done.returncode}):\n{done.stderr}")
    return done.stdout


def table(maps: list[int], runs: dict[int, list[dict[str, list[float]]]]) -> list[str]:
    names = list(dict.fromkeys(name for outputs in runs.values() for found in outputs for name in found))
    out = ["| row | " + " | ".join(label(m) for m in maps) + " |", "|---" * (len(maps) + 1) + "|"]
    for name in names:
        cells = []
        for m in maps:
            columns = [found[name] for found in runs[m] if name in found]
            width = min((len(c) for c in columns), default=0)
            medians = [statistics.median(c[i] for c in columns) for i in range(width)]
            cells.append(" / ".join(f"{v:.2f}" for v in medians) or "-")
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--maps", default="0,16M,2G", help="map sizes, comma-separated (0: no map)")
    parser.add_argument("--runs", type=int, default=3, help="runs of each map size (1-20)")
    parser.add_argument("--show", action="store_true", help="print every run's own output as well")
    parser.add_argument("bench", nargs=argparse.REMAINDER, help="-- the bench's module and its options")
    args = parser.parse_args(argv)
    bench = [a for a in args.bench if a != "--"] if args.bench[:1] == ["--"] else args.bench
    if not bench or not 1 <= args.runs <= 20:
        parser.error("name the bench module after --, and 1 to 20 runs")
    maps = [size(m) for m in args.maps.split(",")]
    module, options = bench[0], bench[1:]
    print(f"read map A/B: {module} {' '.join(options)}; {args.runs} runs of each of {', '.join(map(label, maps))}")
    print(f"load at the start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    runs: dict[int, list[dict[str, list[float]]]] = {m: [] for m in maps}
    for n in range(args.runs):
        for m in maps if n % 2 == 0 else reversed(maps):  # A B C C B A: neither goes first every time
            output = run_once(m, module, options)
            if args.show:
                print(f"\n--- run {n + 1}, {label(m)}\n{output}")
            runs[m].append(rows(output))
    print(
        "\nMedians over the runs (each cell: the row's numbers in the bench's order; memory: "
        "VmHWM / VmRSS / RssAnon / RssFile / RssShmem at exit):\n"
    )
    print("\n".join(table(maps, runs)))
    print(f"\nload at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
