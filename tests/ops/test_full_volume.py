"""A full data volume: every write on every surface is the spec's retryable `unavailable` (503 over
REST) with nothing of it stored, the same hub takes the same write once space returns, and `check`
and `doctor` give their verdict on the full volume without writing to it.

The volume is a real small tmpfs (the tests run as root; where mounting is impossible they are
skipped with the reason). Each file write seam is also refused with an injected ENOSPC or a real
SQLITE_FULL (`max_page_count`), which needs no mount."""

from __future__ import annotations

import errno
import os
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hubcore.caller import Caller
from hubcore.clock import FakeClock
from hubcore.errors import HubError
from hubcore.hub import Hub
from hubcore.ops.check import check
from hubcore.ops.doctor import doctor
from hubcore.services.artifacts.models import ArtifactPublish
from hubcore.services.requests import parse
from tests.artifacts.support import state as artifact_state
from tests.backup.support import tree
from tests.cli.conftest import cli, cli_env
from tests.harness import ADMIN, HubClient, hub_client
from tests.harness import test_settings as make_settings
from tests.mcp.live import live_hub, structured, tool_error
from tests.ops.support import make_hub_dir, problem_lines, readings

pytestmark = pytest.mark.anyio

VOLUME_BYTES = 24 * 1024 * 1024
BIG = "y" * 200_000  # more than any write-ahead log frame a reset log could reuse


@pytest.fixture
def volume(tmp_path: Path) -> Iterator[Path]:
    """A 24 MiB tmpfs mounted for the test and unmounted after it."""
    mount = tmp_path / "volume"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={VOLUME_BYTES}", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(volume: Path) -> list[Path]:
    """Take every free byte of the volume; returns the filler files (delete them to free it)."""
    fillers: list[Path] = []
    for i in range(4):  # the last blocks a file could not take in one go
        path = volume / f"filler-{i}"
        fillers.append(path)
        try:
            with path.open("wb") as out:
                while True:
                    out.write(b"\0" * 65536)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    assert os.statvfs(volume).f_bavail == 0
    return fillers


def empty_logs(*dbs: Path) -> None:
    """Checkpoint and truncate the write-ahead logs, so a write needs new space on the volume
    (a log reset after a checkpoint would reuse its own blocks)."""
    for db in dbs:
        conn = sqlite3.connect(db)
        try:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            conn.close()


def refused_full(response: Any) -> None:
    assert response.status_code == 503, response.text
    body = response.json()
    assert body["code"] == "unavailable"
    assert body["details"] == {"reason": "volume_full"}
    assert "volume is full" in body["detail"]


def stored(client: HubClient) -> dict[str, Any]:
    """What the writes below may touch: rows of hub.db, the knowledge base files, the blobs."""
    hub = client.app.hub
    with client.db() as conn:
        rows = {
            table: conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            for table in ("projects", "events", "artifacts", "artifact_versions", "artifact_comments")
        }
    data = hub.data_dir
    return {"rows": rows, "kb": tree(data / "kb"), "blobs": tree(data / "blobs"), "brains": tree(data / "brains")}


async def publish(hub: Hub, content: str) -> dict[str, Any]:
    return await hub.artifacts.publish_artifact(
        Caller.admin(),
        parse(ArtifactPublish, {"project_id": "web", "title": "Page", "kind": "html", "content": content}),
    )


