"""Feed, questions, inbox and notifications through the SDK's client over real streamable HTTP."""

from __future__ import annotations

import anyio
import pytest

from hubcore.services import changes
from tests.harness import ADMIN_TOKEN
from tests.mcp.live import ERAS, MODERN, MODERN_META, LiveHub, initialize, structured, tool_error

pytestmark = pytest.mark.anyio


@pytest.fixture
def blocked(monkeypatch: pytest.MonkeyPatch) -> anyio.Event:
    """Set when a wait in the (same-process) hub blocks: it has read the store, found nothing, and
    now waits to be woken. A change made after this wakes it; it cannot be "already there"."""
    event = anyio.Event()
    real = changes.Waiter.wait

    async def wait(waiter: changes.Waiter) -> None:
        event.set()
        await real(waiter)

    monkeypatch.setattr(changes.Waiter, "wait", wait)
    return event


@pytest.mark.parametrize("mode", ERAS)
async def test_feed_read_cursor_is_durable_and_backward_reads_move_nothing(live: LiveHub, mode: str) -> None:
    token = await live.make_agent("bot")
    await live.make_project("demo")
    async with live.client(token, mode=mode) as c:
        ids = [
            structured(await c.call_tool("signal_append", {"project_id": "demo", "summary": f"step {n}"}))["event_id"]
            for n in range(3)
        ]
        first = structured(await c.call_tool("feed_read", {"project_id": "demo"}))
        assert [e["id"] for e in first["events"]] == ids
        assert first["next_since"] == ids[-1]
        again = structured(await c.call_tool("feed_read", {"project_id": "demo"}))
        assert again["events"] == [] and again["next_since"] == ids[-1]
        back = structured(await c.call_tool("feed_read", {"project_id": "demo", "before": ids[-1]}))
        assert [e["id"] for e in back["events"]] == ids[1::-1]
        assert back["next_since"] is None
        explicit = structured(await c.call_tool("feed_read", {"project_id": "demo", "since": ids[0]}))
        assert [e["id"] for e in explicit["events"]] == ids[1:]
    # The cursor is keyed on the actor: a new connection continues where the last one stopped.
    async with live.client(token, mode=mode) as c:
        new = structured(await c.call_tool("signal_append", {"project_id": "demo", "summary": "later"}))
        page = structured(await c.call_tool("feed_read", {"project_id": "demo"}))
        assert [e["id"] for e in page["events"]] == [new["event_id"]]


