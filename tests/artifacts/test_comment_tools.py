"""The comment tools over MCP through the SDK's own client, in both protocol eras: post (anchors,
the delete token shown once, idempotency), list and its paging, resolve and reopen, delete, the
token as the only right of a caller that cannot see the project, and every refusal writing nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from hubcore.caller import Caller
from hubcore.config import HubSettings
from hubcore.hub import Hub
from hubcore.services.artifacts import ArtifactPublish
from hubcore.services.artifacts.comments import CommentPost
from hubcore.services.projects import ProjectUpdate
from tests.artifacts.support import CIPHERTEXT, ENVELOPE, query, state
from tests.cast import web_and_vault
from tests.mcp.live import ERAS, MODERN, LiveHub, call, error_in_text, live_hub, refuser

pytestmark = pytest.mark.anyio


@pytest.fixture
async def live(settings: HubSettings) -> AsyncIterator[LiveHub]:
    async with live_hub(settings) as hub:
        await web_and_vault(hub)
        yield hub


def everything(hub: Hub) -> tuple[Any, ...]:
    return (*state(hub), query(hub, "SELECT * FROM artifact_comments ORDER BY id"))


async def publish(hub: Hub, project: str = "web", **fields: Any) -> str:
    args = {"project_id": project, "title": "Doc", "kind": "markdown", "content": "# Doc\n\nbody\n", **fields}
    found = await hub.artifacts.publish_artifact(Caller.admin(), ArtifactPublish.model_validate(args))
    return str(found["artifact_id"])


refused = refuser(lambda live: everything(live.app.hub))


def connection(mode: str, name: str) -> dict[str, str] | None:
    return {"Hub-Connection": name} if mode == MODERN else None


@pytest.mark.parametrize("mode", ERAS)
async def test_post_list_resolve_delete(live: LiveHub, mode: str) -> None:
    hub = live.app.hub
    aid = await publish(hub)
    token = await live.make_agent("bot")
    async with live.client(token, mode=mode, headers=connection(mode, "c1")) as bot:
        posted = await call(
            bot,
            "comment_post",
            artifact_id=aid,
            body=" looks good ",
            anchor={"mode": "text", "quote": "body"},
            idempotency_key="k1",
        )
        assert posted["author"] == "bot" and posted["body"] == "looks good" and posted["anchor_version"] == 1
        assert len(posted["delete_token"]) == 64 and int(posted["delete_token"], 16) >= 0
        stored = query(hub, "SELECT token_hash FROM artifact_comments")[0][0]
        assert stored != posted["delete_token"] and len(stored) == 64
        again = await call(
            bot,
            "comment_post",
            artifact_id=aid,
            body=" looks good ",
            anchor={"mode": "text", "quote": "body"},
            idempotency_key="k1",
        )
        assert again["id"] == posted["id"] and "delete_token" not in again
        assert query(hub, "SELECT COUNT(*) FROM artifact_comments") == [(1,)]
        point = await call(
            bot, "comment_post", artifact_id=aid, body="here", anchor={"mode": "point", "x": 1, "y": 0.25}
        )
        listed = await call(bot, "comment_list", artifact_id=aid)
        assert [c["id"] for c in listed["comments"]] == [posted["id"], point["id"]] and listed["truncated"] is False
        done = await call(bot, "comment_resolve", artifact_id=aid, comment_id=posted["id"])
        assert done["done"] is True
        assert query(hub, "SELECT comments_count, comments_open FROM artifacts") == [(2, 1)]
        reopened = await call(bot, "comment_resolve", artifact_id=aid, comment_id=posted["id"], done=False)
        assert reopened["done"] is False
        assert (await call(bot, "comment_delete", artifact_id=aid, comment_id=point["id"])) == {"ok": True}
        assert query(hub, "SELECT comments_count, comments_open FROM artifacts") == [(1, 1)]
        await refused(live, bot, "not_found", "comment_delete", artifact_id=aid, comment_id=point["id"])


def error_of(result: Any) -> dict[str, Any]:
    assert result.is_error, result
    return error_in_text(result)


@pytest.mark.parametrize("mode", ERAS)
async def test_missing_and_denied_are_the_same(live: LiveHub, mode: str) -> None:
    hub = live.app.hub
    hidden = await publish(hub, "vault")
    secret = (
        await hub.comments.post(
            Caller.admin(), CommentPost.model_validate({"artifact_id": hidden, "body": "admin only"})
        )
    )["id"]
    missing = "0" * len(hidden)
    token = await live.make_agent("bot")
    async with live.client(token, mode=mode, headers=connection(mode, "c2")) as bot:
        for tool, extra in (
            ("comment_post", {"body": "x"}),
            ("comment_list", {}),
            ("comment_resolve", {"comment_id": secret}),
            ("comment_delete", {"comment_id": secret}),
            ("comment_delete", {"comment_id": secret, "delete_token": "0" * 64}),
        ):
            before = everything(hub)
            denied = error_of(await bot.call_tool(tool, {"artifact_id": hidden, **extra}))
            gone = error_of(await bot.call_tool(tool, {"artifact_id": missing, **extra}))
            assert everything(hub) == before
            assert denied["code"] == gone["code"] and denied["code"] in ("not_found", "forbidden")
            assert denied["message"].replace(hidden, "X") == gone["message"].replace(missing, "X")
    assert query(hub, "SELECT body FROM artifact_comments") == [("admin only",)]


@pytest.mark.parametrize("mode", ERAS)
async def test_the_delete_token_is_a_right_of_its_own(live: LiveHub, mode: str) -> None:
    """An agent that posted, then lost sight of the project, still resolves and deletes with its token."""
    hub = live.app.hub
    await live.make_project("temp")
    aid = await publish(hub, "temp")
    token = await live.make_agent("bot")
    async with live.client(token, mode=mode, headers=connection(mode, "c3")) as bot:
        posted = await call(bot, "comment_post", artifact_id=aid, body="mine")
        await hub.projects.update(
            Caller.admin(), ProjectUpdate.model_validate({"project_id": "temp", "confidential": True})
        )
        assert error_of(await bot.call_tool("comment_list", {"artifact_id": aid}))["code"] in ("not_found", "forbidden")
        before = everything(hub)
        assert error_of(
            await bot.call_tool(
                "comment_resolve", {"artifact_id": aid, "comment_id": posted["id"], "delete_token": "f" * 64}
            )
        )["code"] in ("not_found", "forbidden")
        assert everything(hub) == before
        done = await call(
            bot, "comment_resolve", artifact_id=aid, comment_id=posted["id"], delete_token=posted["delete_token"]
        )
        assert done["done"] is True
        assert await call(
            bot, "comment_delete", artifact_id=aid, comment_id=posted["id"], delete_token=posted["delete_token"]
        ) == {"ok": True}
    assert query(hub, "SELECT comments_count, comments_open FROM artifacts") == [(0, 0)]


@pytest.mark.parametrize("mode", ERAS)
async def test_refusals_write_nothing(live: LiveHub, mode: str) -> None:
    hub = live.app.hub
    aid = await publish(hub)
    locked = await publish(hub, kind="html", content=CIPHERTEXT, envelope=ENVELOPE)
    token = await live.make_agent("bot")
    async with live.client(token, mode=mode, headers=connection(mode, "c4")) as bot:
        for args in (
            {"body": ""},
            {"body": 7},
            {"body": "x", "anchor": {"mode": "point", "x": -0.1, "y": 0}},
            {"body": "x", "anchor": {"mode": "point", "x": 1.5, "y": 0}},
            {"body": "x", "anchor": {"mode": "text"}},
            {"body": "x", "anchor": "here"},
            {"body": "x", "anchor_version": -1},
            {"body": "x", "anchor_version": "1"},
            {"body": "x", "surprise": True},
            {"body": "x", "idempotency_key": ""},
        ):
            await refused(live, bot, "invalid_argument", "comment_post", artifact_id=aid, **args)
        await refused(live, bot, "payload_too_large", "comment_post", artifact_id=aid, body="x" * 2001)
        error = await refused(
            live,
            bot,
            "invalid_argument",
            "comment_post",
            artifact_id=locked,
            body="x",
            anchor={"mode": "text", "quote": "plain"},
        )
        assert "password protected" in error["message"]
        await refused(live, bot, "invalid_argument", "comment_list", artifact_id=aid, limit=0)
        await refused(live, bot, "invalid_argument", "comment_list", artifact_id=aid, limit=501)
        await refused(live, bot, "invalid_argument", "comment_resolve", artifact_id=aid, comment_id="x", done="yes")
        await refused(live, bot, "invalid_argument", "comment_delete", artifact_id=aid, comment_id="x" * 65)
        await refused(live, bot, "invalid_argument", "comment_post", artifact_id="x" * 65, body="x")