async def test_every_rest_and_service_write_is_a_retryable_503_then_succeeds_once_space_returns(volume: Path) -> None:
    settings = make_settings(volume / "data")
    async with hub_client(settings, FakeClock()) as client:
        hub = client.app.hub
        await client.make_project("web")
        await client.make_project("docs")  # no knowledge base file yet: the write must create one
        bob = client.agent(await client.make_agent("bob"))
        kept = await publish(hub, "<p>kept</p>")
        r = await client.put("/api/v1/projects/web/kb/pages/fs/index.md", json={"content": "# Web\n"}, headers=ADMIN)
        assert r.status_code == 200, r.text
        empty_logs(hub.data_dir / "hub.db", hub.data_dir / "kb" / "web.db")
        writes = {
            "project": lambda: client.post(
                "/api/v1/projects", json={"id": "later", "display_name": BIG[:200]}, headers=ADMIN
            ),
            "idea": lambda: client.post(
                "/api/v1/projects/web/ideas", headers=ADMIN, json={"summary": "s", "body": BIG[:60_000]}
            ),
            "kb page": lambda: client.put(
                "/api/v1/projects/web/kb/pages/fs/notes.md", json={"content": BIG}, headers=ADMIN
            ),
            "new kb file": lambda: client.put(
                "/api/v1/projects/docs/kb/pages/fs/index.md", json={"content": BIG}, headers=ADMIN
            ),
            "comment": lambda: client.post(
                f"/api/v1/artifacts/{kept['artifact_id']}/comments", json={"body": "é" * 1000}, headers=ADMIN
            ),
        }
        fillers = fill(volume)
        before = stored(client)
        for name, write in writes.items():
            refused_full(await write())
            assert stored(client) == before, name
        # Reads still answer, an agent's too (its last-seen stamp waits for space).
        assert (await client.get("/api/v1/projects", headers=bob)).status_code == 200
        assert (await client.get("/api/v1/search", params={"q": "kept"}, headers=ADMIN)).status_code == 200
        with pytest.raises(HubError) as refused:
            await publish(hub, BIG)
        assert (refused.value.code, refused.value.retryable) == ("unavailable", True)
        assert stored(client) == before
        assert not (hub.data_dir / "kb" / "docs.db").exists()  # no empty store left behind

        for path in fillers:
            path.unlink()
        for name, write in writes.items():
            answer = await write()
            assert answer.status_code in (200, 201), (name, answer.text)
        assert (await publish(hub, BIG))["version"] == 1
        r = await client.get("/api/v1/projects/docs/kb/pages/fs/index.md", headers=ADMIN)
        assert r.json()["content"] == BIG


async def test_mcp_writes_are_retryable_tool_errors_then_succeed(volume: Path) -> None:
    async with live_hub(make_settings(volume / "data")) as live:
        await live.make_project("web")
        hub = live.app.hub
        token = await live.make_agent("alice")
        async with live.client(token) as bot:
            session = structured(await bot.call_tool("session_start", {"project_id": "web", "name": "s"}))
            empty_logs(hub.data_dir / "hub.db")
            fillers = fill(volume)
            before = artifact_state(hub)
            publish_args = {"project_id": "web", "title": "Page", "kind": "html", "content": BIG}
            error = tool_error(await bot.call_tool("artifact_publish", publish_args), "unavailable")
            assert error["retryable"] is True and error["details"] == {"reason": "volume_full"}
            assert artifact_state(hub) == before
            put = {"path": "/kv/note", "content": BIG, "store": "session", "session_id": session["session_id"]}
            error = tool_error(await bot.call_tool("brain_put", put), "unavailable")
            assert error["retryable"] is True
            assert not (hub.data_dir / "brains" / f"{session['session_id']}.db").exists()
            for path in fillers:
                path.unlink()
            assert structured(await bot.call_tool("artifact_publish", publish_args))["version"] == 1
            structured(await bot.call_tool("brain_put", put))
            got = structured(
                await bot.call_tool(
                    "brain_get", {"path": "/kv/note", "store": "session", "session_id": session["session_id"]}
                )
            )
            assert got["content"] == BIG


