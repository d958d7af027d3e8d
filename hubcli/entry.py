"""The `hub-cli` program's entry point.

`hub-cli` and `hub-cli serve` (the server, started by systemd or by hand) go straight to the server
without loading the command-line parser and every client command behind it (typer, click, httpx):
they take no flags, and what they would load is time before the hub is ready. Every other command
line, `--help` included, goes to the parser in `hubcli.main`.
"""

from __future__ import annotations

import sys

from hubcli import exits


def serve() -> int:
    """Serve with the settings from the config file and HUB_* variables; 78 naming what is wrong."""
    from hubcli.serve import run_serve
    from hubcore.config import ConfigError, load

    try:
        settings = load()
    except ConfigError as exc:
        sys.stderr.write(f"hub-cli: {exc.message}\n")
        return exits.NOT_CONFIGURED
    return run_serve(settings)


def run() -> None:
    if sys.argv[1:] in ([], ["serve"]):
        sys.exit(serve())
    from hubcli.main import run as parse_and_run

    parse_and_run()
