"""Projects over REST: every rule of the spec's Project section."""

from __future__ import annotations

import sqlite3

import pytest

from hubcore.caller import Caller
from hubcore.errors import HubError
from hubcore.parts import Part
from tests.foundation.test_gate import assert_problem, project_count
from tests.harness import ADMIN, HubClient
from tests.requests import a_project_update

pytestmark = pytest.mark.anyio

PROJECT_FIELDS = {
    "id",
    "display_name",
    "owner_agent",
    "created_at",
    "unseen_events",
    "is_personal",
    "confidential",
    "artifact_password_policy",
}


async def test_create_by_admin(client: HubClient) -> None:
    r = await client.post("/api/v1/projects", json={"id": "alpha", "display_name": "Alpha"}, headers=ADMIN)
    assert r.status_code == 201
    p = r.json()
    assert set(p) == PROJECT_FIELDS
    assert p["id"] == "alpha" and p["display_name"] == "Alpha" and p["owner_agent"] is None
    assert p["is_personal"] is False and p["confidential"] is False and p["unseen_events"] == 0
    assert p["artifact_password_policy"] == "optional"
    assert p["created_at"].endswith("Z")
    r = await client.get("/api/v1/projects/alpha", headers=ADMIN)
    assert r.json() == p


async def test_create_by_agent_records_owner_and_display_name_defaults_to_id(client: HubClient) -> None:
    token = await client.make_agent("bot")
    r = await client.post("/api/v1/projects", json={"id": "beta"}, headers=client.agent(token))
    assert r.status_code == 201
    assert r.json()["owner_agent"] == "bot" and r.json()["display_name"] == "beta"


async def test_unknown_fields_are_ignored(client: HubClient) -> None:
    r = await client.post("/api/v1/projects", json={"id": "gamma", "colour": "red", "owner_agent": "x"}, headers=ADMIN)
    assert r.status_code == 201 and "colour" not in r.json() and r.json()["owner_agent"] is None


@pytest.mark.parametrize("bad", ["", "A", "-lead", "has space", "x" * 64, "space-mine", "ünï", 7, None])
async def test_bad_ids_are_refused_and_nothing_written(client: HubClient, bad: object) -> None:
    before = project_count(client)
    r = await client.post("/api/v1/projects", json={"id": bad}, headers=ADMIN)
    assert_problem(r, 400, "invalid_argument")
    assert project_count(client) == before


async def test_id_length_edge(client: HubClient) -> None:
    r = await client.post("/api/v1/projects", json={"id": "a" * 63}, headers=ADMIN)
    assert r.status_code == 201
    r = await client.post("/api/v1/projects", json={"id": "b" * 64}, headers=ADMIN)
    assert_problem(r, 400, "invalid_argument")


async def test_display_name_edge(client: HubClient) -> None:
    r = await client.post("/api/v1/projects", json={"id": "n1", "display_name": "x" * 200}, headers=ADMIN)
    assert r.status_code == 201
    before = project_count(client)
    for bad in ("x" * 201, "   ", "two\nlines", 5):
        r = await client.post("/api/v1/projects", json={"id": "n2", "display_name": bad}, headers=ADMIN)
        assert_problem(r, 400, "invalid_argument")
    assert project_count(client) == before


async def test_duplicate_is_conflict(client: HubClient) -> None:
    await client.make_project("dup", display_name="First")
    r = await client.post("/api/v1/projects", json={"id": "dup", "display_name": "Second"}, headers=ADMIN)
    assert_problem(r, 409, "conflict")
    assert (await client.get("/api/v1/projects/dup", headers=ADMIN)).json()["display_name"] == "First"


async def test_patch_changes_named_fields_only(client: HubClient) -> None:
    await client.make_project("p", display_name="Old", artifact_password_policy="required")
    r = await client.patch("/api/v1/projects/p", json={"display_name": "New", "whatever": 1}, headers=ADMIN)
    assert r.status_code == 200
    assert r.json()["display_name"] == "New" and r.json()["artifact_password_policy"] == "required"
    r = await client.patch("/api/v1/projects/p", json={"artifact_password_policy": "off"}, headers=ADMIN)
    assert r.json()["artifact_password_policy"] == "off" and r.json()["display_name"] == "New"


async def test_patch_refuses_an_id_even_unchanged_and_writes_nothing(client: HubClient) -> None:
    await client.make_project("p", display_name="Old")
    for body in ({"id": "p", "display_name": "New"}, {"id": "q"}):
        r = await client.patch("/api/v1/projects/p", json=body, headers=ADMIN)
        assert_problem(r, 400, "invalid_argument")
    assert (await client.get("/api/v1/projects/p", headers=ADMIN)).json()["display_name"] == "Old"


async def test_patch_bad_values_change_nothing(client: HubClient) -> None:
    await client.make_project("p", display_name="Old")
    body = {"display_name": "New", "artifact_password_policy": "sometimes"}
    assert_problem(await client.patch("/api/v1/projects/p", json=body, headers=ADMIN), 400, "invalid_argument")
    assert_problem(
        await client.patch("/api/v1/projects/p", json={"confidential": "yes"}, headers=ADMIN), 400, "invalid_argument"
    )
    p = (await client.get("/api/v1/projects/p", headers=ADMIN)).json()
    assert p["display_name"] == "Old" and p["artifact_password_policy"] == "optional"


