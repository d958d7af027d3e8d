"""Settings: file, environment overrides, `config --path` and `config --check`, `--help`."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import astuple
from pathlib import Path
from typing import Any

import pytest

from hubcore.config import HUB_KEYS, ConfigError, check, config_path, load
from tests.cli.here import run_here

HUB_CLI = [sys.executable, "-m", "hubcli"]


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_without_a_file(tmp_path: Path) -> None:
    s = load({}, path=tmp_path / "none.toml")
    assert s.hub.bind == "127.0.0.1:8080" and s.hub.data_dir == "./data" and s.hub.admin_token is None
    assert s.hub.events_per_project == 1_000_000 and s.hub.notify_interval_secs == 60
    assert s.hub.min_free_bytes == 256 * 1024 * 1024


def test_file_then_environment(tmp_path: Path) -> None:
    f = write(
        tmp_path / "c.toml",
        '[hub]\nbind = "127.0.0.1:9000"\nevents_per_project = 10\n'
        'trust_proxy = ["10.0.0.1"]\n[client]\nurl = "http://h:1"\n',
    )
    s = load({}, path=f)
    assert (s.hub.bind, s.hub.events_per_project, s.hub.trust_proxy) == ("127.0.0.1:9000", 10, ["10.0.0.1"])
    assert s.client.url == "http://h:1"
    s = load(
        {
            "HUB_BIND": "127.0.0.1:9100",
            "HUB_EVENTS_PER_PROJECT": "5",
            "HUB_URL": "http://e:2",
            "HUB_TRUST_PROXY": "1.1.1.1, 2.2.2.2",
        },
        path=f,
    )
    assert (s.hub.bind, s.hub.events_per_project, s.hub.trust_proxy) == ("127.0.0.1:9100", 5, ["1.1.1.1", "2.2.2.2"])
    assert s.client.url == "http://e:2"


def test_every_setting_the_spec_names_is_recognised() -> None:
    spec_names = {
        "admin_token",
        "backup_dir",
        "integrity_sample_secs",
        "enrol",
        "trust_proxy",
        "enrol_pending_max",
        "enrol_pending_ttl_secs",
        "notify_url",
        "notify_token",
        "notify_interval_secs",
        "events_per_project",
        "min_free_bytes",
        "tls_cert",
        "tls_key",
        "data_dir",
        "bind",
        "public_url",
        "inbox_open_per_agent",
        "inbox_open_per_project",
        "prune_undo_secs",
    }
    assert spec_names <= set(HUB_KEYS)


@pytest.mark.parametrize(
    "text",
    [
        '[hub]\nevents_per_project = "many"\n',
        '[hub]\nbind = "nohost"\n',
        '[hub]\nenrol = "maybe"\n',
        '[hub]\ntls_cert = "a.pem"\n',
        "[hub\n",
    ],
)
def test_bad_values_are_config_errors(tmp_path: Path, text: str) -> None:
    with pytest.raises(ConfigError):
        load({}, path=write(tmp_path / "c.toml", text))


def test_check_names_unknown_keys(tmp_path: Path) -> None:
    f = write(tmp_path / "c.toml", '[hub]\nbnd = "x"\n[client]\ntokn = "y"\nurl = "http://h"\n[other]\nfree = 1\n')
    assert check({}, path=f) == [f"unknown key hub.bnd in {f}", f"unknown key client.tokn in {f}"]
    assert check({}, path=write(tmp_path / "ok.toml", '[hub]\nbind = "127.0.0.1:1"\n')) == []


def test_config_path_order(tmp_path: Path) -> None:
    assert config_path({"HUB_CONFIG": "/x/y.toml", "XDG_CONFIG_HOME": "/c"}) == Path("/x/y.toml")
    assert config_path({"XDG_CONFIG_HOME": "/c"}) == Path("/c/agent-hub/config.toml")


def run_cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    full_env = {**{k: v for k, v in os.environ.items() if not k.startswith("HUB_")}, **env}
    return subprocess.run([*HUB_CLI, *args], capture_output=True, text=True, env=full_env, timeout=60)


def test_cli_config_path_and_check(tmp_path: Path) -> None:
    f = write(tmp_path / "c.toml", '[hub]\nbind = "127.0.0.1:1"\n')
    r = run_cli("config", "--path", env={"HUB_CONFIG": str(f)})
    assert r.returncode == 0 and r.stdout.strip() == str(f)
    r = run_cli("config", "--check", env={"HUB_CONFIG": str(f)})
    assert r.returncode == 0
    write(f, '[hub]\nbind = "127.0.0.1:1"\nadmin_tokn = "x"\n')
    r = run_cli("config", "--check", env={"HUB_CONFIG": str(f)})
    assert r.returncode == 78 and "hub.admin_tokn" in r.stderr


def command_paths() -> list[list[str]]:
    """Every command and subcommand of hub-cli, as argument lists."""
    import typer

    from hubcli.main import app

    paths: list[list[str]] = []

    def walk(cmd: Any, prefix: list[str]) -> None:
        paths.append(prefix)
        if hasattr(cmd, "commands"):
            for name, sub in cmd.commands.items():
                walk(sub, [*prefix, name])

    walk(typer.main.get_command(app), [])
    return paths


# The command lines whose help a real process answers (the rest are answered in this process, by
# the same entry point: tests/cli/here.py): the program's, and `serve`'s, whose bare form skips the
# parser (hubcli/entry.py).
IN_A_PROCESS = ([], ["serve"])


def test_every_command_answers_help_without_reading_settings(tmp_path: Path) -> None:
    broken = write(tmp_path / "broken.toml", "[hub\nthis is not toml")
    env = {"HUB_CONFIG": str(broken), "HUB_URL": "http://127.0.0.1:9", "HUB_BIND": "nonsense"}
    full_env = {**{k: v for k, v in os.environ.items() if not k.startswith("HUB_")}, **env}
    paths = command_paths()
    assert ["serve"] in paths and ["config"] in paths
    for path in paths:
        for flag in ("--help", "-h"):
            if path in IN_A_PROCESS:
                r = run_cli(*path, flag, env=env)
                code, out, err = r.returncode, r.stdout, r.stderr
            else:
                code, out, err = astuple(run_here(full_env, (*path, flag), b""))
            assert code == 0, (path, err)
            assert "Usage" in out
