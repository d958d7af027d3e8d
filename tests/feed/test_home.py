"""`GET /api/v1/home`: every member, real measurements or null."""

from __future__ import annotations

import pytest

from hubcore.caller import Caller
from hubcore.clock import FakeClock
from hubcore.hub import Hub
from hubcore.services import volume as volume_module
from tests.feed.conftest import approval, ask, signal
from tests.harness import ADMIN, HubClient
from tests.requests import a_signal

pytestmark = pytest.mark.anyio


async def get_home(client: HubClient) -> dict:  # type: ignore[type-arg]
    r = await client.get("/api/v1/home", headers=ADMIN)
    assert r.status_code == 200, r.text
    return dict(r.json())


async def test_home_members(client: HubClient, hub: Hub, bot: Caller, clock: FakeClock) -> None:
    await client.make_project("quiet", display_name="Quiet one")
    empty = await get_home(client)
    assert set(empty) == {
        "unread",
        "waiting",
        "waiting_items",
        "node",
        "agents_active",
        "first_run",
        "last_event_at",
        "recent",
        "unseen",
        "storage",
        "prunable",
    }
    assert empty["first_run"] is True  # no agent has called (tests/sessions/test_storage.py walks it)
    assert empty["unread"] == 0 and empty["waiting"] == 0 and empty["waiting_items"] == []
    assert empty["last_event_at"] is None and empty["recent"] == [] and empty["unseen"] == []
    assert set(empty["prunable"]) == {"sessions", "bytes"}
    waiting = [await ask(hub, bot, text=f"q{i}") for i in range(4)] + [await approval(hub, bot) for _ in range(3)]
    await hub.posts.signal_append(bot, a_signal(project_id="proj", kind="idea", summary="an idea"))
    s = await signal(hub, bot, "quiet")
    home = await get_home(client)
    assert home["unread"] == 1 and home["waiting"] == 7
    assert [i["event_id"] for i in home["waiting_items"]] == waiting[::-1][:5]
    assert home["waiting_items"][0]["project_display_name"] == "proj"
    assert home["recent"][0]["id"] == s and home["recent"][0]["project_display_name"] == "Quiet one"
    assert len(home["recent"]) == 9
    assert home["last_event_at"] == home["recent"][0]["created_at"]
    assert {u["project_id"]: u["unseen_events"] for u in home["unseen"]} == {"proj": 8, "quiet": 1}
    assert all("project_display_name" in u for u in home["unseen"])
    assert home["node"]["host"] and home["node"]["mode"] == "loopback"
    storage = home["storage"]
    assert storage["used_bytes"] > 0 and storage["capacity_bytes"] >= storage["free_bytes"] > 0


async def test_agents_active_counts_recent_token_use(
    client: HubClient, hub: Hub, bot: Caller, clock: FakeClock
) -> None:
    assert (await get_home(client))["agents_active"] == 0
    r = await client.get("/api/v1/projects", headers=client.agent(client.bot_token))  # type: ignore[attr-defined]
    assert r.status_code == 200
    assert (await get_home(client))["agents_active"] == 1
    clock.advance(901)
    assert (await get_home(client))["agents_active"] == 0


async def test_unmeasurable_storage_is_null(client: HubClient, hub: Hub, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(path: object) -> None:
        raise OSError("no volume")

    monkeypatch.setattr(volume_module.shutil, "disk_usage", broken)
    monkeypatch.setattr(volume_module, "tree_bytes", lambda root: None)
    hub.home._storage = None
    storage = (await get_home(client))["storage"]
    assert storage == {"used_bytes": None, "capacity_bytes": None, "free_bytes": None}


def test_node_mode() -> None:
    from tests.harness import test_settings

    assert volume_module.node_mode(test_settings(".", bind="127.0.0.1:1")) == "loopback"
    assert volume_module.node_mode(test_settings(".", bind="0.0.0.0:1")) == "network"
    assert volume_module.node_mode(test_settings(".", tls_cert="c", tls_key="k")) == "tls"
