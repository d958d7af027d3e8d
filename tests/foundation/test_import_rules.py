"""DESIGN section 1's import rules bite: ruff's banned-api (TID251) refuses a forbidden import in
each package, allows the one composition root, and the tree as it stands obeys them.

Each case hands ruff a one-line module on stdin under a path inside the package, so the package's
own ruff.toml applies and no file is written into the tree (other work may be running ruff there).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("hubcore", "hubhttp", "hubmcp", "hubcli")

FORBIDDEN = [
    ("hubcore/probe.py", "import quart"),
    ("hubcore/probe.py", "from quart import Quart"),
    ("hubcore/probe.py", "import werkzeug.exceptions"),
    ("hubcore/probe.py", "from hypercorn.config import Config"),
    ("hubcore/services/probe.py", "from mcp.server import Server"),
    ("hubcore/probe.py", "import mcp_types"),
    ("hubcore/store/probe.py", "import httpx"),
    ("hubcore/probe.py", "import typer"),
    ("hubcore/services/probe.py", "from hubhttp.problems import problem"),
    ("hubcore/probe.py", "import hubmcp.server"),
    ("hubcore/probe.py", "from hubcli import main"),
    ("hubhttp/probe.py", "from hubmcp.http import create_endpoint"),
    ("hubhttp/api/probe.py", "import hubmcp"),
    ("hubhttp/probe.py", "from hubcli.main import app"),
    ("hubmcp/probe.py", "from hubhttp.problems import problem"),
    ("hubmcp/tools/probe.py", "import hubhttp.context"),
    ("hubmcp/probe.py", "import hubcli"),
]

ALLOWED = [
    ("hubhttp/asgi.py", "from hubmcp.http import create_endpoint"),  # the composition root
    ("hubhttp/probe.py", "from hubcore.errors import HubError"),
    ("hubmcp/probe.py", "from hubcore.errors import HubError"),
    ("hubmcp/probe.py", "from mcp.server import Server"),
    ("hubcore/probe.py", "import anyio"),
    ("hubcore/services/probe.py", "from hubcore.errors import HubError"),
    ("hubcli/probe.py", "from hubhttp.asgi import HubASGI"),
    ("hubcli/probe.py", "from hubmcp.stdio import serve_standalone"),
]


def ruff(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "--select", "TID251", *args],
        cwd=ROOT,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize(("path", "source"), FORBIDDEN)
def test_a_forbidden_import_fails_ruff(path: str, source: str) -> None:
    result = ruff("--stdin-filename", path, "-", stdin=source + "\n")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "TID251" in result.stdout and "DESIGN section 1" in result.stdout


@pytest.mark.parametrize(("path", "source"), ALLOWED)
def test_an_allowed_import_passes_ruff(path: str, source: str) -> None:
    result = ruff("--stdin-filename", path, "-", stdin=source + "\n")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_tree_obeys_the_import_rules() -> None:
    result = ruff(*PACKAGES)
    assert result.returncode == 0, result.stdout + result.stderr
