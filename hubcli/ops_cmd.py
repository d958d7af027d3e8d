"""`hub-cli check`, `doctor` and `health`: what is wrong with a data directory, and whether a hub
is ready. Heavy imports wait until a command runs: `--help` reads nothing.

Output: one line per finding, `<subject>: <what>` for a reading and `problem: <subject>: <what>`
for a problem (the subject is a file relative to the directory when one is concerned), then a
summary line. Exit 0 when nothing is wrong, 1 on any problem or a refusal (a hub holds the
directory `check` needs to itself), 78 for unusable settings.
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
    from hubcore.ops.findings import Finding

DEFAULT_HEALTH_URL = "http://127.0.0.1:8080"
DATA_DIR_HELP = "The data directory, or a backup directory (default: the configured data_dir)."


def _directory(settings: Settings, data_dir: Path | None) -> Path:
    return Path(data_dir).expanduser().absolute() if data_dir is not None else settings.hub.data_path


def _report(command: str, root: Path, findings: list[Finding]) -> int:
    """Print the findings and the summary; the exit code."""
    for finding in findings:
        typer.echo(f"problem: {finding}" if finding.problem else str(finding))
    count = sum(1 for f in findings if f.problem)
    if count:
        typer.echo(f"{command}: {count} problem{'s' if count != 1 else ''} in {root}")
        return exits.REFUSED
    typer.echo(f"{command}: {root} ok")
    return exits.OK


def check(data_dir: Path = typer.Option(None, "--data-dir", help=DATA_DIR_HELP)) -> None:
    """Verify a data directory or a backup: with a manifest.json, every listed file by presence,
    size and SHA-256; SQLite's integrity check on hub.db and every brain and knowledge base file;
    artifact rows against their blobs; store files hub.db names; in a data directory whose stores
    passed, the search index against its sources (rebuilt when it differs: it is derived data).
    Refuses while a hub holds the directory. Exit 0 all good, 1 any problem or refused, 78 settings."""
    import anyio

    from hubcore.ops.check import check as run_check
    from hubcore.ops.datadir import OpsRefused

    settings = settings_or_exit()
    root = _directory(settings, data_dir)
    try:
        findings = anyio.run(lambda: run_check(root, settings.hub))
    except OpsRefused as exc:
        sys.stderr.write(f"hub-cli check: {exc}\n")
        raise typer.Exit(exits.REFUSED) from None
    raise typer.Exit(_report("check", root, findings))


def doctor(data_dir: Path = typer.Option(None, "--data-dir", help=DATA_DIR_HELP)) -> None:
    """Report on a data directory without writing to it (a hub may be running on it): identity,
    schema versions, free space against min_free_bytes, write-ahead log sizes, the event id
    high-water mark, missing blobs. Exit 0 nothing wrong, 1 any problem, 78 settings."""
    import time

    from hubcore.ops.doctor import doctor as run_doctor

    settings = settings_or_exit()
    root = _directory(settings, data_dir)
    findings = run_doctor(root, min_free_bytes=settings.hub.min_free_bytes, now=time.time())
    raise typer.Exit(_report("doctor", root, findings))


def health(url: str = typer.Option(DEFAULT_HEALTH_URL, "--url", help="The hub's base URL (plain HTTP).")) -> None:
    """Ask a hub whether it is ready (GET /readyz; plain HTTP only; HUB_TIMEOUT bounds the wait).
    Exit 0 ready, 1 not ready (the failing leg is printed), 2 not an http:// URL, 69 unreachable,
    78 settings."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.scheme != "http" or not parts.netloc:
        sys.stderr.write(f"hub-cli health: {url!r} is not an http:// URL (health speaks plain HTTP only)\n")
        raise typer.Exit(exits.USAGE)
    raise typer.Exit(_health(url, settings_or_exit().client.timeout))


def _health(url: str, timeout: float) -> int:
    import httpx

    target = url.rstrip("/") + "/readyz"
    try:
        r = httpx.get(target, timeout=timeout, follow_redirects=False)
    except httpx.HTTPError as exc:
        sys.stderr.write(f"hub-cli health: cannot reach the hub at {url}: {exc}\n")
        return exits.UNREACHABLE
    try:
        body = r.json()
    except ValueError:
        body = None
    if r.status_code == 200 and isinstance(body, dict):
        typer.echo(f"ready: schema v{body.get('schema_version')}, {body.get('free_bytes')} bytes free")
        return exits.OK
    detail = body.get("detail") if isinstance(body, dict) else None
    leg = (body.get("details") or {}).get("leg") if isinstance(body, dict) else None
    shown = detail or r.text[:200].strip() or r.reason_phrase
    typer.echo(f"not ready: HTTP {r.status_code}: {shown}" + (f" (leg {leg})" if leg else ""))
    return exits.REFUSED


def register(app: typer.Typer) -> None:
    """Add the commands to `hub-cli`."""
    app.command()(check)
    app.command()(doctor)
    app.command()(health)
