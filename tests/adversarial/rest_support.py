"""Shared setup for the REST body tests: a seeded hub, and a snapshot of everything stored."""

from __future__ import annotations

import sqlite3
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from hubcore.caller import Caller
from hubcore.hub import Hub
from hubcore.services.push import caps
from hubcore.services.push.devices import DeviceCreate
from hubcore.services.push.keys import b64url
from hubcore.services.requests import parse
from tests.harness import HubClient
from tests.requests import a_question, a_session_start, a_signal, an_idea

ALICE = Caller.agent("alice")
HUMAN = Caller.admin()


async def seed(client: HubClient) -> dict[str, str]:
    """alice and bob, the project `web` with an unread idea, an open question and approval, and two
    running sessions of alice's; returns their ids."""
    await client.make_agent("alice")
    await client.make_agent("bob")
    await client.make_project("web")
    hub: Hub = client.app.hub
    idea = await hub.posts.idea(HUMAN, an_idea(project_id="web", summary="Try this"))
    question = await hub.posts.question_post(ALICE, a_question(project_id="web", summary="Which way?"))
    approval = await hub.posts.signal_append(ALICE, a_signal(project_id="web", kind="approval", summary="Ship it?"))
    session = await hub.sessions.start(ALICE, a_session_start("web", "one"))
    other = await hub.sessions.start(ALICE, a_session_start("web", "two"))
    # A push device that wants nothing (no project is named `nowhere`): the seeded tests push nowhere.
    quiet = {**subscription("http://127.0.0.1:9/seed"), "filters": {"kinds": ["idea"], "projects": ["nowhere"]}}
    device, _ = await hub.push.devices.create(HUMAN, parse(DeviceCreate, quiet))
    cap = caps.mint(
        hub.push.keys.act_secret,
        caps.Capability(device["id"], approval["event_id"], "approve", int(hub.core.now()) + 3600),
    )
    await hub.search_index.settled()  # the index has followed these writes: snapshots start at rest
    return {
        "idea": idea["event_id"],
        "question": question["question_id"],
        "approval": approval["event_id"],
        "session": session["session_id"],
        "other": other["session_id"],
        "device": device["id"],
        "cap": cap,
    }


def subscription(endpoint: str) -> dict[str, Any]:
    """A browser's push subscription with real keys (nothing is ever sent to `endpoint` here)."""
    key = (
        ec.generate_private_key(ec.SECP256R1())
        .public_key()
        .public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    )
    return {"name": "phone", "endpoint": endpoint, "keys": {"p256dh": b64url(key), "auth": b64url(bytes(16))}}


def snapshot(conn: sqlite3.Connection) -> dict[str, list[str]]:
    """Every row of every table (inbox states, cursors and the id high-water mark included)."""
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    return {t: sorted(repr(tuple(row)) for row in conn.execute(f'SELECT * FROM "{t}"')) for t in tables}
