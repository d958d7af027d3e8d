"""Part 7 over MCP through the SDK's own client, in both protocol eras: the human's comment (posted
over REST, as the web app does) rides the author agent's `notifications` trailer once and shows in
`session_brief`; `artifact_list` pages with `cursor` and refuses one it never issued."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from hubcore.config import HubSettings
from tests.artifacts.support import state
from tests.harness import ADMIN
from tests.mcp.live import ERAS, MODERN, LiveHub, call, live_hub, tool_error

pytestmark = pytest.mark.anyio


@pytest.fixture
async def live(settings: HubSettings) -> AsyncIterator[LiveHub]:
    async with live_hub(settings) as hub:
        await hub.make_project("web")
        yield hub


def connection(mode: str) -> dict[str, str] | None:
    return {"Hub-Connection": "c1"} if mode == MODERN else None


@pytest.mark.parametrize("mode", ERAS)
async def test_the_comment_reaches_the_author_over_mcp(live: LiveHub, mode: str) -> None:
    token = await live.make_agent("writer")
    async with live.client(token, mode=mode, headers=connection(mode)) as writer:
        made = [
            await call(
                writer,
                "artifact_publish",
                project_id="web",
                title=f"Doc {n}",
                kind="markdown",
                content=f"# Doc {n}\n\nbody\n",
            )
            for n in range(5)
        ]
        await call(writer, "whoami")  # drains whatever was pending
        r = await live.http.post(
            f"/api/v1/artifacts/{made[0]['artifact_id']}/comments",
            json={"body": "Please cite the source."},
            headers=ADMIN,
        )
        assert r.status_code in (200, 201), r.text
        result = await call(writer, "whoami")
        pending = result["notifications"]["pending"]
        assert [(p["kind"], p["artifact_id"]) for p in pending] == [("comment", made[0]["artifact_id"])]
        assert "notifications" not in await call(writer, "whoami")  # once
        brief = await call(writer, "session_brief", project_id="web")
        assert [c["body"] for c in brief["comments"]["items"]] == ["Please cite the source."]

        ids: list[str] = []
        cursor = None
        for _ in range(6):
            page = await call(
                writer, "artifact_list", project_id="web", limit=2, **({"cursor": cursor} if cursor else {})
            )
            ids += [a["id"] for a in page["artifacts"]]
            cursor = page["next_cursor"]
            if cursor is None:
                break
        assert ids == [m["artifact_id"] for m in made][::-1]
        before = state(live.app.hub)
        tool_error(await writer.call_tool("artifact_list", {"cursor": "not-a-cursor"}), "invalid_argument")
        tool_error(await writer.call_tool("artifact_list", {"cursor": "1.5~" + "a" * 200}), "invalid_argument")
        assert state(live.app.hub) == before
