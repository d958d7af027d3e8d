"""Every benchmark runs as documented: as a script (`python tools/bench/X.py`) and as a module
(`python -m tools.bench.X`), from the checkout and from elsewhere. A module in tools/bench named
like a package (the old `mcp.py`) shadowed the `mcp` SDK for every bench run as a script."""

from __future__ import annotations

import importlib
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


def test_no_bench_module_shadows_an_installed_package() -> None:
    mine = {m.name for m in pkgutil.iter_modules([str(BENCH)])}
    everywhere_else = {m.name for m in pkgutil.iter_modules()}  # sys.path: the checkout, stdlib, the venv
    assert "mcp" in everywhere_else
    assert mine.isdisjoint(everywhere_else), mine & everywhere_else


@pytest.mark.parametrize("name", benches())
def test_a_bench_runs_as_a_script_from_anywhere(name: str, tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, str(BENCH / f"{name}.py"), "--help"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "usage:" in done.stdout


@pytest.mark.parametrize("name", benches())
def test_a_bench_imports_as_a_module(name: str) -> None:
    module = importlib.import_module(f"tools.bench.{name}")
    assert module.__package__ == tools.bench.__name__
    assert callable(module.main)
