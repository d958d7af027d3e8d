"""A project deleted while a knowledge base write is on its way: the write is refused as missing
and the project's file is not created again; a delete waits for commands already running in the
file, so none writes into a removed file."""

from __future__ import annotations

import threading
from typing import Any

import anyio
import pytest

from hubcore.caller import Caller
from hubcore.errors import HubError
from hubcore.hub import Hub
from hubcore.services.kb import models, signals
from tests.kb.support import kb_file, put, req

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("operation", ["write", "delete", "review", "revert", "forget"])
async def test_a_write_racing_the_project_delete_recreates_nothing(
    hub: Hub, admin: Caller, operation: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = await put(hub, admin, "/fs/a.md", "one")
    await put(hub, admin, "/fs/a.md", "two")
    real = signals.require_project

    async def check_then_delete(core: Any, caller: Caller, project_id: str, **kw: Any) -> None:
        await real(core, caller, project_id, **kw)  # the project is there when checked ...
        monkeypatch.setattr(signals, "require_project", real)
        await hub.projects.delete(admin, project_id)  # ... and deleted before the write's command

    monkeypatch.setattr(signals, "require_project", check_then_delete)
    calls = {
        "write": lambda: put(hub, admin, "/fs/a.md", "three"),
        "delete": lambda: hub.kb.delete(admin, req(models.KbDelete, path="/fs/a.md")),
        "review": lambda: hub.kb.review(admin, req(models.KbReview, path="/fs/a.md")),
        "revert": lambda: hub.kb.revert(admin, req(models.KbRevert, path="/fs/a.md", version=first["version"])),
        "forget": lambda: hub.kb.forget(admin, req(models.KbForget, path="/fs/a.md")),
    }
    with pytest.raises(HubError) as refused:
        await calls[operation]()
    assert refused.value.code == "not_found"
    assert not kb_file(hub).exists()
    assert not any(kb_file(hub).parent.glob("web.db*"))


async def test_a_project_delete_waits_for_the_command_in_flight(hub: Hub, admin: Caller) -> None:
    await put(hub, admin, "/fs/a.md", "one")
    running, release = threading.Event(), threading.Event()

    def slow(conn: Any) -> None:
        running.set()
        release.wait(5)
        conn.execute("UPDATE pages SET trust = trust")

    removed = anyio.Event()
    async with anyio.create_task_group() as tg:
        tg.start_soon(hub.kb.files.execute, "web", slow)
        await anyio.to_thread.run_sync(running.wait, 5)

        async def remove() -> None:
            await hub.kb.files.remove("web")
            removed.set()

        tg.start_soon(remove)
        await anyio.sleep(0.05)
        assert not removed.is_set() and kb_file(hub).exists()  # the command is still running
        release.set()
    assert removed.is_set() and not kb_file(hub).exists()
    assert not any(kb_file(hub).parent.glob("web.db*"))
