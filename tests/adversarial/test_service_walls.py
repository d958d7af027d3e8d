"""The services are a second wall behind the gate: called directly with an agent `Caller`, every
verb that is the human's or the admin's alone is `forbidden`, and nothing is written."""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from hubcore.caller import Caller
from hubcore.errors import HubError
from hubcore.hub import Hub
from hubcore.services.push.devices import DeviceCreate, DeviceRef, DeviceUpdate
from hubcore.services.requests import parse
from tests.adversarial.rest_support import subscription
from tests.harness import HubClient
from tests.requests import (
    a_decision,
    a_grant,
    a_project_update,
    a_prune,
    a_question,
    a_read_all,
    a_reassign,
    a_seen,
    a_session_end,
    a_session_start,
    a_signal,
    an_agent,
    an_answer,
    an_idea,
    an_inbox_mark,
    an_inbox_read,
    an_undo,
)

pytestmark = pytest.mark.anyio

ADMIN = Caller.admin()
BOT = Caller.agent("bot")


def fingerprint(client: HubClient) -> str:
    """A digest of every row of every table in hub.db."""
    with client.db() as conn:
        return hashlib.sha256("\n".join(conn.iterdump()).encode()).hexdigest()


async def scene(client: HubClient) -> dict[str, str]:
    """A hub with something behind every admin verb: an unread idea, a question and an approval,
    an active session, an ended one, and a pruned one with its undo token."""
    hub = client.app.hub
    await client.make_agent("bot")
    await client.make_agent("other")
    await client.make_project("proj")
    await hub.posts.idea(ADMIN, an_idea(project_id="proj", summary="an idea"))
    question = await hub.posts.question_post(BOT, a_question(project_id="proj", summary="Ship it?"))
    approval = await hub.posts.signal_append(BOT, a_signal(project_id="proj", kind="approval", summary="Deploy?"))
    active = await hub.sessions.start(BOT, a_session_start("proj", "active"))
    ended = await hub.sessions.start(BOT, a_session_start("proj", "ended"))
    await hub.sessions.end(BOT, a_session_end(session_id=ended["session_id"]))
    gone = await hub.sessions.start(BOT, a_session_start("proj", "gone"))
    await hub.sessions.end(BOT, a_session_end(session_id=gone["session_id"]))
    pruned = await hub.storage.prune(ADMIN, a_prune(session_id=gone["session_id"]))
    await hub.search_index.settled()  # the index has followed these writes: fingerprints start at rest
    with client.db() as conn:
        unread = conn.execute("SELECT event_id FROM inbox WHERE status = 'unread'").fetchone()[0]
    return {
        "unread": unread,
        "question": question["event_id"],
        "approval": approval["event_id"],
        "active": active["session_id"],
        "ended": ended["session_id"],
        "undo": pruned["pruned"][0]["undo_token"],
    }


def admin_verbs(hub: Hub, ids: dict[str, str]) -> dict[str, Callable[[], Awaitable[Any]]]:
    """Every service verb an agent may not call, by name."""
    return {
        "inbox read": lambda: hub.inbox.mark(BOT, an_inbox_mark(event_id=ids["unread"]), "read"),
        "inbox unread": lambda: hub.inbox.mark(BOT, an_inbox_mark(event_id=ids["unread"]), "unread"),
        "inbox read-all": lambda: hub.inbox.read_all(BOT, a_read_all()),
        "inbox read-all in a project": lambda: hub.inbox.read_all(BOT, a_read_all(project_id="proj")),
        "feed cursor": lambda: hub.feed.seen(BOT, a_seen(project_id="proj")),
        "project stats": lambda: hub.feed.stats(BOT, "proj"),
        "home": lambda: hub.home.home(BOT),
        "project rename": lambda: hub.projects.update(
            BOT, a_project_update(project_id="proj", display_name="Mine now")
        ),
        "project password policy": lambda: hub.projects.update(
            BOT, a_project_update(project_id="proj", artifact_password_policy="off")
        ),
        "project delete": lambda: hub.projects.delete(BOT, "proj"),
        "agent list": lambda: hub.agents.list(BOT),
        "agent create": lambda: hub.agents.create(BOT, an_agent(id="sneaky")),
        "token issue": lambda: hub.agents.issue_token(BOT, "other"),
        "token revoke": lambda: hub.agents.revoke_token(BOT, "other"),
        "grant list": lambda: hub.agents.grants(BOT, "bot"),
        "grant add": lambda: hub.agents.grant(BOT, a_grant(agent_id="bot", project_id="proj")),
        "grant revoke": lambda: hub.agents.revoke_grant(BOT, "bot", "proj"),
        "approval decision": lambda: hub.resolutions.decide(
            BOT, a_decision(approval_id=ids["approval"], decision="approve")
        ),
        "prune one": lambda: hub.storage.prune(BOT, a_prune(session_id=ids["ended"])),
        "prune project": lambda: hub.storage.prune(BOT, a_prune(project_id="proj")),
        "prune all": lambda: hub.storage.prune(BOT, a_prune()),
        "prune undo": lambda: hub.storage.undo(BOT, an_undo(ids["undo"])),
        "storage report": lambda: hub.storage.report(BOT),
        "replay": lambda: hub.brains.replay(BOT, ids["active"]),
        "session reassign": lambda: hub.sessions.reassign(BOT, a_reassign(session_id=ids["active"], agent="other")),
        "push key": lambda: _now(hub.push.key(BOT)),
        "push devices": lambda: hub.push.devices.list(BOT),
        "push device register": lambda: hub.push.devices.create(
            BOT, parse(DeviceCreate, subscription("https://push.example/sneaky"))
        ),
        "push device rename": lambda: hub.push.devices.update(
            BOT, parse(DeviceUpdate, {"device_id": "dev_0000000000000000", "name": "mine"})
        ),
        "push device revoke": lambda: hub.push.devices.delete(
            BOT, parse(DeviceRef, {"device_id": "dev_0000000000000000"})
        ),
        "push test": lambda: hub.push.test(BOT, parse(DeviceRef, {"device_id": "dev_0000000000000000"})),
    }


async def _now(value: Any) -> Any:
    """A synchronous verb as an awaitable (its refusal is raised when the lambda runs)."""
    return value


async def test_agent_callers_are_refused_every_admin_verb(client: HubClient) -> None:
    ids = await scene(client)
    hub = client.app.hub
    before = fingerprint(client)
    answers: dict[str, str] = {}
    for name, call in admin_verbs(hub, ids).items():
        with pytest.raises(HubError) as refused:
            await call()
        answers[name] = refused.value.code
    assert answers == dict.fromkeys(answers, "forbidden")
    assert fingerprint(client) == before


async def test_agent_tools_keep_their_own_verbs(client: HubClient) -> None:
    """What agents do through MCP still works: read the inbox, answer a question, end their own
    session, hide a project they can see."""
    ids = await scene(client)
    hub = client.app.hub
    assert (await hub.inbox.inbox_read(BOT, an_inbox_read()))["items"]
    answer = await hub.resolutions.answer(Caller.agent("other"), an_answer(question_id=ids["question"], body="yes"))
    assert answer["event_id"]
    assert (await hub.sessions.end(BOT, a_session_end(session_id=ids["active"])))["status"] == "ended"
    hide = a_project_update(project_id="proj", confidential=True)
    assert (await hub.projects.update(BOT, hide))["confidential"] is True
