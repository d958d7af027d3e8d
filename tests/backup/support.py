"""Shared setup for the backup tests: a hub holding one of everything, and a tree snapshot."""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest

from hubcore.caller import Caller
from hubcore.hub import Hub
from hubcore.ops import backup as backup_mod
from hubcore.services.artifacts.models import ArtifactPublish
from hubcore.services.kb.models import KbWrite
from hubcore.services.projects import ProjectCreate
from hubcore.services.requests import parse
from tests.requests import a_brain_put, a_session_start

ADMIN = Caller.admin()
ALICE = Caller.agent("alice")


async def populate(hub: Hub, *, with_agent: bool = True) -> dict[str, Any]:
    """A project with a session brain, a knowledge page and an artifact: one file of each kind."""
    from hubcore.services.agents import AgentCreate

    if with_agent:
        await hub.agents.create(ADMIN, parse(AgentCreate, {"id": "alice", "display_name": "Alice"}))
    await hub.projects.create(ADMIN, parse(ProjectCreate, {"id": "web"}))
    session = await hub.sessions.start(ALICE, a_session_start("web", "one"))
    sid = str(session["session_id"])
    await hub.brains.write_entry(
        ALICE, a_brain_put(path="/kv/note", content="remember", store="session", session_id=sid)
    )
    await hub.kb.write(ADMIN, parse(KbWrite, {"project_id": "web", "path": "/fs/index.md", "content": "# Web\n"}))
    made = await hub.artifacts.publish_artifact(
        ADMIN, parse(ArtifactPublish, {"project_id": "web", "title": "Page", "kind": "html", "content": "<p>kept</p>"})
    )
    return {"session_id": sid, "artifact_id": made["artifact_id"], "blob": hashlib.sha256(b"<p>kept</p>").hexdigest()}


def tree(root: Path) -> dict[str, tuple[str, int, str]]:
    """Every entry under `root` (symlinks not followed): kind, mode and content digest, so any
    change on disk (a file, a directory, a link, a permission) shows."""
    out: dict[str, tuple[str, int, str]] = {}
    if not root.exists() and not root.is_symlink():
        return out
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in [*dirnames, *filenames]:
            path = Path(dirpath) / name
            st = path.lstat()
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                out[rel] = ("link", st.st_mode, os.readlink(path))
            elif path.is_dir():
                out[rel] = ("dir", st.st_mode, "")
            else:
                out[rel] = ("file", st.st_mode, hashlib.sha256(path.read_bytes()).hexdigest())
    return out


class Blocked:
    """Holds the backup's worker inside its first blob copy until released."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.inside, self.release = threading.Event(), threading.Event()
        real = backup_mod._copy_verbatim

        def copy_blob(*args: Any) -> Any:
            self.inside.set()
            self.release.wait(10)
            return real(*args)

        monkeypatch.setattr(backup_mod, "_copy_verbatim", copy_blob)

    async def entered(self) -> None:
        assert await anyio.to_thread.run_sync(self.inside.wait, 10)