@pytest.mark.parametrize("mode", ERAS)
async def test_errors_are_structured_and_missing_equals_denied(live: LiveHub, mode: str) -> None:
    token = await live.make_agent("bot")
    await live.make_project("secret", confidential=True)
    async with live.client(token, mode=mode) as c:
        unknown = tool_error(await c.call_tool("no_such_tool", {}), "not_found")
        assert unknown == {
            "code": "not_found",
            "retryable": False,
            "details": {},
            "message": "no tool named 'no_such_tool'; tools/list names every tool",
        }
        answers = []
        for project in ("secret", "missing"):
            error = tool_error(await c.call_tool("signal_append", {"project_id": project, "summary": "x"}), "forbidden")
            assert error["retryable"] is False
            answers.append({**error, "message": error["message"].replace(project, "P")})
        assert answers[0] == answers[1]
        bad = tool_error(
            await c.call_tool("signal_append", {"project_id": "space-bot", "summary": "x", "bogus": 1}),
            "invalid_argument",
        )
        assert bad["retryable"] is False and bad["details"] == {"argument": "bogus"}
        assert bad["message"].startswith("argument bogus: unknown argument")
    r = await live.http.get("/metrics", headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
    assert 'hub_mcp_tool_calls_total{outcome="error",tool="signal_append"}' in r.text
    assert 'hub_mcp_tool_calls_total{outcome="error",tool="<unknown>"}' in r.text


@pytest.mark.parametrize("mode", ERAS)
async def test_trailer_delivers_an_answer_exactly_once(live: LiveHub, mode: str) -> None:
    token = await live.make_agent("bot")
    async with live.client(token, mode=mode) as bot, live.client(ADMIN_TOKEN, mode=mode) as human:
        q = structured(await bot.call_tool("question_post", {"project_id": "space-bot", "summary": "Ship it?"}))
        assert q["event_id"] == q["question_id"] == q["thread_id"]
        plain = structured(await bot.call_tool("whoami", {}))
        assert "notifications" not in plain
        structured(await human.call_tool("answer_post", {"question_id": q["question_id"], "body": "yes"}))
        got = structured(await bot.call_tool("version", {}))
        pending = got["notifications"]["pending"]
        assert len(pending) == 1
        item = pending[0]
        assert item["source"] == "attention" and item["kind"] == "answer"
        assert item["project_id"] == "space-bot" and item["thread_id"] == q["question_id"]
        assert "Ship it?" in item["title"] and item["title"].startswith("Answered")
        # Delivered once: neither the next result nor an error carries it again.
        assert "notifications" not in structured(await bot.call_tool("whoami", {}))
        tool_error(await bot.call_tool("feed_read", {"project_id": "nope"}), "forbidden")
        assert "notifications" not in structured(await bot.call_tool("whoami", {}))


async def test_error_results_carry_no_trailer_and_keep_it_for_later(live: LiveHub) -> None:
    token = await live.make_agent("bot")
    async with live.client(token) as bot, live.client(ADMIN_TOKEN) as human:
        q = structured(await bot.call_tool("question_post", {"project_id": "space-bot", "summary": "Go?"}))
        await human.call_tool("answer_post", {"question_id": q["question_id"], "body": "go"})
        tool_error(await bot.call_tool("feed_read", {"project_id": "nope"}), "forbidden")  # no trailer on it
        assert len(structured(await bot.call_tool("whoami", {}))["notifications"]["pending"]) == 1


@pytest.mark.parametrize("mode", ERAS)
async def test_inbox_wait_is_woken_by_an_answer_from_another_connection(
    live: LiveHub, mode: str, blocked: anyio.Event
) -> None:
    token = await live.make_agent("bot")
    async with live.client(token, mode=mode) as bot, live.client(ADMIN_TOKEN, mode=mode) as human:
        q = structured(
            await bot.call_tool(
                "question_post", {"project_id": "space-bot", "summary": "Colour?", "options": ["red", "blue"]}
            )
        )
        result: dict[str, object] = {}

        async def wait() -> None:
            result.update(structured(await bot.call_tool("inbox_wait", {"wait_seconds": 30})))

        async with anyio.create_task_group() as tg:
            started = anyio.current_time()
            tg.start_soon(wait)
            await blocked.wait()
            await human.call_tool("answer_post", {"question_id": q["question_id"], "body": "blue"})
        assert anyio.current_time() - started < 10
        assert result["timed_out"] is False
        items = result["items"]
        assert isinstance(items, list) and items[0]["event_id"] == q["question_id"]
        assert items[0]["answer"]["body"] == "blue"


@pytest.mark.parametrize("mode", ERAS)
async def test_subscriptions_deliver_matching_events_once(live: LiveHub, mode: str) -> None:
    alice, bob = await live.make_agent("alice"), await live.make_agent("bob")
    await live.make_project("demo")
    async with live.client(alice, mode=mode) as a, live.client(bob, mode=mode) as b:
        await b.call_tool("signal_append", {"project_id": "demo", "summary": "before subscribing"})
        sub = structured(
            await a.call_tool("notify_subscribe", {"kinds": ["finished"], "project_id": "demo", "drop_own": True})
        )
        assert sub["cursor"] is None
        empty = tool_error(await a.call_tool("notify_subscribe", {"kinds": []}), "invalid_argument")
        assert empty["details"] == {"argument": "kinds"}
        await a.call_tool("signal_append", {"project_id": "demo", "kind": "finished", "summary": "mine"})
        done = structured(
            await b.call_tool("signal_append", {"project_id": "demo", "kind": "finished", "summary": "bob finished"})
        )
        got = structured(await a.call_tool("notify_wait", {"wait_seconds": 0}))
        assert got["timed_out"] is False
        assert [(i["id"], i["source"]) for i in got["notifications"]["pending"]] == [(done["event_id"], "subscription")]
        assert got["notifications"]["pending"][0]["subscription_id"] == sub["subscription_id"]
        again = structured(await a.call_tool("notify_wait", {"wait_seconds": 0}))
        assert again == {"timed_out": True, "notifications": {"pending": []}}
        listed = structured(await a.call_tool("notify_list", {}))["subscriptions"]
        assert [s["subscription_id"] for s in listed] == [sub["subscription_id"]]
        assert listed[0]["cursor"] == done["event_id"]
        tool_error(await b.call_tool("notify_unsubscribe", {"subscription_id": sub["subscription_id"]}), "not_found")
        gone = structured(await a.call_tool("notify_unsubscribe", {"subscription_id": sub["subscription_id"]}))
        assert gone["removed"] is True


async def test_notify_wait_wakes_on_a_matching_event(live: LiveHub, blocked: anyio.Event) -> None:
    alice, bob = await live.make_agent("alice"), await live.make_agent("bob")
    await live.make_project("demo")
    async with live.client(alice) as a, live.client(bob) as b:
        await a.call_tool("notify_subscribe", {"kinds": ["signal"]})
        got: dict[str, object] = {}

        async def wait() -> None:
            got.update(structured(await a.call_tool("notify_wait", {"wait_seconds": 30})))

        async with anyio.create_task_group() as tg:
            tg.start_soon(wait)
            await blocked.wait()
            await b.call_tool("signal_append", {"project_id": "demo", "summary": "hello"})
        assert got["timed_out"] is False


@pytest.mark.parametrize("modern_era", [False, True])
async def test_trailer_on_the_wire_rides_in_structured_content_and_text(live: LiveHub, modern_era: bool) -> None:
    import json

    token = await live.make_agent("bot")
    async with live.client(token) as bot, live.client(ADMIN_TOKEN) as human:
        q = structured(await bot.call_tool("question_post", {"project_id": "space-bot", "summary": "Raw?"}))
        await human.call_tool("answer_post", {"question_id": q["question_id"], "body": "raw"})
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
    params: dict[str, object] = {"name": "whoami", "arguments": {}}
    if modern_era:
        params["_meta"] = MODERN_META
        headers.update({"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "whoami"})
    else:
        r = await live.http.post("/mcp", json=initialize(), headers=headers)
        headers.update({"Mcp-Session-Id": r.headers["mcp-session-id"], "MCP-Protocol-Version": "2025-11-25"})
        await live.http.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
    r = await live.http.post(
        "/mcp", json={"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params}, headers=headers
    )
    text = r.text
    if r.headers["content-type"].startswith("text/event-stream"):
        text = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")][-1]
    result = json.loads(text)["result"]
    assert set(result) >= {"content", "structuredContent"} and "notifications" not in result
    assert result["structuredContent"]["notifications"]["pending"][0]["kind"] == "answer"
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
    if modern_era:
        assert result["resultType"] == "complete"
