"""`hub-cli check`, `doctor` and `health`: their lines, exit codes and refusals.

`check` on a sound and a damaged directory, `check` refused a held directory and `health` on a
ready and a not-ready hub run real `hub-cli` processes; the rest (`health` unreachable or given
HTTPS among them) run in this process (`tests.cli.here`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hubcore.hub import lock_data_dir
from tests.backup.support import tree
from tests.cli.conftest import cli, cli_env
from tests.cli.here import cli_here
from tests.harness import test_settings as make_settings
from tests.mcp.live import free_port, live_hub
from tests.ops.support import Made, make_hub_dir

pytestmark = pytest.mark.anyio


@pytest.fixture
async def made(tmp_path: Path) -> Made:
    return await make_hub_dir(tmp_path / "data")


async def test_check_a_sound_then_a_damaged_directory(made: Made, tmp_path: Path) -> None:
    env = cli_env(tmp_path)
    run = await cli(env, "check", "--data-dir", str(made.root))
    assert run.code == 0, run.err
    assert run.out.splitlines()[-1] == f"check: {made.root} ok"
    made.blob_path.unlink()
    run = await cli(env, "check", "--data-dir", str(made.root))
    assert run.code == 1
    assert (
        f"problem: blobs/{made.blob[:2]}/{made.blob}: missing (artifact {made.artifact_id} version 1)"
        in run.out.splitlines()
    )
    assert run.out.splitlines()[-1] == f"check: 1 problem in {made.root}"


async def test_check_reads_the_configured_data_dir(made: Made, tmp_path: Path) -> None:
    made.kb.unlink()
    run = await cli_here(cli_env(tmp_path, HUB_DATA_DIR=str(made.root)), "check")
    assert run.code == 1
    assert run.out.splitlines()[0].startswith("problem: kb/web.db: missing")


async def test_check_refused_while_a_hub_holds_the_directory(made: Made, tmp_path: Path) -> None:
    lock = lock_data_dir(made.root)
    try:
        before = tree(made.root)
        run = await cli(cli_env(tmp_path), "check", "--data-dir", str(made.root))
        assert tree(made.root) == before
    finally:
        lock.close()
    assert run.code == 1 and run.out == ""
    assert "is held by a running hub: stop it to check the directory" in run.err


async def test_doctor_reports_and_writes_nothing(made: Made, tmp_path: Path) -> None:
    env = cli_env(tmp_path, HUB_MIN_FREE_BYTES="0")
    before = tree(made.root)
    run = await cli_here(env, "doctor", "--data-dir", str(made.root))
    assert run.code == 0, run.out + run.err
    assert tree(made.root) == before
    lines = run.out.splitlines()
    assert lines[-1] == f"doctor: {made.root} ok"
    assert any(line.startswith("id high-water mark: ") for line in lines)
    run = await cli_here(cli_env(tmp_path, HUB_MIN_FREE_BYTES=str(1 << 62)), "doctor", "--data-dir", str(made.root))
    assert run.code == 1
    assert any(line.startswith("problem: free space: ") for line in run.out.splitlines())
    assert tree(made.root) == before


async def test_health_ready_not_ready_unreachable_and_https(tmp_path: Path) -> None:
    env = cli_env(tmp_path)
    async with live_hub(make_settings(tmp_path / "ready")) as hub:
        run = await cli(env, "health", "--url", hub.base)
    assert run.code == 0, run.err
    assert run.out.startswith("ready: schema v")
    async with live_hub(make_settings(tmp_path / "full", min_free_bytes=1 << 62)) as hub:
        run = await cli(env, "health", "--url", hub.base + "/")
    assert run.code == 1
    assert run.out.startswith("not ready: HTTP 503: not ready: ") and run.out.rstrip().endswith("(leg free_space)")
    # Ready and not ready went through real processes (a container's HEALTHCHECK runs one); the
    # usage errors run here.
    run = await cli_here(env, "health", "--url", f"http://127.0.0.1:{free_port()}")
    assert run.code == 69 and "cannot reach the hub" in run.err
    run = await cli_here(env, "health", "--url", "https://127.0.0.1:8443")
    assert run.code == 2 and "plain HTTP only" in run.err


@pytest.mark.parametrize("command", ["check", "doctor", "health"])
async def test_help_reads_no_settings(command: str, tmp_path: Path) -> None:
    (tmp_path / "client.toml").write_text("[hub\nbroken", encoding="utf-8")
    run = await cli_here(cli_env(tmp_path), command, "--help")
    assert run.code == 0 and "Usage:" in run.out
    run = await cli_here(cli_env(tmp_path), command)
    assert run.code == 78
