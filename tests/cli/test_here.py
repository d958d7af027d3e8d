"""The in-process runner (`tests.cli.here`) the command-line tests mostly use answers what a real
`hub-cli` process answers (exit status, stdout, stderr, byte for byte) and leaves the test process as
it found it."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.cli.conftest import cli, cli_env
from tests.cli.here import cli_here, exit_status

pytestmark = pytest.mark.anyio


def cases(tmp_path: Path) -> list[tuple[dict[str, str], tuple[str, ...], bytes]]:
    broken = tmp_path / "broken.toml"
    broken.write_text("[hub\nnot toml", encoding="utf-8")
    unknown = tmp_path / "unknown.toml"
    unknown.write_text('[hub]\nbnd = "x"\n', encoding="utf-8")
    plain = cli_env(tmp_path)
    local = cli_env(tmp_path, HUB_DATA_DIR=str(tmp_path / "data"), HUB_PROJECT="demo")
    return [
        (plain, ("--help",), b""),  # typer's help on stdout, 0
        (plain, ("kb", "put", "x.md", "-", "--nonsense"), b""),  # typer's usage error on stderr, 2
        ({**plain, "HUB_CONFIG": str(unknown)}, ("config", "--check"), b""),  # our message on stderr, 78
        ({**plain, "HUB_CONFIG": str(broken)}, ("project", "list"), b""),  # the settings refused, 78
        (local, ("project", "list", "--plain"), b""),  # an empty local hub: nothing printed, 0
        (local, ("kb", "put", "x.md", "-"), b"caf\xc3\xa9"),  # stdin read, refused: no project, 1
        (local, ("kb", "put", "x.md", "-"), b"\xc3("),  # stdin not UTF-8: 2
        ({**local, "HUB_AGENT_ID": "Not A Label"}, ("project", "create", "--id", "x"), b""),  # 78
    ]


async def test_the_same_answers_as_a_process(tmp_path: Path) -> None:
    for env, args, stdin in cases(tmp_path):
        assert await cli_here(env, *args, stdin=stdin) == await cli(env, *args, stdin=stdin), args


async def test_the_process_state_is_put_back(tmp_path: Path) -> None:
    before = (sys.argv, dict(os.environ), sys.stdin, sys.stdout, sys.stderr)
    env = cli_env(tmp_path, HUB_DATA_DIR=str(tmp_path / "data"), HUB_PROJECT="elsewhere")
    run = await cli_here(env, "kb", "get", stdin=b"ignored")
    assert (run.code, run.out, run.err) == (1, "", "hub-cli kb: not_found: project 'elsewhere' not found\n")
    assert (sys.argv, dict(os.environ), sys.stdin, sys.stdout, sys.stderr) == before


@pytest.mark.parametrize(("code", "status"), [(None, 0), (0, 0), (2, 2), (78, 78), (256, 0), (-1, 255), ("bye", 1)])
def test_exit_status_as_the_interpreter_sets_it(code: object, status: int, capsys: pytest.CaptureFixture[str]) -> None:
    assert exit_status(code) == status
    assert capsys.readouterr().err == ("bye\n" if code == "bye" else "")
