"""How the suite runs fast: where its temporary files live, and how it is spread over xdist's four
workers (`pytest -n 4 --dist loadgroup --no-loadscope-reorder`, tools/test).

Four workers on a two-core machine: on two, the cores sat idle almost half the time (CPU 113% of
the two cores over a 463 s run), because most tests wait: on a browser drawing, on a `hub-cli serve`
or a `hub-cli` command they started, on a hub's answer. More workers fill that wait with another
test's work. Measured back to back on the browser tests' directories (270 tests, other helpers
running, docs/benchmarks.md, "Browser tests across workers"): 546 s on two workers, 471 s on three,
453 s on four under a heavier load. A worker costs its own collection, Chromium and hub (the two
together about 2 s of CPU); memory is not the limit on these machines (24 GiB).

Temporary files (every tmp_path, so every test hub's data directory, and whatever the hubs and
commands the tests start write under TMPDIR) go to /dev/shm, a tmpfs, unless the caller chose
TMPDIR or --basetemp: SQLite's fdatasync on this machine's disk takes 4 to 12 ms, a hub's first
start makes eight and each committed write more, so on disk the suite spends minutes waiting for
a durability no test can observe (no test pulls the power; a killed process loses nothing the
page cache holds, on tmpfs or disk alike).

A test that shares a fixture wider than itself (a module's or a package's: a module's served hub or
seeded data) goes with every test sharing it: they form one xdist group, so that fixture is set up
once, on one worker, and its tests run one after another. A fixture made once per worker (session
scope) binds nothing: the browser tests' hubs and Chromium (tests/webapp/conftest.py,
tests/browser/conftest.py, tests/chromium.py) are started by each worker's first test that asks and
kept to the end, so those tests spread over the workers like any other; they share a hub as they
always did (each with its own projects and agents), only not always the same neighbours. Every other
test is a unit of its own and goes to whichever worker is free, so no file's length decides how the
workers end.

Under loadgroup the units are queued longest first (by tests/durations.json, a recorded run's
seconds per test; a test not in it counts DEFAULT_SECS), so the last ones to start are short and
the workers finish together; the queue is the collection order, hence `--no-loadscope-reorder`,
which stops xdist from re-sorting it by test count. `--store-durations` records the run's seconds
into tests/durations.json (stale or missing entries only make the order a little worse).

Bytecode: the suite starts a few hundred Python processes (`hub-cli` for each command-line case,
`hub-cli serve`, the bench scripts), each importing some 300 of the hub's modules. Where
PYTHONDONTWRITEBYTECODE is set, every one of them compiled every module from source (about 0.1 s of
CPU a process). The suite then writes bytecode under a cache directory beside its temporary files
instead (PYTHONPYCACHEPREFIX, for itself and every process it starts), so the tree stays as clean as
the variable asked and each module is compiled once; a PYTHONPYCACHEPREFIX set by the caller is kept.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

DURATIONS = Path(__file__).with_name("durations.json")
DEFAULT_SECS = 0.3
SHARED_SCOPES = ("package", "module", "class")
TMPFS = Path("/dev/shm")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--store-durations",
        action="store_true",
        help="record each test's seconds (setup, call, teardown) into tests/durations.json",
    )


def shared_group(item: pytest.Item) -> str | None:
    """The node whose fixture this test shares with others (the widest one), or None."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return None
    widest: str | None = None
    for name in info.names_closure:
        defs = info.name2fixturedefs.get(name)
        if not defs:
            continue
        scope = defs[-1].scope
        if scope not in SHARED_SCOPES:
            continue
        if scope == "package":
            return f"package:{defs[-1].baseid or item.nodeid.split('::')[0].rsplit('/', 1)[0]}"
        node = item.nodeid.split("::")[0] if scope == "module" else item.nodeid.rsplit("::", 1)[0]
        if widest is None or scope == "module":
            widest = f"{scope}:{node}"
    return widest


