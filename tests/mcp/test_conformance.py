"""The official MCP conformance suite passes every scenario that applies to the hub.

Runs tools/mcp-conformance/run.py, which installs the pinned npm package with Node from PyPI,
starts a hub, and runs each scenario at each protocol revision it covers (about 40 s).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

RUNNER = Path(__file__).resolve().parents[2] / "tools" / "mcp-conformance" / "run.py"


@pytest.mark.conformance
def test_official_conformance_suite_passes() -> None:
    done = subprocess.run([sys.executable, str(RUNNER)], capture_output=True, text=True, timeout=600, check=False)
    summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert summary.endswith("s)") and " 0 failed" in summary
    assert "FAIL " not in done.stdout
