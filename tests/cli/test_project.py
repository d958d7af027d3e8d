"""`hub-cli project create|list|delete`, over REST (HUB_URL) and on the local data directory.

The commands run in this process (`tests.cli.here`) but in `test_local_create_list_delete` and
`test_local_refused_while_a_hub_holds_the_directory`, which run real `hub-cli` processes: the
output through pipes, and a second process refused the directory a running hub holds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hubcore.caller import Caller
from hubcore.config import HubSettings
from hubcore.hub import Hub
from tests.cli.conftest import cli, cli_env
from tests.cli.here import cli_here
from tests.harness import ADMIN, ADMIN_TOKEN
from tests.mcp.live import LiveHub, free_port
from tests.requests import a_project, a_signal, an_agent

pytestmark = pytest.mark.anyio


async def local_projects(settings: HubSettings) -> dict[str, dict[str, Any]]:
    async with Hub.open(settings) as hub:
        return {p["id"]: p for p in await hub.projects.list(Caller.admin())}


async def rest_projects(live: LiveHub) -> dict[str, dict[str, Any]]:
    r = await live.http.get("/api/v1/projects", headers=ADMIN)
    return {p["id"]: p for p in r.json()["projects"]}


def local_env(tmp_path: Path, settings: HubSettings, **extra: str) -> dict[str, str]:
    return cli_env(tmp_path, HUB_DATA_DIR=settings.data_dir, **extra)


async def test_local_create_list_delete(tmp_path: Path, settings: HubSettings) -> None:
    env = local_env(tmp_path, settings)
    run = await cli(env, "project", "create", "--id", "demo", "--name", "Demo one")
    assert (run.code, run.out, run.err) == (0, "created demo\n", "")
    assert (await cli(env, "project", "create", "--id", "plain")).code == 0
    run = await cli(env, "project", "list")
    assert run.code == 0 and run.err == ""
    assert run.out.splitlines() == [
        "ID     NAME      UNSEEN  KIND",
        "demo   Demo one  0       project",
        "plain  plain     0       project",
    ]
    run = await cli(env, "project", "list", "--plain")
    assert (run.code, run.out) == (0, "demo\nplain\n")
    run = await cli(env, "project", "delete", "--id", "plain")
    assert (run.code, run.out, run.err) == (0, "deleted plain\n", "")
    run = await cli({**env, "HUB_PROJECT": "demo"}, "project", "delete")
    assert (run.code, run.out) == (0, "deleted demo\n")
    assert await local_projects(settings) == {}


async def test_a_locally_created_project_takes_the_agent_s_writes(tmp_path: Path, settings: HubSettings) -> None:
    """The standalone setup: nothing else can create the project `hub-cli mcp`'s agent writes to."""
    env = local_env(tmp_path, settings, HUB_AGENT_ID="local-agent")
    assert (await cli_here(env, "project", "create", "--id", "work")).code == 0
    async with Hub.open(settings) as hub:
        sent = await hub.posts.signal_append(Caller.admin("local-agent"), a_signal(project_id="work", summary="hi"))
        project = await hub.projects.get(Caller.admin(), "work")
    assert sent["event_id"] and project["display_name"] == "work" and project["owner_agent"] is None


async def test_local_refusals_write_nothing(tmp_path: Path, settings: HubSettings) -> None:
    async with Hub.open(settings) as hub:
        await hub.projects.create(Caller.admin(), a_project(id="demo", display_name="Demo"))
        await hub.agents.create(Caller.admin(), an_agent(id="bot", display_name="Bot"))
    before = await local_projects(settings)
    env = local_env(tmp_path, settings)
    cases = [
        (("create", "--id", "demo", "--name", "Other"), 1, "conflict: project 'demo' already exists"),
        (("create", "--id", "Bad"), 1, "invalid_argument: id: must match the pattern"),
        (("create", "--id", "space-x"), 1, "invalid_argument: project ids starting with 'space-' are reserved"),
        (("delete", "--id", "nowhere"), 1, "not_found: project 'nowhere'"),
        (("delete", "--id", "space-bot"), 1, "conflict: project 'space-bot' is a personal space"),
        (("delete",), 2, "name the project with --id or HUB_PROJECT"),
    ]
    for args, code, message in cases:
        run = await cli_here(env, "project", *args)
        assert run.code == code and run.out == "", (args, run)
        assert run.err.startswith(f"hub-cli project: {message}"), (args, run.err)
    run = await cli_here(env, "project", "create")  # --id is required: typer's usage error
    assert run.code == 2 and run.out == "" and "--id" in run.err
    run = await cli_here({**env, "HUB_AGENT_ID": "Not A Label"}, "project", "create", "--id", "fresh")
    assert run.code == 78 and "HUB_AGENT_ID" in run.err
    assert await local_projects(settings) == before


