"""The settings every command reads, or exit 78 naming what is wrong with them.

Its own module so that `main` (which registers the commands) and the command modules (which read
the settings when they run) both import it and not each other. `hubcore.config` is imported when a
command runs: `--help` reads nothing.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import typer

from hubcli import exits

if TYPE_CHECKING:
    from hubcore.config import Settings


def settings_or_exit() -> Settings:
    """The settings, or exit 78 naming what is wrong with them."""
    from hubcore.config import ConfigError, load

    try:
        return load()
    except ConfigError as exc:
        sys.stderr.write(f"hub-cli: {exc.message}\n")
        raise typer.Exit(exits.NOT_CONFIGURED) from None