async def test_check_and_doctor_give_their_verdict_on_a_full_volume_and_write_nothing(
    volume: Path, tmp_path: Path
) -> None:
    made = await make_hub_dir(volume / "data")
    fill(volume)
    before = tree(made.root)
    found = await check(made.root, made.settings)
    assert problem_lines(found) == []
    assert readings(found)["search index"].startswith("not compared: the volume has 0 bytes free")
    report = doctor(made.root, min_free_bytes=1, now=0.0)
    assert [str(f) for f in report if f.problem] == [
        "free space: 0 bytes free, at or below the 1-byte margin (min_free_bytes)"
    ]
    env = cli_env(tmp_path)
    run = await cli(env, "check", "--data-dir", str(made.root))
    assert (run.code, run.err) == (0, "")
    assert run.out.splitlines()[-1] == f"check: {made.root} ok"
    run = await cli(env, "doctor", "--data-dir", str(made.root))
    assert run.code == 1 and "Traceback" not in run.err
    assert run.out.splitlines()[-1] == f"doctor: 1 problem in {made.root}"
    assert tree(made.root) == before


# -- injected at each seam (no mount needed) -----------------------------------------------------------------


@pytest.fixture
async def hub(client: HubClient) -> Hub:
    await client.make_project("web")
    return client.app.hub


def no_space(*_args: Any, **_kwargs: Any) -> Any:
    raise OSError(errno.ENOSPC, "No space left on device")


async def test_a_blob_write_out_of_space_leaves_no_temporary_file_nor_row(
    hub: Hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = artifact_state(hub)
    monkeypatch.setattr("hubcore.store.blobs.os.fsync", no_space)
    with pytest.raises(HubError) as refused:
        await publish(hub, "<p>new</p>")
    assert (refused.value.code, refused.value.retryable, refused.value.details) == (
        "unavailable",
        True,
        {"reason": "volume_full"},
    )
    assert artifact_state(hub) == before
    assert list((hub.data_dir / "blobs").rglob("*")) == []  # neither the temporary file nor its shard
    monkeypatch.undo()
    assert (await publish(hub, "<p>new</p>"))["version"] == 1


async def test_a_store_file_that_cannot_be_set_up_is_removed_and_retryable(
    client: HubClient, hub: Hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    def created_then_full(path: Path, **_kwargs: Any) -> sqlite3.Connection:
        sqlite3.connect(path).close()  # SQLite made the file, then could not put it in WAL mode
        err = sqlite3.OperationalError("database or disk is full")
        err.sqlite_errorcode = 13  # type: ignore[attr-defined]  # SQLITE_FULL, as SQLite raises it
        raise err

    monkeypatch.setattr("hubcore.store.actor.connect", created_then_full)
    r = await client.put("/api/v1/projects/web/kb/pages/fs/index.md", json={"content": "# Web\n"}, headers=ADMIN)
    refused_full(r)
    assert list((hub.data_dir / "kb").iterdir()) == []  # the half-made store file is gone
    monkeypatch.undo()
    r = await client.put("/api/v1/projects/web/kb/pages/fs/index.md", json={"content": "# Web\n"}, headers=ADMIN)
    assert r.status_code == 200, r.text


async def test_sqlite_full_inside_a_write_is_retryable_and_the_store_recovers(client: HubClient, hub: Hub) -> None:
    store = hub.core.store
    pages = await store.execute(lambda conn: int(conn.execute("PRAGMA page_count").fetchone()[0]))
    await store.execute(lambda conn: conn.execute(f"PRAGMA max_page_count={pages + 2}"))
    before = stored(client)
    r = await client.post("/api/v1/projects/web/ideas", headers=ADMIN, json={"summary": "s", "body": BIG[:60_000]})
    refused_full(r)
    assert stored(client) == before
    await store.execute(lambda conn: conn.execute("PRAGMA max_page_count=4294967294"))
    r = await client.post("/api/v1/projects/web/ideas", headers=ADMIN, json={"summary": "s", "body": BIG[:60_000]})
    assert r.status_code == 201, r.text


async def test_an_unnamed_file_write_out_of_space_is_still_a_retryable_503(
    client: HubClient, hub: Hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hub.projects, "create", no_space)
    refused_full(await client.post("/api/v1/projects", json={"id": "later"}, headers=ADMIN))
