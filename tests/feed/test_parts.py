"""The hub is a list of parts (DESIGN section 1): what each brings reaches the user through the
hub-wide loops, and a part that is absent is simply not in the list."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from hubcore.caller import Caller
from hubcore.hub import Hub
from hubcore.parts import Part, overrides
from hubcore.parts.enrolment import EnrolmentPart
from hubcore.parts.feeds import FeedsPart
from hubcore.parts.push import PushPart
from tests.harness import ADMIN, HubClient
from tests.requests import a_brief

pytestmark = pytest.mark.anyio


async def test_the_hub_is_its_list_of_parts(hub: Hub) -> None:
    assert [part.name for part in hub.parts] == [
        "projects-and-agents",
        "feeds-and-inbox",
        "sessions-and-brains",
        "knowledge-base",
        "artifacts",
        "search",
        "enrolment",
        "integrity",
        "push",
    ]
    assert hub.core.parts == hub.parts
    # Commit observers are exactly the parts that bring one.
    assert hub.publisher.observers == [p.on_commit for p in hub.parts if overrides(p, "on_commit")]
    assert [type(p) for p in hub.parts if overrides(p, "on_commit")] == [FeedsPart, EnrolmentPart, PushPart]


async def test_an_absent_part_reads_as_null_not_as_a_made_up_zero(client: HubClient, hub: Hub) -> None:
    await client.make_project("proj")
    home = (await client.get("/api/v1/home", headers=ADMIN)).json()
    stats = (await client.get("/api/v1/projects/proj/stats", headers=ADMIN)).json()
    assert stats["sessions"] == 0 and home["prunable"]["sessions"] == 0
    assert stats["artifacts"] == 0  # the artifacts part is in it: no artifact yet
    assert stats["kb_pages"] == 0  # the knowledge base part is in it: no page yet
    hub.core.parts = tuple(p for p in hub.parts if p.name not in ("sessions-and-brains", "knowledge-base", "artifacts"))
    home = (await client.get("/api/v1/home", headers=ADMIN)).json()
    stats = (await client.get("/api/v1/projects/proj/stats", headers=ADMIN)).json()
    assert stats["sessions"] is None and stats["kb_pages"] is None and stats["events"] == 0
    assert stats["artifacts"] is None  # no such part in this hub
    assert home["prunable"] == {"sessions": None, "bytes": None}
    # The data directory's numbers and the node are the hub's own: measured without any part.
    storage = home["storage"]
    assert storage["used_bytes"] > 0 and storage["capacity_bytes"] >= storage["free_bytes"] > 0
    assert home["node"]["host"] and home["node"]["mode"] == "loopback"


async def test_a_new_part_brings_its_storage_and_brief_without_touching_another(client: HubClient, hub: Hub) -> None:
    class KnowledgePart(Part):
        async def project_bytes(self) -> Mapping[str, Mapping[str, int | None]]:
            return {"knowledge": {"proj": 4096}}

        def brief(self, conn: Any, caller: Any, project_id: str, since: Mapping[str, Any]) -> Mapping[str, Any]:
            return {"stale_pages": {"items": [{"path": "/fs/old.md"}], "more": 0}}

    await client.make_project("proj")
    before = (await client.get("/api/v1/storage", headers=ADMIN)).json()
    assert [r["kb_bytes"] for r in before["projects"] if r["project_id"] == "proj"] == [0]
    hub.core.parts = (*hub.parts, KnowledgePart())
    after = (await client.get("/api/v1/storage", headers=ADMIN)).json()
    assert [r["kb_bytes"] for r in after["projects"] if r["project_id"] == "proj"] == [4096]
    assert after["by_kind"]["knowledge"] == before["by_kind"]["knowledge"] + 4096
    brief = await hub.brief.brief(Caller.admin(), a_brief(project_id="proj"))
    assert brief["stale_pages"]["items"] == [{"path": "/fs/old.md"}]
