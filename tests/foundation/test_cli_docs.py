"""docs/cli.md is the `hub-cli` reference generated from every command's --help: kept current."""

from __future__ import annotations

import typer.main

from hubcli.main import app
from tools import gen_cli_docs


def test_the_cli_reference_matches_the_commands() -> None:
    expected = gen_cli_docs.render()
    actual = gen_cli_docs.TARGET.read_text(encoding="utf-8") if gen_cli_docs.TARGET.exists() else ""
    assert actual == expected, "docs/cli.md is stale: run `python -m tools.gen_cli_docs` and commit it"


def test_every_command_has_a_section() -> None:
    page = gen_cli_docs.render()
    names = list(typer.main.get_command(app).commands)  # type: ignore[attr-defined]
    assert {"serve", "config", "mcp", "call", "tools"} <= set(names)
    for name in names:
        assert f"## `hub-cli {name}`" in page
        assert f"Usage: hub-cli {name} [OPTIONS]" in page
