"""Every benchmark runs as documented: as a script (`python tools/bench/X.py`) and as a module
(`python -m tools.bench.X`), from the checkout and from elsewhere. A module in tools/bench named
like a package (the old `mcp.py`) shadowed the `mcp` SDK for every bench run as a script."""

from __future__ import annotations

import importlib
import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import tools.bench

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "tools" / "bench"


def benches() -> list[str]:
    """The modules with a command line (a `__main__` guard); the rest are their helpers."""
    return sorted(p.stem for p in BENCH.glob("*.py") if 'if __name__ == "__main__":' in p.read_text())


def run_bench(cwd: Path, name: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`python tools/bench/<name>.py ARGS` from `cwd` (outside the checkout), its output captured."""
    return subprocess.run(
        [sys.executable, str(BENCH / f"{name}.py"), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def assert_reports(run: subprocess.CompletedProcess[str], *headings: str) -> None:
    """The bench succeeded and printed every one of its sections (named by a heading or a row)."""
    assert run.returncode == 0, run.stderr[-2000:]
    for heading in headings:
        assert heading in run.stdout, heading


def test_no_bench_module_shadows_an_installed_package() -> None:
    mine = {m.name for m in pkgutil.iter_modules([str(BENCH)])}
    everywhere_else = {m.name for m in pkgutil.iter_modules()}  # sys.path: the checkout, stdlib, the venv
    assert "mcp" in everywhere_else
    assert mine.isdisjoint(everywhere_else), mine & everywhere_else


# Runs each bench file as Python runs a script (its folder first on sys.path, `__name__` "__main__",
# no package), one after another in one interpreter started outside the checkout: a process a bench
# would cost about a second of CPU importing the hub again, 25 seconds for the lot. Between benches
# sys.path is put back as a fresh script's would be and every `tools` module is forgotten, so each
# bench's own path set-up (tools/bench/__init__.py) is what makes its `tools.bench` imports resolve.
AS_SCRIPTS = """
import contextlib, io, json, runpy, sys
pristine, results = sys.path[1:], {}  # without -c's own entry (the working directory)
for path in sys.argv[1:]:
    sys.path[:] = [path.rsplit("/", 1)[0], *pristine]
    for name in [m for m in sys.modules if m == "tools" or m.startswith("tools.")]:
        del sys.modules[name]
    sys.argv = [path, "--help"]
    out, err, code = io.StringIO(), io.StringIO(), 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            runpy.run_path(path, run_name="__main__")
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        except BaseException as exc:
            code, _ = 1, err.write(repr(exc))
    results[path] = [code, out.getvalue(), err.getvalue()]
print(json.dumps(results))
"""


def test_every_bench_runs_as_a_script_from_anywhere(tmp_path: Path) -> None:
    paths = [str(BENCH / f"{name}.py") for name in benches()]
    run = subprocess.run(
        [sys.executable, "-c", AS_SCRIPTS, *paths], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr[-3000:]
    results = json.loads(run.stdout.splitlines()[-1])
    failed = {path: err[-1500:] for path, (code, out, err) in results.items() if code != 0 or "usage:" not in out}
    assert len(results) == len(paths) >= 8 and not failed, failed


@pytest.mark.parametrize("name", benches())
def test_a_bench_imports_as_a_module(name: str) -> None:
    module = importlib.import_module(f"tools.bench.{name}")
    assert module.__package__ == tools.bench.__name__
    assert callable(module.main)


def test_the_search_bench_runs_quickly(tmp_path: Path) -> None:
    """tools/bench/search.py at a thousandth of its corpus: every section reports its figures."""
    run = run_bench(
        tmp_path,
        "search",
        *("--scale", "0.001", "--vocabulary", "500", "--reads", "2", "--rounds", "2"),
        *("--appends", "10", "--append-rounds", "1", "--search-every", "5", "--dir", str(tmp_path)),
    )
    assert_reports(
        run,
        "hub.db bytes per indexed event",
        "**all lexical queries**",
        "**all writes**",
        "`signal_append` throughput",
        "`mode=semantic` queries",
        "First search after a restart",
    )


def test_the_search_bench_keeps_its_corpus_for_the_next_run(tmp_path: Path) -> None:
    """`--data DIR` keeps the loaded corpus; the next run with the same options reuses it (no load),
    `--queries-only` times the queries alone, and a corpus of other options is refused."""

    def bench(*extra: str) -> subprocess.CompletedProcess[str]:
        kept = ("--vocabulary", "500", "--reads", "2", "--no-semantic", "--queries-only")
        return run_bench(tmp_path, "search", *kept, "--data", str(tmp_path / "kept"), *extra)

    first = bench("--scale", "0.001")
    assert_reports(first, "hub.db bytes per indexed event", "**all lexical queries**")
    assert "Reused" not in first.stdout and "**all writes**" not in first.stdout
    second = bench("--scale", "0.001")
    assert_reports(second, "Reused the corpus")
    assert "hub.db bytes per indexed event" not in second.stdout
    common = next(line for line in second.stdout.splitlines() if line.startswith("| admin: common word"))
    assert "(0 hits" not in common  # the kept index answers
    other = bench("--scale", "0.002")
    assert other.returncode != 0 and "holds a corpus of" in other.stderr


def test_the_backup_bench_runs_quickly(tmp_path: Path) -> None:
    """tools/bench/backup.py at a five-hundredth of its hub: the backup and both latency rows."""
    run = run_bench(tmp_path, "backup", "--size", "0.002", "--secs", "0.5", "--agents", "4", "--dir", str(tmp_path))
    assert_reports(run, "backup: ", "| without a backup |", "| during the backup |", "p99 during / without")


def test_the_integrity_bench_runs_quickly(tmp_path: Path) -> None:
    """tools/bench/integrity.py on a small hub.db: the check timings, both read rows, the check runs."""
    run = run_bench(tmp_path, "integrity", "--events", "2000", "--reads", "5", "--rounds", "1", "--dir", str(tmp_path))
    assert_reports(
        run,
        "| quick_check (a sample) |",
        "| without sampling |",
        "p99 during / without: ratio",
        "| second (search index matches) |",
    )


def test_the_knowledge_base_benches_run_quickly(tmp_path: Path) -> None:
    """tools/bench/kb.py at 100 pages and tools/bench/kb_sync.py at 30: every row reports."""
    run = run_bench(
        tmp_path,
        "kb",
        *("--pages", "100", "--writes", "3", "--reads", "3", "--cold", "2"),
        *("--churn", "10", "--churn-pages", "5", "--dir", str(tmp_path)),
    )
    assert_reports(
        run,
        "| page write, history kept |",
        "| lint, cold (first walk after a write) |",
        "| resources/list page of 100 |",
        "| PUT page, history kept |",
        "bytes per kept version",
    )
    sync = run_bench(tmp_path, "kb_sync", "--pages", "30", "--dir", str(tmp_path))
    assert_reports(sync, "local  export", "local  import (all new)", "REST   import again (no change)", "CPU hub-cli")


def test_the_webapp_bench_runs_quickly(tmp_path: Path) -> None:
    """tools/bench/webapp.py --quick (Chromium against a real hub): every section reports its figures.
    The quick run is the smallest that goes through every row's code (the Inbox at volume with two
    presses of Load more, the review screen's diffs at 1,000 lines); it measures nothing."""
    run = run_bench(tmp_path, "webapp", "--quick", "--dir", str(tmp_path))
    assert_reports(
        run,
        "| question to row |",
        "| baseline: the POST alone |",
        "| home |",
        "| inbox |",
        "| precache, gzipped as served (PNG as is) |",
        "compressed shell",
        "| keystroke to results painted (debounce",
        "| baseline: GET /api/v1/search alone |",
        "| page address to title, body and tree row painted |",
        "| baseline: the same reads alone over HTTP |",
        "| artifact opened to its frame painted |",
        "| unlock: PBKDF2 600,000 + AES-GCM in WebCrypto |",
        "| first paint, with a diagram |",
        "| the diagram drawn (mermaid fetched lazily) |",
        "1,000 lines in 100 files: first screen",
        "| the same: tap the 60th file's link to its lines painted |",
        "## The Inbox at volume: 120 waiting items",
        "| Load more, press to the next 50 rows painted (2 presses) |",
        "scrolling all 120 rows",
    )
