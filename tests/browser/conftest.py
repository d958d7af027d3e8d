"""Browser tests: Debian's Chromium driven by Playwright (DESIGN section 8) against a real
`hub-cli serve`: one hub and one listener for each xdist worker, and the worker's browser
(tests/chromium.py), so these tests spread over the workers (tests/suite.py); each test has its own
context.

Artifacts are published the way an agent publishes them: `hub-cli call` over /mcp with an agent
token (the protected one encrypted by hub-cli). A loopback listener stands where a hostile artifact
would send what it stole, and records every connection that reaches it.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.catchers import Catcher, catching
from tests.foundation.test_serve_e2e import base_env, serve, wait_ready
from tests.mcp.test_stdio import HUB_CLI

ADMIN_TOKEN = "browser-admin-token-0123456789abcdef"
PASSWORD = "open sesame 42"

pytestmark = pytest.mark.browser


@pytest.fixture(scope="session")
def listener() -> Iterator[Catcher]:
    with catching("tcp") as found:
        yield found


@dataclass
class Hub:
    url: str
    data_dir: Path
    env: dict[str, str]

    def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """One tool call through `hub-cli call`, as an agent would make it."""
        done = subprocess.run(
            [HUB_CLI, "call", tool, "-"],
            env=self.env,
            input=json.dumps(arguments),
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
        assert done.returncode == 0, (done.stdout, done.stderr)
        result: dict[str, Any] = json.loads(done.stdout)
        return result

    def admin(self, method: str, path: str, body: Any = None) -> Any:
        """A REST call as the human."""
        with httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}, timeout=30) as http:
            r = http.request(method, path, json=body)
        assert r.is_success, r.text
        return r.json() if r.content else None


@pytest.fixture(scope="session")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hub]:
    tmp = tmp_path_factory.mktemp("browser-hub")
    env = base_env(tmp, HUB_ADMIN_TOKEN=ADMIN_TOKEN)
    with serve(env) as served:
        wait_ready(served.url)
        admin = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
        with httpx.Client(base_url=served.url, headers=admin, timeout=30) as http:
            assert http.post("/api/v1/agents", json={"id": "painter", "display_name": "Painter"}).status_code == 201
            token = http.post("/api/v1/agents/painter/token").json()["token"]
            assert http.post("/api/v1/projects", json={"id": "gallery"}).status_code == 201
        client_env = {k: v for k, v in os.environ.items() if not k.startswith("HUB_")}
        client_env.update({"HUB_CONFIG": str(tmp / "client.toml"), "HUB_URL": served.url, "HUB_TOKEN": token})
        yield Hub(served.url, tmp / "data", client_env)
        assert served.stop() == 0


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context()
    try:
        yield context.new_page()
    finally:
        context.close()