async def test_missing_project_is_404_on_every_verb(client: HubClient) -> None:
    for method in ("GET", "PATCH", "DELETE"):
        kwargs = {"json": {"display_name": "x"}} if method == "PATCH" else {}
        r = await client.request(method, "/api/v1/projects/ghost", headers=ADMIN, **kwargs)
        doc = assert_problem(r, 404, "not_found")
        assert doc["detail"] == "project 'ghost' not found"


async def test_delete_is_admin_only_and_removes_the_project(client: HubClient) -> None:
    await client.make_project("gone")
    token = await client.make_agent("bot")
    assert_problem(await client.delete("/api/v1/projects/gone", headers=client.agent(token)), 401, "unauthenticated")
    r = await client.delete("/api/v1/projects/gone", headers=ADMIN)
    assert r.status_code == 204 and r.content == b""
    assert_problem(await client.get("/api/v1/projects/gone", headers=ADMIN), 404, "not_found")
    with client.db() as conn:
        assert conn.execute("SELECT COUNT(*) FROM projects WHERE id = 'gone'").fetchone()[0] == 0


async def test_personal_space_cannot_be_deleted_but_can_be_set(client: HubClient) -> None:
    await client.make_agent("bot")
    r = await client.delete("/api/v1/projects/space-bot", headers=ADMIN)
    assert_problem(r, 409, "conflict")
    r = await client.patch("/api/v1/projects/space-bot", json={"display_name": "Bot HQ"}, headers=ADMIN)
    assert r.status_code == 200 and r.json()["display_name"] == "Bot HQ" and r.json()["is_personal"] is True


async def test_visibility_of_confidential_projects_and_spaces(client: HubClient) -> None:
    alice, bob = await client.make_agent("alice"), await client.make_agent("bob")
    await client.make_project("open")
    await client.make_project("secret", confidential=True)
    r = await client.post("/api/v1/projects", json={"id": "alices", "confidential": True}, headers=client.agent(alice))
    assert r.status_code == 201 and r.json()["confidential"] is True

    async def visible(token: str) -> list[str]:
        r = await client.get("/api/v1/projects", headers=client.agent(token))
        return [p["id"] for p in r.json()["projects"]]

    assert await visible(alice) == ["alices", "open", "space-alice"]
    assert await visible(bob) == ["open", "space-bob"]
    r = await client.post("/api/v1/agents/bob/grants", json={"project_id": "secret"}, headers=ADMIN)
    assert r.status_code == 201
    assert await visible(bob) == ["open", "secret", "space-bob"]
    await client.delete("/api/v1/agents/bob/grants/secret", headers=ADMIN)
    assert await visible(bob) == ["open", "space-bob"]
    r = await client.get("/api/v1/projects", headers=ADMIN)
    assert len(r.json()["projects"]) == 5


async def test_missing_and_denied_look_the_same_to_an_agent(client: HubClient) -> None:
    await client.make_agent("bob")
    await client.make_project("secret", confidential=True)
    projects = client.app.hub.projects
    errors = []
    for pid in ("secret", "ghost"):
        with pytest.raises(HubError) as caught:
            await projects.get(Caller.agent("bob"), pid)
        errors.append((caught.value.code, caught.value.message.replace(pid, "<id>")))
    assert errors[0] == errors[1] == ("not_found", "project '<id>' not found")


async def test_making_public_is_admin_only(client: HubClient) -> None:
    token = await client.make_agent("alice")
    r = await client.post("/api/v1/projects", json={"id": "mine", "confidential": True}, headers=client.agent(token))
    assert r.status_code == 201
    with pytest.raises(HubError) as caught:
        hidden = a_project_update(project_id="mine", confidential=False)
        await client.app.hub.projects.update(Caller.agent("alice"), hidden)
    assert caught.value.code == "forbidden"
    assert (await client.get("/api/v1/projects/mine", headers=ADMIN)).json()["confidential"] is True
    # An agent may make a visible project confidential: it keeps sight of it, and the feed says so.
    await client.make_project("open")
    hide = a_project_update(project_id="open", confidential=True)
    done = await client.app.hub.projects.update(Caller.agent("alice"), hide)
    assert done["confidential"] is True
    r = await client.get("/api/v1/projects", headers=client.agent(token))
    assert "open" in [p["id"] for p in r.json()["projects"]]
    with client.db() as conn:
        events = conn.execute("SELECT kind, actor, payload FROM events WHERE project_id = 'open'").fetchall()
    assert [(e[0], e[1]) for e in events] == [("signal", "alice")] and "made_confidential" in events[0][2]
    r = await client.patch("/api/v1/projects/open", json={"confidential": False}, headers=ADMIN)
    assert r.status_code == 200 and r.json()["confidential"] is False


class RecordingPart(Part):
    def __init__(self) -> None:
        self.purged: list[str] = []
        self.after: list[str] = []

    def purge_rows(self, conn: sqlite3.Connection, project_id: str) -> None:
        assert conn.in_transaction
        assert conn.execute("SELECT 1 FROM projects WHERE id = ?", (project_id,)).fetchone()
        self.purged.append(project_id)

    async def after_delete(self, project_id: str) -> None:
        self.after.append(project_id)


async def test_delete_asks_every_part_to_remove_its_share(client: HubClient) -> None:
    part = RecordingPart()
    client.app.hub.core.parts = (*client.app.hub.core.parts, part)
    await client.make_project("doomed")
    assert (await client.delete("/api/v1/projects/doomed", headers=ADMIN)).status_code == 204
    assert part.purged == ["doomed"] and part.after == ["doomed"]
    await client.delete("/api/v1/projects/doomed", headers=ADMIN)
    assert part.purged == ["doomed"]  # a refused delete purges nothing
