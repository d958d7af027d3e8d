"""`hub-cli backup` and `hub-cli restore`: the operator's copies of a data directory.

`backup --url URL` asks the running hub for an online backup (as the admin); `backup --out DIR`
copies a data directory no hub holds; `restore --from DIR` puts a backup back. The work is in
`hubcore.ops`; this module reads the flags and settings, prints, and picks the exit code. Heavy
imports wait until a command runs, so `--help` reads nothing.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from hubcli import exits
from hubcli.settings import settings_or_exit

if TYPE_CHECKING:
    from hubcore.config import Settings

BACKUP_HELP = (
    "Take a backup. With --url: the running hub at URL takes an online backup under its backup_dir, "
    "as the admin (HUB_ADMIN_TOKEN, or admin_token in the hub section; HUB_TIMEOUT bounds the wait). With "
    "--out: copy the data directory (--data-dir, else the configured one) into a new directory under "
    "DIR named for the UTC time; refused while a hub holds the data directory. Exit 0 ok, 1 refused, "
    "2 usage, 69 unreachable, 77 token refused, 78 no admin token."
)
RESTORE_HELP = (
    "Restore a backup directory into the data directory (--data-dir, else the configured one). Every "
    "file is checked against the backup's manifest first; refused while a hub holds the target, for a "
    "non-empty target without --force, and for a copy without a manifest (a pre-migration copy). The "
    "old tree is kept beside the target as .hub-replaced-<token>. Exit 0 ok, 1 refused, 2 usage."
)


def _err(command: str, message: str) -> None:
    sys.stderr.write(f"hub-cli {command}: {message}\n")


def backup(
    url: str = typer.Option(None, "--url", help="The running hub to take an online backup."),
    out: Path = typer.Option(None, "--out", help="Directory to write an offline backup under."),
    data_dir: Path = typer.Option(None, "--data-dir", help="The data directory (offline backup only)."),
) -> None:
    if (url is None) == (out is None):
        _err("backup", "give exactly one of --url URL (online) or --out DIR (offline)")
        raise typer.Exit(exits.USAGE)
    if url is not None and data_dir is not None:
        _err("backup", "--data-dir goes with --out: an online backup is of the hub's own data directory")
        raise typer.Exit(exits.USAGE)
    settings = settings_or_exit()
    raise typer.Exit(_online(settings, url) if url is not None else _offline(settings, out, data_dir))


def _online(settings: Settings, url: str) -> int:
    import anyio

    from hubcli.client import CliFailure
    from hubcli.rest import Rest

    token = settings.hub.admin_token
    if not token:
        _err("backup", "no admin token: set HUB_ADMIN_TOKEN or admin_token under [hub]")
        return exits.NOT_CONFIGURED
    rest = Rest(url, token, settings.client.timeout)
    try:
        reply = anyio.run(lambda: rest.json("POST", "/backups"))
    except CliFailure as failure:
        _err("backup", failure.message)
        return failure.code
    manifest = reply["manifest"]
    typer.echo(
        f"backup {reply['path']}: {manifest['files']} files, {manifest['bytes']} bytes, "
        f"schema v{manifest['schema_version']}, {reply['duration_ms']} ms"
    )
    return exits.OK


def _offline(settings: Settings, out: Path, data_dir: Path | None) -> int:
    from datetime import UTC, datetime

    from hubcore.ops.backup import offline_backup
    from hubcore.ops.datadir import OpsRefused

    source = (data_dir or settings.hub.data_path).expanduser().absolute()
    try:
        result = offline_backup(source, out.expanduser().absolute(), moment=datetime.now(UTC))
    except OpsRefused as exc:
        _err("backup", str(exc))
        return exits.REFUSED
    except OSError as exc:
        _err("backup", f"{exc.filename or out}: {exc.strerror}")
        return exits.REFUSED
    typer.echo(
        f"backup {result.path}: {len(result.manifest.files)} files, {result.manifest.bytes} bytes, "
        f"schema v{result.manifest.schema_version}, {result.duration_ms} ms"
    )
    return exits.OK


def restore(
    source: Path = typer.Option(..., "--from", help="The backup directory (the one holding manifest.json)."),
    data_dir: Path = typer.Option(None, "--data-dir", help="The data directory to restore into."),
    force: bool = typer.Option(False, "--force", help="Replace a non-empty data directory (it is kept aside)."),
) -> None:
    from hubcore.hub import supported_version
    from hubcore.ops.datadir import OpsRefused
    from hubcore.ops.restore import restore as run_restore

    target = data_dir if data_dir is not None else settings_or_exit().hub.data_path
    try:
        done = run_restore(
            source.expanduser().absolute(), target.expanduser(), force=force, supported_version=supported_version()
        )
    except OpsRefused as exc:
        _err("restore", str(exc))
        raise typer.Exit(exits.REFUSED) from None
    except OSError as exc:
        _err("restore", f"{exc.filename or target}: {exc.strerror}")
        raise typer.Exit(exits.REFUSED) from None
    typer.echo(
        f"restored {len(done.manifest.files)} files ({done.manifest.bytes} bytes, backup of "
        f"{done.manifest.created_at}, schema v{done.manifest.schema_version}) into {done.target}"
    )
    if done.ignored:
        _err(
            "restore",
            f"note: {len(done.ignored)} files in the backup directory are not in its manifest and "
            f"were not restored: {', '.join(done.ignored[:10])}",
        )
    if done.replaced is not None:
        typer.echo(f"the previous tree is kept at {done.replaced}")
    raise typer.Exit(exits.OK)


def register(app: typer.Typer) -> None:
    app.command("backup", help=BACKUP_HELP)(backup)
    app.command("restore", help=RESTORE_HELP)(restore)
