"""The official MCP conformance suite passes every scenario that applies to the hub.

Runs tools/mcp-conformance/run.py, which installs the pinned npm package with Node from PyPI,
starts a hub, and runs each scenario at each protocol revision it covers, every run in one Node
process (tools/mcp-conformance/scenarios.mjs; about 4 s of CPU). The runner
counts a skipped scenario as a failure; the unit tests below pin that down without Node.
"""

from __future__ import annotations

import asyncio
import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

RUNNER = Path(__file__).resolve().parents[2] / "tools" / "mcp-conformance" / "run.py"
SKILLS = ("sep-2640-skills-enumeration", "sep-2640-skills-manifest", "sep-2640-skills-directory")


def load_runner() -> ModuleType:
    # The runner lives in a folder with a hyphen, so it is loaded by path rather than imported.
    spec = importlib.util.spec_from_file_location("mcp_conformance_run", RUNNER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def check(check_id: str, status: str) -> dict[str, Any]:
    return {"id": check_id, "status": status, "errorMessage": None}


@pytest.mark.conformance
def test_official_conformance_suite_passes() -> None:
    done = subprocess.run([sys.executable, str(RUNNER)], capture_output=True, text=True, timeout=600, check=False)
    summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert summary.endswith("s)") and " 0 failed" in summary
    assert "FAIL " not in done.stdout
    assert "SKIPPED: scenario" not in done.stdout
    # The skills scenarios are extension scenarios the suite skips at any --spec-version unless
    # forced: each must have run at both revisions with checks that succeeded.
    for name in SKILLS:
        for version in ("2025-11-25", "2026-07-28"):
            line = re.search(rf"^PASS  {name} @ {version}  \(.*?(\d+) success[;)]", done.stdout, re.M)
            assert line and int(line.group(1)) > 0, f"{name} @ {version} did not run:\n{done.stdout[-4000:]}"


def test_a_skipped_scenario_is_a_failure() -> None:
    run = load_runner()
    text = "SKIPPED: scenario 'sep-2640-skills-manifest' is not applicable at spec version 2025-11-25"
    verdict = run.Verdict("sep-2640-skills-manifest", "2025-11-25", 0, text, [])
    assert not verdict.ok
    assert "the suite skipped the scenario" in verdict.problems


def test_a_skipped_check_is_a_failure_unless_listed_not_applicable() -> None:
    run = load_runner()
    listed = check("sep-2640-skills-get-cache-attributes", "SKIPPED")
    stray = check("sep-2640-skills-list-implemented", "SKIPPED")
    passed = check("wire-schema-valid", "SUCCESS")
    assert run.Verdict("x", "2025-11-25", 0, "", [passed, listed]).ok
    assert not run.Verdict("x", "2026-07-28", 0, "", [passed, listed]).ok  # listed only for 2025-11-25
    assert not run.Verdict("x", "2025-11-25", 0, "", [passed, stray]).ok


def test_a_run_with_no_successful_check_or_a_failed_check_fails() -> None:
    run = load_runner()
    assert not run.Verdict("x", None, 0, "", []).ok
    assert not run.Verdict("x", None, 0, "", [check("a", "SUCCESS"), check("b", "FAILURE")]).ok
    assert not run.Verdict("x", None, 1, "", [check("a", "SUCCESS")]).ok


def test_the_extension_scenarios_run_forced() -> None:
    run = load_runner()
    assert set(SKILLS) <= run.EXTENSIONS
    assert all(run.SCENARIOS[name] == ("2025-11-25", "2026-07-28") for name in SKILLS)


@pytest.mark.conformance
def test_one_node_process_gives_each_run_its_own_verdict(tmp_path: Path) -> None:
    """The runner's single Node process (scenarios.mjs) keeps runs apart: a scenario skipped at a
    revision it does not apply to, a scenario the suite does not know, and a scenario against a hub
    that is not there each fail on their own, with their own output and exit status, in order."""
    run = load_runner()
    run.install()
    runs = [("server-stateless", run.HANDSHAKE), ("no-such-scenario", None), ("ping", run.HANDSHAKE)]

    async def verdicts() -> list[tuple[str, Any, str]]:
        return [
            (name, verdict, text)
            async for name, _, verdict, text in run.run_all(runs, "http://127.0.0.1:9/mcp", tmp_path)
        ]

    got = asyncio.run(verdicts())
    assert [name for name, _, _ in got] == [name for name, _ in runs]
    (_, skipped, skipped_text), (_, unknown, unknown_text), (_, ping, ping_text) = got
    assert skipped.problems == ["the suite skipped the scenario", "no check succeeded (no checks.json, or nothing ran)"]
    assert "SKIPPED: scenario 'server-stateless'" in skipped_text and "no-such-scenario" not in skipped_text
    assert "the suite exited 1" in unknown.problems and "no-such-scenario" in unknown_text
    assert "SKIPPED" not in unknown_text
    assert "the suite exited 1" in ping.problems and any(p.startswith("ping failed") for p in ping.problems)
    assert "Running client scenario 'ping'" in ping_text and "no-such-scenario" not in ping_text
