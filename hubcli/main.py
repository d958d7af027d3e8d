"""`hub-cli`: one program, many commands. `--help`/`-h` never reads settings or the network."""

from __future__ import annotations

import sys

import typer

from hubcli import backup_cmd, exits, service_cmd
from hubcli.kb_cmd import kb_app
from hubcli.ops_cmd import register as register_ops
from hubcli.project_cmd import project_app
from hubcli.settings import settings_or_exit

app = typer.Typer(
    name="hub-cli",
    help="Agent Hub: serve the hub, talk to it, and look after its data.",
    context_settings={"help_option_names": ["-h", "--help"]},
    add_completion=False,
    no_args_is_help=False,
    pretty_exceptions_enable=False,
)


@app.callback(invoke_without_command=True)
def main(ctx: typer.Context) -> None:
    """With no command, serve."""
    if ctx.invoked_subcommand is None:
        serve()


@app.command()
def serve() -> None:
    """Serve the hub on its configured bind (default 127.0.0.1:8080). No flags: settings come from
    the config file and HUB_* variables."""
    from hubcli.serve import run_serve

    raise typer.Exit(run_serve(settings_or_exit()))


@app.command()
def config(
    path: bool = typer.Option(False, "--path", help="Print the config file's path."),
    check: bool = typer.Option(
        False,
        "--check",
        help="Check the file and HUB_* variables: exit 78 naming "
        "any unknown key under [hub] or [client] and any bad value; print `config ok` "
        "otherwise.",
    ),
) -> None:
    """Show where the settings live, or check them."""
    from hubcore import config as cfg

    if path or not check:
        typer.echo(str(cfg.config_path()))
    if check:
        problems = cfg.check()
        for line in problems:
            sys.stderr.write(f"hub-cli config: {line}\n")
        if problems:
            raise typer.Exit(exits.NOT_CONFIGURED)
        if not path:
            typer.echo("config ok")


@app.command()
def mcp() -> None:
    """Serve the agent endpoint over stdio. With HUB_URL: a bridge to that hub using the client
    config's token. Without it: the local data directory served standalone, acting as the human
    admin (actor label from HUB_AGENT_ID); refuses while a running hub holds the directory."""
    from hubcli.mcp_cmd import run_mcp

    raise typer.Exit(run_mcp(settings_or_exit()))


@app.command()
def call(
    tool: str = typer.Argument(..., help="Tool name, e.g. whoami or feed_read."),
    arguments: str = typer.Argument(None, help="Arguments as a JSON object, or - to read them from stdin."),
) -> None:
    """Call one agent tool on the hub at HUB_URL and print its result as JSON. Each call is its own
    connection with no session; reach a session by passing "session": {"agent", "name",
    "project_id"} in the arguments. artifact_publish, artifact_update and artifact_draft also take
    "password": the content is encrypted here and only ciphertext and its envelope are sent. Exit 0
    ok, 1 the tool refused, 2 usage, 69 unreachable, 77 token refused, 78 no hub named."""
    from hubcli.mcp_cmd import run_call

    raise typer.Exit(run_call(settings_or_exit(), tool, arguments))


@app.command()
def tools(compact: bool = typer.Option(False, "--compact", help="One line per tool: name and title.")) -> None:
    """List the hub's agent tools (with their JSON Schemas unless --compact)."""
    from hubcli.mcp_cmd import run_tools

    raise typer.Exit(run_tools(settings_or_exit(), compact))


@app.command()
def enrol(
    why_arg: str = typer.Argument(None, metavar="WHY", help="One line: why the hub should admit you."),
    why: str = typer.Option(None, "--why", help="The reason (at most 200 characters), instead of the argument."),
    name: str = typer.Option(None, "--name", help="Your display name (default: HUB_AGENT_ID, else the host name)."),
    agent_id: str = typer.Option(
        None,
        "--id",
        help="The agent id you would like (default: HUB_AGENT_ID); the hub picks another when it is taken.",
    ),
    url: str = typer.Option(None, "--url", help="The hub to ask (default: HUB_URL)."),
    force: bool = typer.Option(False, "--force", help="Enrol although a token is configured, replacing it."),
) -> None:
    """Ask a hub to admit this agent, wait for the human to decide (it shows in their inbox), then
    save the hub URL and the token to the client config (the client section's url and token; the
    file HUB_CONFIG names; mode 0600) and print the agent id. Exit 0 admitted, 1 the hub refused
    the request, 2 usage (no reason, one over 200 characters, a token already configured without
    --force), 69 unreachable, 77 refused by the human or abandoned, 78 no hub named."""
    from hubcli.enrol_cmd import run_enrol

    raise typer.Exit(
        run_enrol(settings_or_exit(), why_arg=why_arg, why=why, name=name, agent_id=agent_id, url=url, force=force)
    )


@app.command()
def review(
    project: str = typer.Option(None, "--project", help="The project to publish the diff in."),
    title: str = typer.Option(None, "--title", help="The review's title."),
    wait: bool = typer.Option(False, "--wait", help="Wait for the verdict."),
    timeout: float = typer.Option(3600.0, "--timeout", help="With --wait: give up after this many seconds (exit 75)."),
    approval: str = typer.Option(
        None, "--approval", help="With --wait: wait again on this approval id; publishes nothing."
    ),
) -> None:
    """Publish the unified diff on stdin (git diff, diff -u) as a diff artifact at HUB_URL and ask the
    human to review it; prints `artifact ID` and `approval ID`. With --wait, wait for the verdict:
    exit 0 approved, 1 changes requested (the open comments printed as `file:line: body`, one a
    line), 75 still waiting at --timeout. Also 1 the hub refused, 2 usage, 69 unreachable, 77 token
    refused, 78 no hub named."""
    from hubcli.review_cmd import run_review

    raise typer.Exit(
        run_review(settings_or_exit(), project=project, title=title, wait=wait, timeout=timeout, approval=approval)
    )


app.add_typer(kb_app)
app.add_typer(project_app)
backup_cmd.register(app)
register_ops(app)
service_cmd.register(app)


def run() -> None:
    app()
