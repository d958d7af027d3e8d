"""`hub-cli service --print`: a hardened systemd unit that keeps the hub running (DESIGN section 11).

The unit runs `hub-cli serve` as a transient system user (`DynamicUser=`) whose only writable place
is its state directory, `/var/lib/agent-hub`: the config file (the first start writes the admin
token into it, mode 0600), the data directory and the online backups live there. Logs go to the journal (the hub writes
to stderr). The graceful stop is pinned in the unit (`HUB_SHUTDOWN_GRACE_SECS`) so that systemd's
`TimeoutStopSec` can sit above it: on SIGTERM the hub stops accepting, lets requests in flight finish
within the grace and closes its stores; only a hub that outlives grace and margin is killed.

Nothing is read to print the unit (no settings, no network): the service has its own config file.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import typer

from hubcli import exits

NAME = "agent-hub"
GRACE_SECS = 10  # the hub's default shutdown_grace_secs, pinned in the unit
STOP_MARGIN_SECS = 20  # closing the stores after the grace (a checkpoint of each open store)
HIDDEN = ("/home/", "/root/", "/run/user/")  # ProtectHome= hides these from the service


def hub_cli_path() -> Path:
    """The `hub-cli` of the running installation (its venv's bin, as pipx and uv make it), else the
    one on PATH."""
    beside = Path(sys.executable).with_name("hub-cli")
    if beside.exists():
        return beside.absolute()
    found = shutil.which("hub-cli")
    return Path(found).absolute() if found else Path("/usr/local/bin/hub-cli")


def render_unit(exec_path: Path, *, grace_secs: int = GRACE_SECS) -> str:
    return f"""# Agent Hub as a systemd service, written by `hub-cli service --print`.
# Install: docs/operations.md (Running as a service).
[Unit]
Description=Agent Hub
After=network-online.target
Wants=network-online.target

[Service]
Type=exec
ExecStart={exec_path} serve
# The config file (the first start writes the admin token into it), the data directory and the
# online backups (beside the data directory, never in it) live in the state directory,
# /var/lib/{NAME}; bind and the other settings go in that config file.
Environment=HUB_CONFIG=%S/{NAME}/config.toml
Environment=HUB_DATA_DIR=%S/{NAME}/data
Environment=HUB_BACKUP_DIR=%S/{NAME}/backups
Environment=HUB_SHUTDOWN_GRACE_SECS={grace_secs}
WorkingDirectory=%S/{NAME}
DynamicUser=yes
StateDirectory={NAME} {NAME}/backups
StateDirectoryMode=0700
UMask=0077
# A SIGTERM is the graceful stop: {grace_secs} s for requests in flight, then the stores close.
KillSignal=SIGTERM
TimeoutStopSec={grace_secs + STOP_MARGIN_SECS}
Restart=on-failure
RestartSec=2
LimitNOFILE=65536
# Hardening: nothing writable outside the state directory, no privileges to gain.
NoNewPrivileges=yes
ProtectSystem=strict
ProtectHome=yes
PrivateTmp=yes
PrivateDevices=yes
ProtectKernelTunables=yes
ProtectKernelModules=yes
ProtectKernelLogs=yes
ProtectControlGroups=yes
ProtectClock=yes
ProtectHostname=yes
ProtectProc=invisible
RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX
RestrictNamespaces=yes
RestrictRealtime=yes
RestrictSUIDSGID=yes
LockPersonality=yes
SystemCallArchitectures=native
SystemCallFilter=@system-service
CapabilityBoundingSet=

[Install]
WantedBy=multi-user.target
"""


def register(app: typer.Typer) -> None:
    @app.command()
    def service(
        print_unit: bool = typer.Option(False, "--print", help="Print the systemd unit to stdout."),
        exec_path: Path = typer.Option(
            None, "--exec", help="The hub-cli the unit runs (default: this installation's)."
        ),
    ) -> None:
        """Print a hardened systemd unit that runs `hub-cli serve` as a service (DynamicUser, state in
        /var/lib/agent-hub, restarted on failure, logs in the journal). Install it as
        /etc/systemd/system/agent-hub.service: docs/operations.md. Exit 2 without --print."""
        if not print_unit:
            sys.stderr.write("hub-cli service: nothing to do; --print writes the unit to stdout\n")
            raise typer.Exit(exits.USAGE)
        path = exec_path.absolute() if exec_path is not None else hub_cli_path()
        if str(path).startswith(HIDDEN):
            sys.stderr.write(
                f"hub-cli service: warning: {path} lies under a home directory, which the "
                "unit hides from the service (ProtectHome=yes); install the hub system-wide "
                "(docs/operations.md) or give --exec\n"
            )
        sys.stdout.write(render_unit(path))
