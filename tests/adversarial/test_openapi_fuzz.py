"""The REST API fuzzed from its own OpenAPI document by schemathesis, every check, bounded.

A real `hub-cli serve` on a free loopback port; the schemathesis CLI walks every operation (but the
stream, which stays open) with positive data (the document's own values: each must be accepted,
or refused only for a reason the document allows: 401, 403, 404, 409, 429) and negative data (each
breaking the document somewhere: each must be refused), in the coverage phase (every boundary the
document states: each enum value and one past it, minLength - 1, a wrong type, a missing member, an
unsupported method, no credentials) and the fuzzing phase (`EXAMPLES` drawn cases an operation).
Every built-in check runs (`tests/adversarial/schemathesis.toml`: the few exclusions there, one
check for one operation each, are rules a document cannot state, docs/decisions.md), and one of
ours (`openapi_hooks.py`, held to its verdicts by `test_openapi_hooks.py`): a refused request left
hub.db as it was.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import httpx

from tests.foundation.test_serve_e2e import wait_ready

HERE = Path(__file__).parent
REPO = HERE.parent.parent  # on PYTHONPATH for the hub and for the hooks module the CLI imports
CONFIG = HERE / "schemathesis.toml"
ADMIN_TOKEN = "fuzz-admin-token-0123456789abcdef0123"
EXAMPLES = 6  # drawn cases an operation in the fuzzing phase (coverage adds its boundary cases)
SEED = 28  # the same walk every run
RUN_TIMEOUT = 480  # seconds of wall time on a loaded machine; the walk takes well under a minute of CPU


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def seed(url: str) -> None:
    """Something for the generated requests to find: a project, an agent with a grant."""
    auth = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    with httpx.Client(base_url=url, headers=auth, timeout=10) as http:
        assert http.post("/api/v1/projects", json={"id": "demo"}).status_code == 201
        assert http.post("/api/v1/agents", json={"id": "bot"}).status_code == 201
        assert http.post("/api/v1/agents/bot/grants", json={"project_id": "demo"}).status_code == 201


def test_the_rest_api_holds_to_its_document_under_every_check(tmp_path: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("HUB_")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
    env.update(
        HUB_CONFIG=str(tmp_path / "config.toml"),
        HUB_DATA_DIR=str(tmp_path / "data"),
        HUB_BIND=f"127.0.0.1:{port}",
        HUB_ADMIN_TOKEN=ADMIN_TOKEN,
        HUB_MIN_FREE_BYTES="0",
        HUB_LOG_LEVEL="warning",
        HUB_INBOX_OPEN_PER_PROJECT="0",
        HUB_INBOX_OPEN_PER_AGENT="0",
    )
    with (
        open(tmp_path / "hub.log", "wb") as log,
        subprocess.Popen([sys.executable, "-m", "hubcli", "serve"], env=env, stdout=log, stderr=log) as hub,
    ):
        try:
            wait_ready(url, within=30)
            seed(url)
            run = subprocess.run(
                [
                    str(Path(sys.executable).with_name("st")),
                    "--config-file",
                    str(CONFIG),
                    "run",
                    f"{url}/api/v1/openapi.json",
                    "-H",
                    f"Authorization: Bearer {ADMIN_TOKEN}",
                    "--mode",
                    "all",
                    "--phases",
                    "coverage,fuzzing",
                    "-n",
                    str(EXAMPLES),
                    "-w",
                    "1",
                    "--seed",
                    str(SEED),
                    "--generation-database",
                    "none",
                    "--continue-on-failure",
                    "--exclude-path",
                    "/api/v1/stream",
                    "--request-timeout",
                    "30",
                    "--no-color",
                    "--output-truncate",
                    "false",
                ],
                env={
                    **env,
                    "SCHEMATHESIS_HOOKS": "tests.adversarial.openapi_hooks",
                    "HUB_FUZZ_DB": str(tmp_path / "data" / "hub.db"),
                },
                capture_output=True,
                text=True,
                timeout=RUN_TIMEOUT,
                cwd=tmp_path,
            )  # its cache stays there
        finally:
            hub.terminate()
            hub.wait(30)
    out = run.stdout + run.stderr
    assert run.returncode == 0, out[-12000:]
    # Every operation of the document but the stream was tested, and thousands of cases ran.
    tested = re.search(r"Tested: (\d+)", out)
    cases = re.search(r"(\d+) generated, (\d+) passed", out)
    assert tested and int(tested.group(1)) >= 75, out[-3000:]
    assert cases and int(cases.group(1)) == int(cases.group(2)) >= 2000, out[-3000:]
