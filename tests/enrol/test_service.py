"""The enrolment service is plain anyio: ask, wait, decide and sweep on asyncio and on trio, with no
HTTP in front; and the decision hook's check of its subject."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import anyio
import orjson
import pytest

from hubcore.caller import Caller
from hubcore.clock import FakeClock
from hubcore.errors import HubError
from hubcore.hub import Hub
from hubcore.services.enrolment import EnrolDecision, EnrolRequest, Peer
from hubcore.services.requests import parse
from hubcore.services.resolutions import DecisionPost
from tests.harness import test_settings as settings_for

pytestmark = pytest.mark.anyio
HUMAN = Caller.admin()


def a_request(name: str = "Scout", **more: str) -> EnrolRequest:
    return parse(EnrolRequest, {"display_name": name, "why": "to help", **more})


@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
async def test_ask_wait_admit_and_sweep(tmp_path: Path, anyio_backend: str) -> None:
    clock = FakeClock()
    async with Hub.open(settings_for(tmp_path / "data"), clock=clock) as hub:
        service = hub.enrolment
        admitted = await service.enrol(a_request(suggested_id="scout"), Peer("192.0.2.1"))
        abandoned = await service.enrol(a_request("Late"), Peer("192.0.2.2"))
        answers: list[dict[str, str]] = []

        async def poll() -> None:
            answers.append(await service.status(admitted["token"], 30))

        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(poll)
                await anyio.sleep(0.1)
                assert answers == []
                await service.decide(HUMAN, parse(EnrolDecision, {"agent_id": "scout"}), "approve")
        assert answers == [{"status": "approved", "agent_id": "scout"}]
        assert await hub.auth.resolve(f"Bearer {admitted['token']}") == Caller.agent("scout")
        assert await hub.auth.resolve(f"Bearer {abandoned['token']}") is None
        clock.advance(86400)
        assert await service.sweep() == 1
        with pytest.raises(HubError) as caught:
            await service.status(abandoned["token"], 0)
        assert caught.value.code == "unauthenticated"
        assert [a["id"] for a in await hub.agents.list(HUMAN)] == ["scout"]


async def test_only_the_human_decides(tmp_path: Path) -> None:
    async with Hub.open(settings_for(tmp_path / "data")) as hub:
        await hub.enrolment.enrol(a_request(suggested_id="scout"), Peer("192.0.2.1"))
        for caller in (Caller.agent("scout"), Caller.public()):
            with pytest.raises(HubError) as caught:
                await hub.enrolment.decide(caller, parse(EnrolDecision, {"agent_id": "scout"}), "approve")
            assert caught.value.code == "forbidden"
        assert [a["status"] for a in await hub.agents.list(HUMAN)] == ["pending"]


async def test_the_hook_refuses_a_request_whose_subject_is_not_a_pending_agent(tmp_path: Path) -> None:
    """An enrol_request whose payload names another agent (or one already active) decides nothing."""
    settings = settings_for(tmp_path / "data")
    async with Hub.open(settings) as hub:
        await hub.enrolment.enrol(a_request(suggested_id="scout"), Peer("192.0.2.1"))
        await hub.enrolment.enrol(a_request("Other", suggested_id="other"), Peer("192.0.2.2"))
        await hub.enrolment.decide(HUMAN, parse(EnrolDecision, {"agent_id": "other"}), "approve")
        event_id = await hub.core.store.read(
            lambda conn: conn.execute(
                "SELECT id FROM events WHERE kind = 'enrol_request' AND actor = 'scout'"
            ).fetchone()[0]
        )

        def forge(conn: sqlite3.Connection) -> None:  # the request now names the admitted agent
            conn.execute(
                "UPDATE events SET payload = ? WHERE id = ?",
                (orjson.dumps({"body": "x", "agent_id": "other"}).decode(), event_id),
            )

        await hub.core.store.execute(forge)
        with pytest.raises(HubError) as caught:
            await hub.resolutions.decide(HUMAN, DecisionPost(approval_id=event_id, decision="decline"))
        assert caught.value.code == "conflict"
        rows = await hub.core.store.read(
            lambda conn: conn.execute("SELECT status FROM inbox WHERE event_id = ?", (event_id,)).fetchall()
        )
        assert [r[0] for r in rows] == ["waiting"]  # nothing decided, no answer written
        assert {a["id"]: a["status"] for a in await hub.agents.list(HUMAN)} == {"other": "active", "scout": "pending"}
