import pytest

from tests.harness import ADMIN, HubClient

pytestmark = pytest.mark.anyio


async def test_agent_creation_makes_personal_space(client: HubClient) -> None:
    token = await client.make_agent("bot")
    r = await client.get("/api/v1/projects", headers=client.agent(token))
    assert r.status_code == 200
    assert [p["id"] for p in r.json()["projects"]] == ["space-bot"]
    r = await client.get("/api/v1/projects/space-bot", headers=ADMIN)
    assert r.json()["is_personal"] is True
