"""The artifact tools over MCP through the SDK's own client, in both protocol eras: publish, update,
draft (live sessions, force, viewer_url), get, versions, list, delete, the active session as the
publishing session, protection and the password policy, idempotency, and every refusal at its edge
leaving rows, events, keys and blobs as they were. Missing and denied artifacts are the same
`forbidden` to an agent."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from hubcore.config import HubSettings
from hubcore.services.artifacts.models import DESCRIPTION_MAX, LABEL_MAX_BYTES
from tests.artifacts.support import CIPHERTEXT, ENVELOPE, blob_files, query, state
from tests.mcp.live import ERAS, MODERN, LiveHub, call, live_hub, refuser

pytestmark = pytest.mark.anyio


@pytest.fixture
async def live(settings: HubSettings) -> AsyncIterator[LiveHub]:
    async with live_hub(settings) as hub:
        await hub.make_project("web")
        await hub.make_project("vault", confidential=True)
        await hub.make_project("locked", artifact_password_policy="required")
        yield hub


refused = refuser(lambda live: state(live.app.hub))  # nothing written: rows, events, keys, blobs


def headers_for(mode: str) -> dict[str, str] | None:
    return {"Hub-Connection": "art-test"} if mode == MODERN else None


@pytest.mark.parametrize("mode", ERAS)
async def test_publish_update_get_versions_list_delete(live: LiveHub, mode: str) -> None:
    token = await live.make_agent("bot")
    async with live.client(token, mode=mode, headers=headers_for(mode)) as bot:
        started = await call(bot, "session_start", project_id="web", name="work")
        made = await call(
            bot,
            "artifact_publish",
            project_id="web",
            title="",
            kind="markdown",
            content="# Weekly report\n\n| a | b |\n|---|---|\n| 1 | 2 |\n",
            label="first",
            description="d" * DESCRIPTION_MAX,
            idempotency_key="pub-1",
        )
        aid = made["artifact_id"]
        assert made["version"] == 1
        before = state(live.app.hub)
        again = await call(
            bot,
            "artifact_publish",
            project_id="web",
            title="",
            kind="markdown",
            content="# Other",
            idempotency_key="pub-1",
        )
        assert (again["artifact_id"], again["version"]) == (aid, 1) and state(live.app.hub) == before
        got = await call(bot, "artifact_get", artifact_id=aid)
        assert (got["title"], got["version"], got["label"], got["actor"], got["session_id"]) == (
            "Weekly report",
            1,
            "first",
            "bot",
            started["session_id"],
        )
        up = await call(
            bot,
            "artifact_update",
            artifact_id=aid,
            content="# Weekly report v2",
            base_version=1,
            label="é" * (LABEL_MAX_BYTES // 2),
        )
        assert up["version"] == 2
        stale = await refused(live, bot, "conflict", "artifact_update", artifact_id=aid, content="x", base_version=1)
        assert "version 2" in stale["message"] and stale["details"]["current_version"] == 2
        versions = await call(bot, "artifact_versions", artifact_id=aid)
        assert [v["version"] for v in versions["versions"]] == [1, 2]
        assert (await call(bot, "artifact_get", artifact_id=aid, version=1))["content"].startswith("# Weekly report\n")
        listed = await call(bot, "artifact_list", session_id=started["session_id"])
        assert [a["id"] for a in listed["artifacts"]] == [aid]
        assert (await call(bot, "artifact_list", project_id="web"))["artifacts"][0]["version"] == 2
        assert (await call(bot, "artifact_delete", artifact_id=aid))["ok"] is True
        assert (await call(bot, "artifact_list"))["artifacts"] == []
        await refused(live, bot, "forbidden", "artifact_get", artifact_id=aid)
    assert blob_files(live.app.hub) == []
    summaries = [r[0] for r in query(live.app.hub, "SELECT summary FROM events WHERE kind = 'artifact' ORDER BY id")]
    assert summaries == ["published Weekly report", "updated Weekly report", "deleted Weekly report"]


@pytest.mark.parametrize("mode", ERAS)
async def test_drafts_between_sessions(live: LiveHub, mode: str) -> None:
    one, two = await live.make_agent("one"), await live.make_agent("two")
    async with (
        live.client(one, mode=mode, headers=headers_for(mode)) as first,
        live.client(two, mode=mode, headers={"Hub-Connection": "other"} if mode == MODERN else None) as second,
    ):
        await call(first, "session_start", project_id="web", name="a")
        await call(second, "session_start", project_id="web", name="b")
        aid = (await call(first, "artifact_publish", project_id="web", title="Live", kind="html", content="<p>1</p>"))[
            "artifact_id"
        ]
        drafted = await call(first, "artifact_draft", artifact_id=aid, content="<p>2</p>")
        assert {k: drafted[k] for k in ("live_version", "live_rev", "viewer_url")} == {
            "live_version": 2,
            "live_rev": 1,
            "viewer_url": f"artifacts/{aid}?version=2",
        }
        assert "token" not in drafted["viewer_url"] and "pass" not in drafted["viewer_url"]
        assert (await call(first, "artifact_draft", artifact_id=aid, content="<p>2b</p>"))["live_rev"] == 2
        error = await refused(live, second, "conflict", "artifact_draft", artifact_id=aid, content="<p>mine</p>")
        assert "force" in error["message"]
        taken = await call(second, "artifact_draft", artifact_id=aid, content="<p>mine</p>", force=True)
        assert taken["live_rev"] == 3
        assert (await call(first, "artifact_get", artifact_id=aid))["content"] == "<p>1</p>"
        assert (await call(first, "artifact_get", artifact_id=aid, live=True))["content"] == "<p>mine</p>"
        sealed = await call(second, "artifact_update", artifact_id=aid, content="<p>3</p>", base_version=2)
        assert sealed["version"] == 3
        got = await call(first, "artifact_get", artifact_id=aid)
        assert (got["actor"], got["version"], got["live_version"]) == ("one", 3, None)


@pytest.mark.parametrize("mode", ERAS)
async def test_refusals_at_their_edges_write_nothing(live: LiveHub, mode: str) -> None:
    token = await live.make_agent("bot")
    async with live.client(token, mode=mode) as bot:
        base = {"project_id": "web", "title": "T", "kind": "html", "content": "<p>x</p>"}
        await refused(live, bot, "invalid_argument", "artifact_publish", **{**base, "description": "d" * 2001})
        await refused(live, bot, "invalid_argument", "artifact_publish", **{**base, "label": "x" * 61})
        await refused(live, bot, "invalid_argument", "artifact_publish", **{**base, "kind": "pdf"})
        await refused(live, bot, "invalid_argument", "artifact_publish", **{**base, "content": ""})
        await refused(live, bot, "invalid_argument", "artifact_publish", **{**base, "title": ""})
        await refused(live, bot, "invalid_argument", "artifact_publish", **{**base, "surprise": 1})
        await refused(
            live, bot, "invalid_argument", "artifact_publish", **{**base, "envelope": {**ENVELOPE, "iterations": 1}}
        )
        await refused(live, bot, "invalid_argument", "artifact_publish", **{**base, "envelope": ENVELOPE})
        policy = await refused(live, bot, "invalid_argument", "artifact_publish", **{**base, "project_id": "locked"})
        assert "password" in policy["message"] and "envelope" in policy["message"]
        await refused(live, bot, "forbidden", "artifact_publish", **{**base, "project_id": "vault"})
        missing = await refused(live, bot, "forbidden", "artifact_publish", **{**base, "project_id": "nowhere"})
        assert missing["message"] == "project 'nowhere' not found"
        for tool in ("artifact_get", "artifact_versions", "artifact_delete"):
            await refused(live, bot, "forbidden", tool, artifact_id="nope")
        await refused(live, bot, "forbidden", "artifact_update", artifact_id="nope", content="x")
        await refused(live, bot, "forbidden", "artifact_draft", artifact_id="nope", content="x")
        await refused(live, bot, "invalid_argument", "artifact_get", artifact_id="x" * 65)
        await refused(live, bot, "invalid_argument", "artifact_get", artifact_id="nope", version=0)
        await refused(live, bot, "invalid_argument", "artifact_list", limit=501)
        locked = await call(
            bot, "artifact_publish", **{**base, "project_id": "locked", "content": CIPHERTEXT, "envelope": ENVELOPE}
        )
        await refused(
            live, bot, "invalid_argument", "artifact_update", artifact_id=locked["artifact_id"], content=CIPHERTEXT
        )
        await refused(
            live,
            bot,
            "invalid_argument",
            "artifact_update",
            artifact_id=locked["artifact_id"],
            content="plain",
            envelope=None,
        )
    async with live.client() as admin:
        secret = await call(admin, "artifact_publish", **{**base, "project_id": "vault"})
        assert (await call(admin, "artifact_get", artifact_id=secret["artifact_id"]))["title"] == "T"
        await refused(live, admin, "not_found", "artifact_get", artifact_id="nope")
    async with live.client(token, mode=mode) as bot:
        denied = await refused(live, bot, "forbidden", "artifact_get", artifact_id=secret["artifact_id"])
        assert denied["message"] == f"artifact {secret['artifact_id']!r} not found"
