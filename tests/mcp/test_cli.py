"""`hub-cli call` and `hub-cli tools` against a live hub, with the spec's exit codes.

`call` runs as a real `hub-cli` process for a result (from an argument and from stdin) and for a
refusal (exit status 1, the error on stdout and stderr), through the process boundary; its other
refusals, `tools` and `--help` run in this process (`tests.cli.here`, the same entry point, held
to a real process by tests/cli/test_here.py)."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from tests.cli.here import cli_here
from tests.mcp.live import LiveHub, free_port
from tests.mcp.test_stdio import HUB_CLI, cli_env

pytestmark = pytest.mark.anyio


async def cli(env: dict[str, str], *args: str, stdin: bytes = b"") -> tuple[int, str, str]:
    result = await anyio.run_process([HUB_CLI, *args], env=env, check=False, input=stdin)
    return result.returncode, result.stdout.decode(), result.stderr.decode()


async def here(env: dict[str, str], *args: str) -> tuple[int, str, str]:
    run = await cli_here(env, *args)
    return run.code, run.out, run.err


async def test_call_prints_the_structured_result(tmp_path: Path, live: LiveHub) -> None:
    token = await live.make_agent("bot")
    env = cli_env(tmp_path, HUB_URL=live.base, HUB_TOKEN=token)
    code, out, _ = await cli(env, "call", "whoami")
    assert code == 0 and json.loads(out)["agent_id"] == "bot"
    code, out, _ = await cli(
        env, "call", "signal_append", "-", stdin=b'{"project_id": "space-bot", "summary": "from the shell"}'
    )
    assert code == 0 and json.loads(out)["event_id"]


async def test_call_exit_codes(tmp_path: Path, live: LiveHub) -> None:
    token = await live.make_agent("bot")
    env = cli_env(tmp_path, HUB_URL=live.base, HUB_TOKEN=token)
    code, out, err = await cli(env, "call", "feed_read", '{"project_id": "nowhere"}')
    assert code == 1 and json.loads(out)["error"]["code"] == "forbidden"
    assert err.startswith("hub-cli call: forbidden: project 'nowhere'")
    # The other refusals in this process (the refusal above and the two cases of the test before
    # went through a real process's exit path and pipes).
    code, out, err = await here(env, "call", "no_such_tool")
    assert code == 1 and json.loads(out)["error"]["code"] == "not_found"
    assert err.startswith("hub-cli call: not_found: no tool named 'no_such_tool'")
    code, out, err = await here(env, "call", "signal_append", '{"summary": "no project"}')
    assert code == 1 and json.loads(out)["error"]["details"] == {"argument": "project_id"}
    assert err.startswith("hub-cli call: invalid_argument: argument project_id: missing (required)")
    assert (await here(env, "call", "whoami", "{not json"))[0] == 2
    assert (await here(cli_env(tmp_path, HUB_URL=live.base, HUB_TOKEN="hub_bad"), "call", "whoami"))[0] == 77
    unreachable = cli_env(tmp_path, HUB_URL=f"http://127.0.0.1:{free_port()}", HUB_TOKEN=token)
    assert (await here(unreachable, "call", "whoami"))[0] == 69
    assert (await here(cli_env(tmp_path), "call", "whoami"))[0] == 78
    assert (await here(cli_env(tmp_path), "tools"))[0] == 78


async def test_tools_lists_every_tool(tmp_path: Path, live: LiveHub) -> None:
    token = await live.make_agent("bot")
    env = cli_env(tmp_path, HUB_URL=live.base, HUB_TOKEN=token)
    code, out, _ = await here(env, "tools")
    assert code == 0
    tools = json.loads(out)
    names = {t["name"] for t in tools}
    assert {
        "whoami",
        "version",
        "feed_read",
        "signal_append",
        "question_post",
        "answer_post",
        "inbox_read",
        "inbox_wait",
        "notify_subscribe",
        "notify_unsubscribe",
        "notify_list",
        "notify_wait",
    } <= names
    assert all(t["inputSchema"]["type"] == "object" and "outputSchema" in t for t in tools)
    code, out, _ = await here(env, "tools", "--compact")
    assert code == 0 and out.splitlines()[0].startswith("whoami")


async def test_help_reads_no_settings(tmp_path: Path) -> None:
    broken = tmp_path / "broken.toml"
    broken.write_text("this is [not toml", encoding="utf-8")
    env = cli_env(tmp_path, HUB_CONFIG=str(broken), HUB_URL="http://127.0.0.1:1")
    for command in ("call", "tools", "mcp"):
        for flag in ("--help", "-h"):
            code, out, _ = await here(env, command, flag)
            assert code == 0 and "Usage" in out
