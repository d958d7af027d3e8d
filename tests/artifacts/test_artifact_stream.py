"""`artifact-live` messages on `GET /api/v1/stream`: a draft, an in-place change and the sealing update
each send `{artifact_id, version, live_rev}` (ids only, never content), and an agent's stream hears
only of artifacts in projects it can see."""

from __future__ import annotations

from typing import Any

import pytest

from hubcore.caller import Caller
from hubcore.hub import Hub
from hubcore.services.artifacts import ArtifactDraft, ArtifactPublish, ArtifactUpdate
from hubcore.services.requests import parse
from hubhttp.api import stream as stream_module
from tests.feed.test_stream import open_stream
from tests.harness import ADMIN_TOKEN, HubClient

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True)
def no_coalescing_pause(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stream_module, "COALESCE_SECS", 0.0)
    monkeypatch.setattr(stream_module, "AGENT_COALESCE_SECS", 0.0)


async def publish(hub: Hub, project_id: str) -> str:
    made = await hub.artifacts.publish_artifact(
        Caller.admin(),
        parse(
            ArtifactPublish, {"project_id": project_id, "title": "T", "kind": "html", "content": "<p>secret text</p>"}
        ),
    )
    return str(made["artifact_id"])


async def draft(hub: Hub, artifact_id: str, content: str) -> dict[str, Any]:
    return await hub.artifacts.draft(
        Caller.admin(), parse(ArtifactDraft, {"artifact_id": artifact_id, "content": content})
    )


async def test_live_moves_reach_the_stream_as_ids(client: HubClient) -> None:
    await client.make_project("web")
    hub = client.app.hub
    aid = await publish(hub, "web")
    async with open_stream(client, ADMIN_TOKEN) as s:
        assert await s.chunk() == b": connected\n\n"
        await draft(hub, aid, "<p>one</p>")
        assert await s.events(1) == [("artifact-live", {"artifact_id": aid, "version": 2, "live_rev": 1})]
        await draft(hub, aid, "<p>two</p>")
        assert await s.events(1) == [("artifact-live", {"artifact_id": aid, "version": 2, "live_rev": 2})]
        await hub.artifacts.update(Caller.admin(), parse(ArtifactUpdate, {"artifact_id": aid, "content": "x"}))
        got = await s.events(2)
        assert ("artifact-live", {"artifact_id": aid, "version": 2, "live_rev": 0}) in got
        assert [name for name, _ in got] == ["artifact-live", "feed"]


async def test_an_agent_hears_only_of_visible_artifacts(client: HubClient) -> None:
    await client.make_project("web")
    await client.make_project("vault", confidential=True)
    token = await client.make_agent("bot")
    hub = client.app.hub
    hidden, shown = await publish(hub, "vault"), await publish(hub, "web")
    async with open_stream(client, token) as s:
        assert await s.chunk() == b": connected\n\n"
        await draft(hub, hidden, "<p>hidden</p>")
        await draft(hub, shown, "<p>shown</p>")
        assert await s.events(1) == [("artifact-live", {"artifact_id": shown, "version": 2, "live_rev": 1})]
