"""`hub-cli service --print`: the systemd unit it writes is valid (`systemd-analyze verify`, from
Debian's systemd package, which tools/setup installs for the suite), hardened (`systemd-analyze
security --offline`), and keeps the hub's graceful stop inside systemd's stop timeout."""

from __future__ import annotations

import configparser
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hubcli.service_cmd import STOP_MARGIN_SECS, render_unit

HUB_CLI = str(Path(sys.executable).with_name("hub-cli"))
ANALYZE = shutil.which("systemd-analyze")
needs_systemd = pytest.mark.skipif(ANALYZE is None, reason="systemd-analyze missing: tools/setup installs systemd")


def hub_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hubcli", *args], capture_output=True, text=True, timeout=60)


def unit_file(tmp_path: Path, *args: str) -> Path:
    run = hub_cli("service", "--print", *args)
    assert run.returncode == 0, run.stderr
    path = tmp_path / "agent-hub.service"  # verify wants the unit's own name
    path.write_text(run.stdout)
    return path


def service_section(text: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    section = ""
    for line in text.splitlines():
        if line.startswith("["):
            section = line.strip("[]")
        elif "=" in line and not line.startswith("#") and section == "Service":
            key, _, value = line.partition("=")
            found.setdefault(key, []).append(value)
    return found


def test_the_unit_runs_this_installation_hardened_with_its_state_in_one_place(tmp_path: Path) -> None:
    text = unit_file(tmp_path).read_text()
    service = service_section(text)
    assert service["ExecStart"] == [f"{Path(sys.executable).with_name('hub-cli')} serve"]
    assert service["DynamicUser"] == ["yes"] and service["StateDirectory"][0].split()[0] == "agent-hub"
    for key, value in (
        ("ProtectSystem", "strict"),
        ("NoNewPrivileges", "yes"),
        ("PrivateTmp", "yes"),
        ("ProtectHome", "yes"),
        ("Restart", "on-failure"),
    ):
        assert service[key] == [value], key
    env = dict(e.split("=", 1) for e in service["Environment"])
    assert env["HUB_CONFIG"] == "%S/agent-hub/config.toml" and env["HUB_DATA_DIR"] == "%S/agent-hub/data"
    grace = float(env["HUB_SHUTDOWN_GRACE_SECS"])
    assert float(service["TimeoutStopSec"][0]) >= grace + STOP_MARGIN_SECS  # the graceful stop fits
    assert "ReadWritePaths" not in service  # nothing writable beyond the state directory
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string(text)
    assert parser["Install"]["WantedBy"] == "multi-user.target"


def test_backups_go_beside_the_data_directory_in_the_state_directory(tmp_path: Path) -> None:
    service = service_section(unit_file(tmp_path).read_text())
    assert "HUB_BACKUP_DIR=%S/agent-hub/backups" in service["Environment"]
    assert service["StateDirectory"] == ["agent-hub agent-hub/backups"]  # made and owned for the service


@needs_systemd
def test_systemd_analyze_verifies_the_unit_without_a_warning(tmp_path: Path) -> None:
    assert ANALYZE is not None
    run = subprocess.run([ANALYZE, "verify", str(unit_file(tmp_path))], capture_output=True, text=True, timeout=60)
    # verify exits 0 on an unknown key or a bad value and only says so: any output is a finding.
    assert run.returncode == 0 and run.stderr == "" and run.stdout == "", run.stdout + run.stderr


@needs_systemd
def test_systemd_analyze_would_catch_a_broken_unit(tmp_path: Path) -> None:
    assert ANALYZE is not None
    bad = tmp_path / "agent-hub.service"
    bad.write_text(
        render_unit(Path(HUB_CLI))
        .replace("NoNewPrivileges=", "NoNewPrivilegez=")
        .replace("ProtectSystem=strict", "ProtectSystem=stricter")
    )
    run = subprocess.run([ANALYZE, "verify", str(bad)], capture_output=True, text=True, timeout=60)
    assert "NoNewPrivilegez" in run.stderr and "stricter" in run.stderr


@needs_systemd
def test_the_unit_exposure_is_low(tmp_path: Path) -> None:
    assert ANALYZE is not None
    # systemd's own exposure score (0 to 10, shown as 1.7 here): --threshold is that score times ten.
    run = subprocess.run(
        [ANALYZE, "security", "--offline=yes", "--threshold=20", str(unit_file(tmp_path))],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stdout[-2000:]
    assert "Overall exposure level for agent-hub.service: 1." in run.stdout


def test_without_print_it_is_a_usage_error_and_prints_no_unit() -> None:
    run = hub_cli("service")
    assert run.returncode == 2 and run.stdout == "" and "--print" in run.stderr


def test_a_hub_cli_under_a_home_directory_is_warned_about(tmp_path: Path) -> None:
    run = hub_cli("service", "--print", "--exec", "/home/me/.local/bin/hub-cli")
    assert run.returncode == 0 and "ExecStart=/home/me/.local/bin/hub-cli serve" in run.stdout
    assert "ProtectHome" in run.stderr