def recorded() -> dict[str, float]:
    try:
        found: dict[str, float] = json.loads(DURATIONS.read_text())
    except (OSError, ValueError):
        return {}
    return found


def longest_first(items: list[pytest.Item], groups: dict[str, str]) -> list[pytest.Item]:
    """The items with each unit's together (in collection order), units by recorded seconds."""
    seconds = recorded()
    units: dict[str, list[pytest.Item]] = defaultdict(list)
    for item in items:
        units[groups.get(item.nodeid, item.nodeid)].append(item)

    def weight(unit: list[pytest.Item]) -> float:
        return sum(seconds.get(item.nodeid, DEFAULT_SECS) for item in unit)

    ordered = sorted(units.values(), key=weight, reverse=True)  # stable: equal weights keep their order
    return [item for unit in ordered for item in unit]


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook appends each group to its node id
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("dist", "no") != "loadgroup":
        return
    groups: dict[str, str] = {}
    for item in items:
        marker = item.get_closest_marker("xdist_group")
        if marker is not None:  # a test's own group, as xdist names it
            groups[item.nodeid] = str(marker.args[0] if marker.args else marker.kwargs.get("name", "default"))
            continue
        group = shared_group(item)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))
            groups[item.nodeid] = group
    items[:] = longest_first(items, groups)


class Recorder:
    """Sums each test's phases as reported to this process (the controller under xdist)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        nodeid = report.nodeid
        if "@" in nodeid and nodeid.rfind("@") > nodeid.rfind("]"):
            nodeid = nodeid.rsplit("@", 1)[0]  # loadgroup's suffix
        self.seconds[nodeid] += report.duration

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if getattr(session.config, "workerinput", None) is not None:
            return  # a worker: the controller writes
        merged: dict[str, Any] = {**recorded(), **{k: round(v, 2) for k, v in self.seconds.items()}}
        DURATIONS.write_text(json.dumps(dict(sorted(merged.items())), indent=0) + "\n")


def in_memory_tmp(config: pytest.Config) -> None:
    """TMPDIR on tmpfs for this process and everything it starts (xdist's workers, the hubs and
    commands of the tests), before the first tmp_path is made."""
    if "TMPDIR" in os.environ or config.getoption("basetemp") or not (TMPFS.is_dir() and os.access(TMPFS, os.W_OK)):
        return
    os.environ["TMPDIR"] = str(TMPFS)
    tempfile.tempdir = None  # gettempdir() reads TMPDIR again


def cached_bytecode() -> None:
    """Bytecode written under a cache directory outside the tree where PYTHONDONTWRITEBYTECODE
    forbade writing it beside the sources, for this process and everything it starts."""
    if not os.environ.get("PYTHONDONTWRITEBYTECODE"):
        return
    default = Path(tempfile.gettempdir()) / f"agent-hub-pycache-{os.getuid()}"
    prefix = os.environ.get("PYTHONPYCACHEPREFIX") or str(default)
    del os.environ["PYTHONDONTWRITEBYTECODE"]
    os.environ["PYTHONPYCACHEPREFIX"] = prefix
    sys.dont_write_bytecode = False
    sys.pycache_prefix = prefix


def untimed_hypothesis() -> None:
    """Hypothesis without its per-example deadline (200 ms by default) in every process: a deadline
    is a timed assertion, and on a loaded two-core machine one example of a pure-function property
    took 295 ms once and 0.3 ms again (a FlakyFailure, not a finding). Speed is the benches' to
    measure; a test's own `@settings` still decides anything else."""
    from hypothesis import settings

    settings.register_profile("agent-hub", deadline=None)
    settings.load_profile("agent-hub")


def pytest_configure(config: pytest.Config) -> None:
    untimed_hypothesis()
    if getattr(config, "workerinput", None) is not None:
        return  # a worker: it inherited the controller's TMPDIR and was given its basetemp
    in_memory_tmp(config)
    cached_bytecode()
    if config.getoption("store_durations"):
        config.pluginmanager.register(Recorder(), "store-durations")
