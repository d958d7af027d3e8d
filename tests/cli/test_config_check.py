"""`hub-cli config --check`: every setting the spec and DESIGN name is known (the settings
dataclasses in hubcore/config.py are the one list); any other key under `[hub]` or `[client]` is
named and the exit is non-zero.

The command runs in this process (`tests.cli.here`); a real `hub-cli config --check` process, its
exit status 78 included, is `tests/foundation/test_config.py::test_cli_config_path_and_check`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hubcore.config import CLIENT_KEYS, HUB_KEYS, SECTIONS
from tests.cli.conftest import cli_env
from tests.cli.here import cli_here

pytestmark = pytest.mark.anyio

# Where the spec and DESIGN name a setting, with the variable they give it (`None`: none given,
# the rule HUB_<NAME> applies).
SPEC_HUB = {
    "admin_token": "HUB_ADMIN_TOKEN",
    "backup_dir": "HUB_BACKUP_DIR",
    "integrity_sample_secs": "HUB_INTEGRITY_SAMPLE_SECS",
    "enrol": None,
    "trust_proxy": None,
    "enrol_pending_max": None,
    "enrol_pending_ttl_secs": None,
    "notify_url": None,
    "notify_token": None,
    "notify_interval_secs": None,
    "events_per_project": "HUB_EVENTS_PER_PROJECT",
    "public_url": "HUB_PUBLIC_URL",
}
DESIGN_HUB = {
    "bind": None,
    "data_dir": "HUB_DATA_DIR",
    "min_free_bytes": None,
    "inbox_open_per_agent": None,
    "inbox_open_per_project": None,
    "prune_undo_secs": None,
    "streams_per_token": None,
    "synchronous": None,  # "a setting may raise it to FULL"
}
SPEC_CLIENT = {
    "url": "HUB_URL",
    "token": "HUB_TOKEN",
    "project": "HUB_PROJECT",
    "agent_id": "HUB_AGENT_ID",
    "timeout": "HUB_TIMEOUT",
}


@pytest.mark.parametrize(("section", "named"), [("hub", {**SPEC_HUB, **DESIGN_HUB}), ("client", SPEC_CLIENT)])
def test_every_named_setting_is_known_with_its_variable(section: str, named: dict[str, str | None]) -> None:
    keys = SECTIONS[section]
    assert set(named) <= set(keys)
    for name, env in named.items():
        assert keys[name].env == (env or f"HUB_{name.upper()}")


def toml_value(value: Any) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return repr(value)


async def test_a_file_naming_every_known_key_checks_clean(tmp_path: Path) -> None:
    lines = ["[hub]"] + [f"{k} = {toml_value(key.default)}" for k, key in HUB_KEYS.items() if key.default is not None]
    lines += [
        'admin_token = "secret"',
        'backup_dir = "/tmp"',
        'notify_url = "http://127.0.0.1:1"',
        'notify_token = "n"',
        'public_url = "https://hub.example"',
    ]
    lines += ["[client]"] + [
        f"{k} = {toml_value(key.default)}" for k, key in CLIENT_KEYS.items() if key.default is not None
    ]
    lines += ['url = "http://127.0.0.1:8080"', 'token = "t"', 'agent_id = "bot"', 'project = "demo"']
    config = tmp_path / "client.toml"
    config.write_text("\n".join(lines) + "\n", encoding="utf-8")
    run = await cli_here(cli_env(tmp_path), "config", "--check")
    assert (run.code, run.out, run.err) == (0, "config ok\n", "")


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ('[hub]\nbnd = "127.0.0.1:1"\n', ["hub.bnd"]),
        ('[client]\nurl = "http://h"\ntokn = "t"\n', ["client.tokn"]),
        (
            '[hub]\nevents_per_projec = 5\n[client]\nproject_id = "demo"\n',
            ["hub.events_per_projec", "client.project_id"],
        ),
        ("hub = 1\n", ["hub"]),
    ],
)
async def test_unknown_keys_are_named_with_a_non_zero_exit(tmp_path: Path, text: str, named: list[str]) -> None:
    config = tmp_path / "client.toml"
    config.write_text(text, encoding="utf-8")
    run = await cli_here(cli_env(tmp_path), "config", "--check")
    assert run.code == 78 and run.out == ""
    assert run.err.splitlines() == [f"hub-cli config: unknown key {name} in {config}" for name in named]


async def test_other_tables_and_environment_variables_are_left_alone(tmp_path: Path) -> None:
    """Only `[hub]` and `[client]` are the hub's: another tool's table in the same file is not a typo."""
    (tmp_path / "client.toml").write_text('[other]\nfree = 1\n[hub]\nbind = "127.0.0.1:1"\n', encoding="utf-8")
    run = await cli_here(cli_env(tmp_path, HUB_SOMETHING_ELSE="1"), "config", "--check")
    assert (run.code, run.out) == (0, "config ok\n")


async def test_a_bad_value_is_named(tmp_path: Path) -> None:
    (tmp_path / "client.toml").write_text('[client]\ntimeout = "soon"\n', encoding="utf-8")
    run = await cli_here(cli_env(tmp_path), "config", "--check")
    assert run.code == 78 and "client.timeout must be a number" in run.err
