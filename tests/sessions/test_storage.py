"""Storage report arithmetic against the files on disk; prune, undo window, sweeper."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hubcore.caller import Caller
from hubcore.clock import FakeClock
from hubcore.errors import HubError
from hubcore.hub import Hub
from tests.foundation.test_gate import assert_problem
from tests.harness import ADMIN, HubClient
from tests.requests import a_brain_put, a_session_end, a_session_start

pytestmark = pytest.mark.anyio

ALICE = Caller.agent("alice")


@pytest.fixture
async def hub(client: HubClient) -> Hub:
    await client.make_agent("alice")
    await client.make_project("web")
    await client.make_project("api")
    return client.app.hub


async def session_with_brain(hub: Hub, project: str, name: str, size: int, *, end: bool = True) -> str:
    s = await hub.sessions.start(ALICE, a_session_start(project, name))
    await hub.brains.write_entry(
        ALICE, a_brain_put(path="/kv/blob", content="x" * size, store="session", session_id=s["session_id"])
    )
    if end:
        await hub.sessions.end(ALICE, a_session_end(session_id=s["session_id"], handoff="bye"))
    return str(s["session_id"])


def on_disk(path: Path) -> int:
    return sum(os.stat(p).st_size for p in (path, Path(f"{path}-wal")) if p.exists())


async def test_report_arithmetic_matches_the_disk(client: HubClient, hub: Hub) -> None:
    a = await session_with_brain(hub, "web", "one", 5000)
    b = await session_with_brain(hub, "api", "two", 9000, end=False)
    r = await client.get("/api/v1/storage", headers=ADMIN)
    assert r.status_code == 200
    rep = r.json()
    rows = {row["project_id"]: row for row in rep["projects"]}
    assert set(rows) == {"web", "api", "space-alice"}
    assert rows["space-alice"]["session_bytes"] == 0 and rows["space-alice"]["events_bytes"] == 0
    brains = Path(client.app.settings.data_dir) / "brains"
    assert rows["web"]["session_bytes"] == on_disk(brains / f"{a}.db")
    assert rows["api"]["session_bytes"] == on_disk(brains / f"{b}.db")
    for kind, member in (("sessions", "session_bytes"), ("artifacts", "artifact_bytes"), ("knowledge", "kb_bytes")):
        assert rep["by_kind"][kind] == sum(row[member] for row in rep["projects"])
    db = Path(client.app.settings.data_dir) / "hub.db"
    assert rep["by_kind"]["events"] == on_disk(db)
    assert sum(row["events_bytes"] for row in rep["projects"]) + rep["events_shared_bytes"] == rep["by_kind"]["events"]
    # The spec's arithmetic: the three row kinds make the total; the hub store is in used_bytes.
    kinds = rep["by_kind"]
    assert rep["total_bytes"] == kinds["sessions"] + kinds["artifacts"] + kinds["knowledge"]
    assert rep["total_bytes"] != sum(kinds.values())  # the store's bytes are not counted twice
    assert rep["used_bytes"] >= rep["total_bytes"] + kinds["events"]
    with client.db() as conn:
        web_bytes = conn.execute(
            "SELECT SUM(length(summary) + length(payload)) FROM events WHERE project_id = 'web'"
        ).fetchone()[0]
    assert rows["web"]["events_bytes"] == web_bytes > 0
    assert rep["prunable"] == {"sessions": 1, "bytes": rows["web"]["session_bytes"]}
    assert rows["web"]["prunable"] == {"sessions": 1, "bytes": rows["web"]["session_bytes"]}
    assert rows["api"]["prunable"] == {"sessions": 0, "bytes": 0}
    assert rep["used_bytes"] > 0 and rep["capacity_bytes"] > rep["free_bytes"] > 0
    assert rep["data_path"] == str(Path(client.app.settings.data_dir).resolve())
    assert "last_write" in rows["web"] and "last_write" not in rows["space-alice"]
    home = (await client.get("/api/v1/home", headers=ADMIN)).json()
    assert rep["node"] == home["node"] and set(rep["node"]) == {"host", "mode"} and rep["node"]["host"]


async def test_syscall_numbers_are_memoised_behind_the_write_counter(client: HubClient, hub: Hub) -> None:
    sid = await session_with_brain(hub, "web", "one", 100, end=False)
    first = (await client.get("/api/v1/storage", headers=ADMIN)).json()
    # A change no write announced (the file grows behind the hub's back) is not seen for ten seconds...
    brain = Path(client.app.settings.data_dir) / "brains" / f"{sid}.db"
    with open(brain, "ab") as fh:
        fh.write(b"\0" * 4096)
    again = (await client.get("/api/v1/storage", headers=ADMIN)).json()
    assert again["by_kind"]["sessions"] == first["by_kind"]["sessions"]
    # ...but any write invalidates the memo at once.
    await hub.brains.write_entry(ALICE, a_brain_put(path="/kv/more", content="y", store="session", session_id=sid))
    after = (await client.get("/api/v1/storage", headers=ADMIN)).json()
    assert after["by_kind"]["sessions"] == on_disk(brain)


async def test_prune_undo_and_sweep(client: HubClient, hub: Hub, clock: FakeClock) -> None:
    sid = await session_with_brain(hub, "web", "one", 1000)
    r = await client.delete(f"/api/v1/storage/sessions/{sid}", headers=ADMIN)
    assert r.status_code == 200
    body = r.json()
    assert body["count"] == 1 and body["pruned"][0]["session_id"] == sid and body["bytes"] > 0
    token = body["pruned"][0]["undo_token"]
    # Pruned sessions are answered as never existing...
    assert_problem(await client.get(f"/api/v1/sessions/{sid}", headers=ADMIN), 404, "not_found")
    assert (await client.get("/api/v1/sessions", headers=ADMIN)).json()["sessions"] == []
    # ...and their name is held until the window passes.
    with pytest.raises(HubError) as caught:
        await hub.sessions.start(ALICE, a_session_start("web", "one"))
    assert caught.value.code == "conflict" and sid in caught.value.message
    # Undo within the window restores, once.
    clock.advance(59)
    r = await client.post(f"/api/v1/prune/undo/{token}", headers=ADMIN)
    assert r.status_code == 200 and r.json()["session_id"] == sid
    assert_problem(await client.post(f"/api/v1/prune/undo/{token}", headers=ADMIN), 404, "not_found")
    assert (await client.get(f"/api/v1/sessions/{sid}", headers=ADMIN)).json()["handoff"] == "bye"
    # Prune again, let the window pass: the undo is refused and the sweeper removes row and file.
    token = (await client.delete(f"/api/v1/storage/sessions/{sid}", headers=ADMIN)).json()["pruned"][0]["undo_token"]
    clock.advance(60)
    assert_problem(await client.post(f"/api/v1/prune/undo/{token}", headers=ADMIN), 404, "not_found")
    assert await hub.storage.sweep() == [sid]
    assert not hub.brains.path_of(sid).exists()
    with client.db() as conn:
        assert conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0] == 0
        assert conn.execute("SELECT COUNT(*) FROM events WHERE session_id = ?", (sid,)).fetchone()[0] == 2
    again = await hub.sessions.start(ALICE, a_session_start("web", "one"))
    assert again["started"] == "created" and again["session_id"] != sid


async def test_prune_never_touches_active_sessions(client: HubClient, hub: Hub) -> None:
    running = await session_with_brain(hub, "web", "live", 10, end=False)
    assert_problem(await client.delete(f"/api/v1/storage/sessions/{running}", headers=ADMIN), 409, "conflict")
    ended_web = await session_with_brain(hub, "web", "old", 10)
    ended_api = await session_with_brain(hub, "api", "old", 10)
    r = await client.delete("/api/v1/storage/projects/web/sessions", headers=ADMIN)
    assert [p["session_id"] for p in r.json()["pruned"]] == [ended_web]
    r = await client.delete("/api/v1/storage/sessions", headers=ADMIN)
    assert [p["session_id"] for p in r.json()["pruned"]] == [ended_api]
    tokens = {p["undo_token"] for p in r.json()["pruned"]}
    assert len(tokens) == 1
    assert (await hub.sessions.get(Caller.admin(), running))["status"] == "active"
    assert_problem(await client.delete("/api/v1/storage/projects/ghost/sessions", headers=ADMIN), 404, "not_found")
    assert_problem(await client.delete("/api/v1/storage/sessions/ses_ghost", headers=ADMIN), 404, "not_found")


async def test_prune_and_storage_are_admin_only(client: HubClient, hub: Hub) -> None:
    token = await client.make_agent("bob")
    for method, path in (
        ("GET", "/api/v1/storage"),
        ("DELETE", "/api/v1/storage/sessions"),
        ("POST", "/api/v1/prune/undo/x"),
    ):
        assert_problem(await client.request(method, path, headers=client.agent(token)), 401, "unauthenticated")


async def test_home_reports_prunable(client: HubClient, hub: Hub) -> None:
    await session_with_brain(hub, "web", "old", 2000)
    home = (await client.get("/api/v1/home", headers=ADMIN)).json()
    report = (await client.get("/api/v1/storage", headers=ADMIN)).json()
    assert home["prunable"] == report["prunable"] and home["prunable"]["sessions"] == 1


async def test_project_delete_removes_its_sessions_and_brains(client: HubClient, hub: Hub) -> None:
    sid = await session_with_brain(hub, "web", "one", 100, end=False)
    assert hub.brains.path_of(sid).exists()
    assert (await client.delete("/api/v1/projects/web", headers=ADMIN)).status_code == 204
    assert not hub.brains.path_of(sid).exists()
    with client.db() as conn:
        assert conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0] == 0


async def test_project_stats_count_sessions_and_their_bytes(client: HubClient, hub: Hub) -> None:
    before = (await client.get("/api/v1/projects/web/stats", headers=ADMIN)).json()
    assert before["sessions"] == 0
    sid = await session_with_brain(hub, "web", "one", 3000)
    stats = (await client.get("/api/v1/projects/web/stats", headers=ADMIN)).json()
    assert stats["sessions"] == 1
    brain_bytes = on_disk(hub.brains.path_of(sid))
    with client.db() as conn:
        feed_bytes = conn.execute("SELECT bytes FROM feed_stats WHERE project_id = 'web'").fetchone()[0]
    assert stats["disk_bytes"] == feed_bytes + brain_bytes
    await client.delete(f"/api/v1/storage/sessions/{sid}", headers=ADMIN)
    assert (await client.get("/api/v1/projects/web/stats", headers=ADMIN)).json()["sessions"] == 0


async def test_home_agents_active_counts_recent_session_work(client: HubClient, hub: Hub, clock: FakeClock) -> None:
    sid = (await hub.sessions.start(ALICE, a_session_start("web", "work")))["session_id"]
    with client.db() as conn:
        assert conn.execute("SELECT last_seen_at FROM agents WHERE id = 'alice'").fetchone()[0] is None
    assert (await client.get("/api/v1/home", headers=ADMIN)).json()["agents_active"] == 1
    clock.advance(901)
    assert (await client.get("/api/v1/home", headers=ADMIN)).json()["agents_active"] == 0
    await hub.sessions.touch(sid)
    assert (await client.get("/api/v1/home", headers=ADMIN)).json()["agents_active"] == 1
    await hub.sessions.end(ALICE, a_session_end(session_id=sid))
    clock.advance(901)
    assert (await client.get("/api/v1/home", headers=ADMIN)).json()["agents_active"] == 0


async def test_home_first_run_until_an_agent_has_called(client: HubClient) -> None:
    """`first_run` (the web app's connect guide, issue 25 part 6): true until an agent's token is
    used; an agent that exists but never called keeps it true."""
    home = await client.get("/api/v1/home", headers=ADMIN)
    assert home.json()["first_run"] is True
    token = await client.make_agent("newcomer")
    assert (await client.get("/api/v1/home", headers=ADMIN)).json()["first_run"] is True
    assert (await client.get("/api/v1/projects", headers=client.agent(token))).status_code == 200
    assert (await client.get("/api/v1/home", headers=ADMIN)).json()["first_run"] is False
