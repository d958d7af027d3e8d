"""`hub-cli enrol` as a real process against a live hub: ask, wait for the human, keep the token."""

from __future__ import annotations

import os
import stat
import tomllib
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import pytest

from hubcore.config import HubSettings
from tests.cli.conftest import HUB_CLI, cli, cli_env
from tests.harness import ADMIN
from tests.mcp.live import LiveHub, live_hub

pytestmark = pytest.mark.anyio


@pytest.fixture
async def live(settings: HubSettings) -> AsyncIterator[LiveHub]:
    async with live_hub(settings) as hub:
        yield hub


async def pending_ids(live: LiveHub) -> list[str]:
    agents = (await live.http.get("/api/v1/agents", headers=ADMIN)).json()["agents"]
    return [a["id"] for a in agents if a["status"] == "pending"]


async def enrol_and_decide(live: LiveHub, env: dict[str, str], decision: str, *args: str) -> tuple[int, str, str]:
    """Run `hub-cli enrol` and, once its request waits, decide it as the human."""
    async with await anyio.open_process([HUB_CLI, "enrol", *args], env=env) as proc:
        with anyio.fail_after(30):
            while not await pending_ids(live):  # noqa: ASYNC110 (the process's request landing)
                await anyio.sleep(0.05)
        agent_id = (await pending_ids(live))[0]
        r = await live.http.post(f"/api/v1/enrol/{agent_id}/{decision}", headers=ADMIN)
        assert r.status_code == 200, r.text
        with anyio.fail_after(30):
            code = await proc.wait()
        assert proc.stdout is not None and proc.stderr is not None
        out = (await proc.stdout.receive()).decode() if code == 0 else ""
        err = b""
        async for chunk in proc.stderr:
            err += chunk
    return code, out, err.decode()


def config(path: Path) -> dict[str, Any]:
    return tomllib.loads(path.read_text())


async def test_admitted_saves_the_url_and_token_at_mode_0600(tmp_path: Path, live: LiveHub) -> None:
    env = cli_env(tmp_path)
    code, out, err = await enrol_and_decide(
        live, env, "approve", "--url", live.base, "--name", "Build Bot", "--id", "builder", "I watch the nightly builds"
    )
    assert (code, out) == (0, "builder\n"), err
    path = tmp_path / "client.toml"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    saved = config(path)["client"]
    assert saved["url"] == live.base
    r = await live.http.get("/api/v1/projects", headers={"Authorization": f"Bearer {saved['token']}"})
    assert r.status_code == 200 and "space-builder" in [p["id"] for p in r.json()["projects"]]
    agent = next(
        a for a in (await live.http.get("/api/v1/agents", headers=ADMIN)).json()["agents"] if a["id"] == "builder"
    )
    assert (agent["display_name"], agent["enrol_note"]) == ("Build Bot", "I watch the nightly builds")
    # Enrolling again over the configured token is refused without --force, before any request.
    run = await cli(env, "enrol", "--url", live.base, "again please")
    assert run.code == 2 and "--force" in run.err
    assert await pending_ids(live) == []
    code, out, _ = await enrol_and_decide(
        live, env, "approve", "--url", live.base, "--force", "--why", "again", "--name", "Build Bot"
    )
    assert (code, out) == (0, "build-bot\n")
    assert config(path)["client"]["token"] != saved["token"]


async def test_refused_exits_77_and_saves_nothing(tmp_path: Path, live: LiveHub) -> None:
    env = cli_env(tmp_path, HUB_URL=live.base)
    code, _out, err = await enrol_and_decide(live, env, "refuse", "--why", "let me in")
    assert code == 77 and "refused" in err
    assert not (tmp_path / "client.toml").exists()


async def test_usage_and_refusals(tmp_path: Path, live: LiveHub, settings: HubSettings) -> None:
    env = cli_env(tmp_path)
    cases = [
        ((), 78, "no hub named"),
        (("--url", live.base), 2, "say why"),
        (("--url", live.base, "--why", "w" * 201), 2, "at most 200"),
        (("--url", live.base, "--why", "one", "two"), 2, "give the reason once"),
        (("--url", live.base, "--why", "w" * 200), 1, "invalid_argument: why"),  # the hub takes under 200
        (("--url", live.base, "--id", "Not An Id", "ok"), 1, "invalid_argument: suggested_id"),
        (("--url", "http://127.0.0.1:9", "hello"), 69, "cannot reach the hub"),
    ]
    for args, code, words in cases:
        run = await cli(env, "enrol", *args)
        assert (run.code, words in run.err) == (code, True), (args, run)
        assert run.out == ""
    assert await pending_ids(live) == []
    assert not (tmp_path / "client.toml").exists()
    # A configured token (HUB_TOKEN) refuses too, before anything is sent.
    run = await cli(cli_env(tmp_path, HUB_TOKEN="hub_configured"), "enrol", "--url", live.base, "hello")
    assert run.code == 2 and await pending_ids(live) == []


async def test_a_closed_hub_refuses_with_exit_1(tmp_path: Path, settings: HubSettings) -> None:
    async with live_hub(replace(settings, enrol="off")) as live:
        run = await cli(cli_env(tmp_path), "enrol", "--url", live.base, "hello")
    assert run.code == 1 and "not_found: enrolment is closed" in run.err
