"""`hub-cli project create|list|delete`: over REST when `HUB_URL` is set, else on the local data
directory as the human admin (like `hub-cli mcp` standalone), so a standalone setup can create the
project its agent writes to. Heavy imports wait until a command runs: `--help` reads nothing."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import typer

from hubcli import exits

if TYPE_CHECKING:
    from hubcli.rest import Rest
    from hubcore.caller import Caller
    from hubcore.config import Settings
    from hubcore.hub import Hub

project_app = typer.Typer(
    name="project",
    help="Create, list and delete projects.\n\nOn the hub at HUB_URL (token HUB_TOKEN, else the admin "
    "token), or with no HUB_URL on the local data directory as the human admin (refused while a "
    "running hub holds it). Exit 0 ok, 1 the hub refused, 2 usage, 69 unreachable, 77 token "
    "refused, 78 no hub or token named.",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)

RestOp = Callable[["Rest"], Awaitable[Any]]
LocalOp = Callable[["Hub", "Caller"], Awaitable[Any]]


def _err(message: str) -> None:
    sys.stderr.write(f"hub-cli project: {message}\n")


def _run(rest_op: RestOp, local_op: LocalOp) -> tuple[int, Any]:
    """Run the command where the settings point: `(exit code, result)`; failures go to stderr."""
    import anyio

    from hubcli.client import CliFailure
    from hubcli.settings import settings_or_exit

    settings: Settings = settings_or_exit()
    try:
        if settings.client.url:
            from hubcli.rest import Rest

            rest = Rest.from_settings(settings)
            return exits.OK, anyio.run(rest_op, rest)
        from hubcli.local import with_hub

        return exits.OK, with_hub(settings, local_op)
    except CliFailure as failure:
        _err(failure.message)
        return failure.code, None


@project_app.command("create")
def create(
    project_id: str = typer.Option(
        ..., "--id", help="The new project's id: lowercase letters, digits and hyphens, not starting with space-."
    ),
    name: str = typer.Option(None, "--name", help="Its display name (the id when left out)."),
) -> None:
    """Create a project and print `created <id>`.

    An agent token may create projects too (the agent becomes its owner)."""
    body = {"id": project_id, "display_name": name}

    async def over_rest(rest: Rest) -> Any:
        return await rest.json("POST", "/projects", json={k: v for k, v in body.items() if v is not None})

    async def local(hub: Hub, caller: Caller) -> Any:
        from hubcore.services.projects import ProjectCreate
        from hubcore.services.requests import parse

        return await hub.projects.create(caller, parse(ProjectCreate, body))

    code, project = _run(over_rest, local)
    if code == exits.OK:
        sys.stdout.write(f"created {project['id']}\n")
    raise typer.Exit(code)


@project_app.command("list")
def list_projects(
    plain: bool = typer.Option(False, "--plain", help="Only the ids, one a line, no header (for scripts)."),
) -> None:
    """List the projects the token can see.

    Columns: id, display name, unseen feed events, kind (project, personal, confidential). The admin
    token, and the local data directory, see every project."""

    async def over_rest(rest: Rest) -> Any:
        return (await rest.json("GET", "/projects"))["projects"]

    async def local(hub: Hub, caller: Caller) -> Any:
        return await hub.projects.list(caller)

    code, projects = _run(over_rest, local)
    if code == exits.OK:
        sys.stdout.write("".join(f"{p['id']}\n" for p in projects) if plain else table(projects))
    raise typer.Exit(code)


def table(projects: list[dict[str, Any]]) -> str:
    """An aligned table with a header; the last column is left unpadded."""
    rows = [("ID", "NAME", "UNSEEN", "KIND")]
    for p in projects:
        kind = "personal" if p.get("is_personal") else "confidential" if p.get("confidential") else "project"
        rows.append((p["id"], p["display_name"], str(p.get("unseen_events", 0)), kind))
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    return "".join("  ".join([*(r[i].ljust(widths[i]) for i in range(3)), r[3]]) + "\n" for r in rows)


@project_app.command("delete")
def delete(
    project_id: str = typer.Option(
        None, "--id", help="The project to delete; HUB_PROJECT (or [client] project) when left out."
    ),
) -> None:
    """Delete a project (admin).

    Its feed, sessions, artifacts and knowledge base go with it; a personal space cannot be
    deleted. Over HUB_URL the token must be the admin token."""
    from hubcli.settings import settings_or_exit

    target = project_id or settings_or_exit().client.project
    if not target:
        _err("name the project with --id or HUB_PROJECT")
        raise typer.Exit(exits.USAGE)

    async def over_rest(rest: Rest) -> Any:
        return await rest.json("DELETE", f"/projects/{quote(target, safe='')}")

    async def local(hub: Hub, caller: Caller) -> Any:
        return await hub.projects.delete(caller, target)

    code, _ = _run(over_rest, local)
    if code == exits.OK:
        sys.stdout.write(f"deleted {target}\n")
    raise typer.Exit(code)
