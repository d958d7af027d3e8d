"""`GET /inbox` at volume (issue 25 part 1): true totals, cursor paging in three orders (newest,
oldest, deadline first), `settled`, and refusals of cursors the listing never issued."""

from __future__ import annotations

from typing import Any

import pytest

from hubcore.caller import Caller
from hubcore.hub import Hub
from tests.feed.conftest import approval, ask
from tests.harness import ADMIN, HubClient
from tests.requests import a_signal, an_answer, an_inbox_mark

pytestmark = pytest.mark.anyio


async def page(client: HubClient, **params: object) -> dict[str, Any]:
    r = await client.get("/api/v1/inbox", params=params, headers=ADMIN)
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


async def walk(client: HubClient, **params: object) -> tuple[list[str], list[int]]:
    """Every page to the end: the event ids in order and each page's total."""
    seen: list[str] = []
    totals: list[int] = []
    cursor = None
    for _ in range(100):
        got = await page(client, **params, **({"cursor": cursor} if cursor else {}))
        seen += [i["event_id"] for i in got["items"]]
        totals.append(got["total"])
        cursor = got["next_cursor"]
        if cursor is None:
            return seen, totals
    raise AssertionError("the cursor never ended")


async def test_pages_newest_and_oldest_cover_everything_once(client: HubClient, hub: Hub, bot: Caller) -> None:
    made = [await ask(hub, bot, text=f"q{n}") for n in range(7)]
    newest, totals = await walk(client, status="waiting", limit=3)
    assert newest == made[::-1] and totals == [7, 7, 7]
    oldest, _ = await walk(client, status="waiting", limit=3, order="oldest")
    assert oldest == made
    whole = await page(client, status="waiting", limit=7)
    assert whole["total"] == 7 and whole["next_cursor"] is None  # an exact fit has no next page


async def test_deadline_first_then_oldest(client: HubClient, hub: Hub, bot: Caller) -> None:
    plain_old = await ask(hub, bot, text="plain old")
    late = await ask(hub, bot, text="late", expires_in_seconds=7200)
    soon = await approval(hub, bot, expires_in_seconds=120)
    plain_new = await ask(hub, bot, text="plain new")
    mid = await ask(hub, bot, text="mid", expires_in_seconds=3600)
    order, totals = await walk(client, status="waiting", order="deadline", limit=2)
    assert order == [soon, mid, late, plain_old, plain_new] and set(totals) == {5}


async def test_total_and_settled(client: HubClient, hub: Hub, bot: Caller) -> None:
    q1 = await ask(hub, bot)
    q2 = await ask(hub, bot)
    ideas = [
        str((await hub.posts.signal_append(bot, a_signal(project_id="proj", kind="idea", summary=f"i{n}")))["event_id"])
        for n in range(3)
    ]
    await hub.resolutions.answer(Caller.admin(), an_answer(question_id=q1, body="yes"))
    await hub.inbox.mark(Caller.admin(), an_inbox_mark(event_id=ideas[0]), "read")
    settled = await page(client, settled="true", limit=1)
    assert settled["total"] == 2 and len(settled["items"]) == 1 and settled["next_cursor"]
    both, _ = await walk(client, settled="1", limit=1)
    assert both == [ideas[0], q1]
    assert (await page(client, status="waiting"))["total"] == 1
    assert (await page(client, unread_only="true"))["total"] == 2
    assert (await page(client))["total"] == 5 and q2


@pytest.mark.parametrize(
    "query",
    [
        {"cursor": "garbage"},
        {"cursor": "o.01HZZZZZZZZZZZZZZZZZZZZZZZ"},  # an oldest-first cursor on the newest-first order
        {"order": "deadline", "cursor": "d.01HZZZZZZZZZZZZZZZZZZZZZZZ"},  # no deadline part
        {"order": "deadline", "cursor": "d.01HZZZZZZZZZZZZZZZZZZZZZZZ.nan"},
        {"order": "deadline", "cursor": "d.01HZZZZZZZZZZZZZZZZZZZZZZZ.inf"},
        {"order": "deadline", "cursor": "d.01HZZZZZZZZZZZZZZZZZZZZZZZ.1e5.x"},
        {"cursor": "n." + "0" * 200},
        {"order": "sideways"},
        {"settled": "maybe"},
        {"settled": "true", "status": "waiting"},
        {"settled": "true", "unread_only": "true"},
    ],
)
async def test_refused_queries(client: HubClient, hub: Hub, bot: Caller, query: dict[str, str]) -> None:
    await ask(hub, bot)
    r = await client.get("/api/v1/inbox", params=query, headers=ADMIN)
    assert r.status_code == 400, (query, r.text)
    assert r.json()["code"] == "invalid_argument"


async def test_a_cursor_survives_its_item_being_resolved(client: HubClient, hub: Hub, bot: Caller) -> None:
    made = [await ask(hub, bot, text=f"q{n}") for n in range(4)]
    first = await page(client, status="waiting", order="oldest", limit=2)
    assert [i["event_id"] for i in first["items"]] == made[:2]
    await hub.resolutions.answer(Caller.admin(), an_answer(question_id=made[1], body="done"))
    rest = await page(client, status="waiting", order="oldest", limit=2, cursor=first["next_cursor"])
    assert [i["event_id"] for i in rest["items"]] == made[2:] and rest["total"] == 3