async def test_local_refused_while_a_hub_holds_the_directory(tmp_path: Path, live: LiveHub) -> None:
    env = cli_env(tmp_path, HUB_DATA_DIR=live.app.settings.data_dir)
    for args in (("create", "--id", "fresh"), ("list",), ("delete", "--id", "space-x")):
        run = await cli(env, "project", *args)
        assert run.code == 1 and run.out == "", (args, run)
        assert run.err == (
            f"hub-cli project: data directory {live.app.settings.data_path} is in use by a "
            "running hub; set HUB_URL to reach it instead\n"
        )
    assert await rest_projects(live) == {}


async def test_rest_create_list_delete(tmp_path: Path, live: LiveHub) -> None:
    env = cli_env(tmp_path, HUB_URL=live.base, HUB_TOKEN=ADMIN_TOKEN)
    run = await cli_here(env, "project", "create", "--id", "demo", "--name", "Demo one")
    assert (run.code, run.out, run.err) == (0, "created demo\n", "")
    assert (await rest_projects(live))["demo"]["display_name"] == "Demo one"
    token = await live.make_agent("bot")
    run = await cli_here(
        cli_env(tmp_path, HUB_URL=f"{live.base}/mcp", HUB_TOKEN=token), "project", "create", "--id", "by-bot"
    )
    assert (run.code, run.out) == (0, "created by-bot\n")
    assert (await rest_projects(live))["by-bot"]["owner_agent"] == "bot"
    run = await cli_here(env, "project", "list")
    assert run.code == 0 and run.out.splitlines() == [
        "ID         NAME         UNSEEN  KIND",
        "by-bot     by-bot       0       project",
        "demo       Demo one     0       project",
        "space-bot  Bot's space  0       personal",
    ]
    assert (await cli_here(env, "project", "list", "--plain")).out == "by-bot\ndemo\nspace-bot\n"
    run = await cli_here({**env, "HUB_PROJECT": "by-bot"}, "project", "delete")
    assert (run.code, run.out, run.err) == (0, "deleted by-bot\n", "")
    assert set(await rest_projects(live)) == {"demo", "space-bot"}


async def test_rest_list_shows_what_the_token_sees(tmp_path: Path, live: LiveHub) -> None:
    await live.make_project("hidden", confidential=True)
    token = await live.make_agent("bot")
    run = await cli_here(cli_env(tmp_path, HUB_URL=live.base, HUB_TOKEN=token), "project", "list", "--plain")
    assert (run.code, run.out) == (0, "space-bot\n")
    admin = await cli_here(cli_env(tmp_path, HUB_URL=live.base, HUB_TOKEN=ADMIN_TOKEN), "project", "list")
    assert "hidden     hidden       0       confidential" in admin.out.splitlines()


async def test_rest_refusals_write_nothing(tmp_path: Path, live: LiveHub) -> None:
    await live.make_project("demo")
    token = await live.make_agent("bot")
    before = await rest_projects(live)
    admin = cli_env(tmp_path, HUB_URL=live.base, HUB_TOKEN=ADMIN_TOKEN)
    agent = cli_env(tmp_path, HUB_URL=live.base, HUB_TOKEN=token)
    unreachable = f"http://127.0.0.1:{free_port()}"
    cases = [
        (admin, ("create", "--id", "demo"), 1, "hub-cli project: conflict: project 'demo' already exists"),
        (admin, ("create", "--id", "Bad"), 1, "hub-cli project: invalid_argument: id: must match"),
        (admin, ("delete", "--id", "nowhere"), 1, "hub-cli project: not_found: project 'nowhere'"),
        (admin, ("delete", "--id", "space-bot"), 1, "hub-cli project: conflict: project 'space-bot' is a personal"),
        (agent, ("delete", "--id", "demo"), 77, "hub-cli project: the hub refused the token"),
        ({**admin, "HUB_TOKEN": "hub_wrong"}, ("create", "--id", "fresh"), 77, "hub-cli project: the hub refused"),
        ({**admin, "HUB_URL": unreachable}, ("create", "--id", "fresh"), 69, "hub-cli project: cannot reach"),
        (cli_env(tmp_path, HUB_URL=live.base), ("list",), 78, "hub-cli project: no token set"),
    ]
    for env, args, code, message in cases:
        run = await cli_here(env, "project", *args)
        assert run.code == code and run.out == "", (args, run)
        assert run.err.startswith(message), (args, run.err)
    assert await rest_projects(live) == before


async def test_the_admin_token_from_the_hub_section_serves_when_no_client_token_is_set(
    tmp_path: Path, live: LiveHub
) -> None:
    """On the hub's own machine the first run saved `[hub] admin_token`; the commands use it."""
    config = tmp_path / "client.toml"
    config.write_text(f'[hub]\nadmin_token = "{ADMIN_TOKEN}"\n', encoding="utf-8")
    run = await cli_here(cli_env(tmp_path, HUB_URL=live.base), "project", "create", "--id", "mine")
    assert (run.code, run.out) == (0, "created mine\n")
