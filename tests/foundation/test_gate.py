"""The global HTTP rules: 400, 401 before the body, 415, 413 while streaming, 405, problems."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import unquote_to_bytes

import anyio
import orjson
import pytest
from trio.testing import MockClock

from hubcore.errors import HubError
from hubhttp.gate import MAX_BODY, BodyPace, check_target, read_capped
from tests.harness import ADMIN, HubClient, hub_client
from tests.harness import test_settings as settings_for

pytestmark = pytest.mark.anyio


def project_count(client: HubClient) -> int:
    with client.db() as conn:
        return int(conn.execute("SELECT COUNT(*) FROM projects").fetchone()[0])


def assert_problem(r: Any, status: int, code: str) -> dict[str, Any]:
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/problem+json")
    doc = r.json()
    assert doc["status"] == status and doc["code"] == code and doc["type"] == "about:blank"
    assert doc["title"] and doc["detail"]
    return dict(doc)


async def test_unknown_route_is_a_problem(client: HubClient) -> None:
    assert_problem(await client.get("/nope", headers=ADMIN), 404, "not_found")
    assert_problem(await client.get("/api/v1/nope", headers=ADMIN), 404, "not_found")


async def test_admin_gate_without_token_is_401_whatever_the_body(client: HubClient) -> None:
    r = await client.post("/api/v1/agents", content=b"\xff not json", headers={"content-type": "text/plain"})
    doc = assert_problem(r, 401, "unauthenticated")
    assert "admin token" in doc["detail"]
    assert r.headers["www-authenticate"].startswith("Bearer")
    r = await client.post("/api/v1/agents", content=b"x" * (MAX_BODY + 10))
    assert_problem(r, 401, "unauthenticated")


async def test_agent_token_is_not_the_admin_token(client: HubClient) -> None:
    token = await client.make_agent("bot")
    r = await client.get("/api/v1/agents", headers=client.agent(token))
    assert_problem(r, 401, "unauthenticated")
    r = await client.get("/metrics", headers=client.agent(token))
    assert_problem(r, 401, "unauthenticated")


async def test_wrong_scheme_and_garbage_tokens_are_401(client: HubClient) -> None:
    for header in ("Basic abc", "Bearer", "Bearer ", "bearer nope", "token " + ADMIN["Authorization"][7:]):
        r = await client.get("/api/v1/agents", headers={"Authorization": header})
        assert_problem(r, 401, "unauthenticated")


async def test_unreadable_query_is_400_before_the_gate(client: HubClient) -> None:
    r = await client.get("/api/v1/agents?q=%ff%fe")
    assert_problem(r, 400, "invalid_argument")
    r = await client.get("/api/v1/agents?q=%ff", headers=ADMIN)
    assert_problem(r, 400, "invalid_argument")


async def test_bad_path_segment_is_400(client: HubClient) -> None:
    assert_problem(await client.get("/api/v1/projects/%ff", headers=ADMIN), 400, "invalid_argument")
    assert_problem(await client.get("/api/v1/projects/a%00b", headers=ADMIN), 400, "invalid_argument")


async def test_method_not_served_is_405_with_allow(client: HubClient) -> None:
    r = await client.put("/api/v1/projects", headers=ADMIN)
    assert_problem(r, 405, "method_not_allowed")
    assert set(r.headers["allow"].replace(" ", "").split(",")) >= {"GET", "POST"}
    r = await client.post("/api/v1/projects/x", headers=ADMIN, json={})
    assert_problem(r, 405, "method_not_allowed")
    assert "PATCH" in r.headers["allow"] and "DELETE" in r.headers["allow"]


async def test_non_json_body_is_415_and_writes_nothing(client: HubClient) -> None:
    before = project_count(client)
    r = await client.post("/api/v1/projects", content=b'{"id": "x"}', headers={**ADMIN, "content-type": "text/plain"})
    doc = assert_problem(r, 415, "invalid_argument")
    assert "application/json" in doc["detail"]
    r = await client.post("/api/v1/projects", content=b'{"id": "x"}', headers=ADMIN)  # no content type
    assert_problem(r, 415, "invalid_argument")
    assert project_count(client) == before


async def test_json_with_charset_is_accepted(client: HubClient) -> None:
    r = await client.post(
        "/api/v1/projects", content=b'{"id": "x"}', headers={**ADMIN, "content-type": "application/json; charset=utf-8"}
    )
    assert r.status_code == 201


async def test_unparseable_json_is_400_and_writes_nothing(client: HubClient) -> None:
    before = project_count(client)
    r = await client.post("/api/v1/projects", content=b'{"id": ', headers={**ADMIN, "content-type": "application/json"})
    assert_problem(r, 400, "invalid_argument")
    r = await client.post("/api/v1/projects", json=["not", "an", "object"], headers=ADMIN)
    assert_problem(r, 400, "invalid_argument")
    assert project_count(client) == before


def _padded_body(size: int) -> bytes:
    """A JSON object body of exactly `size` bytes creating project `edge`, padded with JSON's
    insignificant whitespace (a project takes no member it does not know)."""
    head = b'{"id": "edge"'
    tail = b"}"
    return head + b" " * (size - len(head) - len(tail)) + tail


async def test_body_at_the_limit_passes_and_one_over_is_413(client: HubClient) -> None:
    before = project_count(client)
    over = _padded_body(MAX_BODY + 1)
    r = await client.post("/api/v1/projects", content=over, headers={**ADMIN, "content-type": "application/json"})
    doc = assert_problem(r, 413, "payload_too_large")
    assert str(MAX_BODY) in doc["detail"]
    assert project_count(client) == before
    at = _padded_body(MAX_BODY)
    r = await client.post("/api/v1/projects", content=at, headers={**ADMIN, "content-type": "application/json"})
    assert r.status_code == 201, r.text
    assert project_count(client) == before + 1


async def _call_streaming(
    client: HubClient, chunks: list[bytes], headers: list[tuple[bytes, bytes]]
) -> tuple[int, int]:
    """Send a chunked body straight to the ASGI app; returns (status, chunks the app pulled)."""
    pulled = 0
    status = 0

    async def receive() -> dict[str, Any]:
        nonlocal pulled
        pulled += 1
        if pulled > len(chunks):
            return {"type": "http.disconnect"}
        return {"type": "http.request", "body": chunks[pulled - 1], "more_body": pulled < len(chunks)}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/api/v1/projects",
        "raw_path": b"/api/v1/projects",
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 8080),
    }
    await client.app(scope, receive, send)
    return status, pulled


async def test_chunked_body_over_the_limit_stops_reading_at_the_limit(client: HubClient) -> None:
    before = project_count(client)
    chunk = b"a" * 65536
    chunks = [b'{"id": "big", "pad": "'] + [chunk] * 80 + [b'"}']  # about 5 MiB
    headers = [
        (b"authorization", ADMIN["Authorization"].encode()),
        (b"content-type", b"application/json"),
        (b"transfer-encoding", b"chunked"),
    ]
    status, pulled = await _call_streaming(client, chunks, headers)
    assert status == 413
    # Reading stopped at the first chunk that crossed 4 MiB: nothing past it was buffered.
    assert pulled == 1 + MAX_BODY // len(chunk)  # the head chunk, then 64 chunks cross the limit
    assert project_count(client) == before


async def test_declared_length_over_the_limit_is_refused_without_reading(client: HubClient) -> None:
    headers = [
        (b"authorization", ADMIN["Authorization"].encode()),
        (b"content-type", b"application/json"),
        (b"content-length", str(MAX_BODY + 1).encode()),
    ]
    status, pulled = await _call_streaming(client, [b"{}"], headers)
    assert (status, pulled) == (413, 0)


async def test_admin_gate_reads_no_body(client: HubClient) -> None:
    headers = [(b"content-type", b"application/json"), (b"content-length", b"2")]
    status, pulled = await _call_streaming(client, [b"{}"], headers)
    assert (status, pulled) == (401, 0)


async def test_failures_are_counted_by_code_in_metrics(client: HubClient) -> None:
    await client.get("/api/v1/agents")
    await client.get("/api/v1/projects/missing", headers=ADMIN)
    r = await client.get("/metrics", headers=ADMIN)
    assert r.status_code == 200
    text = r.text
    assert 'hub_failed_responses_total{code="unauthenticated"} 1.0' in text
    assert 'hub_failed_responses_total{code="not_found"} 1.0' in text
    assert 'hub_http_requests_total{method="GET",status_class="4xx"} 2.0' in text


# -- the floor pace of a request body -----------------------------------------------------------

PACE = BodyPace(idle_secs=30.0, min_rate=1024)


def trickle(chunks: list[tuple[float, bytes]], *, then_hang: bool = False) -> Any:
    """A `receive` handing over each chunk after its delay (virtual time under MockClock); after
    the last it hangs, or ends the body."""
    queue = list(chunks)

    async def receive() -> dict[str, Any]:
        if not queue:
            await anyio.sleep_forever()
        delay, chunk = queue.pop(0)
        await anyio.sleep(delay)
        return {"type": "http.request", "body": chunk, "more_body": bool(queue) or then_hang}

    return receive


@pytest.mark.parametrize("anyio_backend", [("trio", {"clock": MockClock(autojump_threshold=0)})])
async def test_a_body_that_stops_is_cut_when_idle(anyio_backend: Any) -> None:
    started = anyio.current_time()
    with pytest.raises(HubError) as cut:
        await read_capped(trickle([(0, b"x" * 60_000)], then_hang=True), MAX_BODY, PACE)
    assert cut.value.status == 408 and cut.value.code == "invalid_argument"
    # Far ahead on the rate budget, so the idle rule cut it: 30 virtual seconds after the last byte.
    assert anyio.current_time() - started == pytest.approx(30.0)


@pytest.mark.parametrize("anyio_backend", [("trio", {"clock": MockClock(autojump_threshold=0)})])
async def test_a_trickle_inside_the_idle_window_is_cut_by_the_rate_floor(anyio_backend: Any) -> None:
    started = anyio.current_time()
    with pytest.raises(HubError) as cut:
        await read_capped(trickle([(25, b"x")] * 100), MAX_BODY, PACE)
    assert cut.value.status == 408
    # One byte by 25 s is under 1 KiB/s once the first 30 s are spent: cut then, not at 2500 s.
    assert anyio.current_time() - started == pytest.approx(30 + 1 / 1024)


@pytest.mark.parametrize("anyio_backend", [("trio", {"clock": MockClock(autojump_threshold=0)})])
async def test_an_honest_slow_link_is_never_cut(anyio_backend: Any) -> None:
    """4 MiB over a 2G-class link (4 KiB/s, in 8 KiB bursts with 20-second stalls and a slow
    start) arrives whole."""
    chunks = [(12.0, b"x" * 100)] + [(2.0, b"x" * 8192)] * 200 + [(20.0, b"x" * 8192)] + [(1.0, b"x" * 8192)] * 40
    body = await read_capped(trickle(chunks), MAX_BODY, PACE)
    assert len(body) == 100 + 241 * 8192


def held(*chunks: bytes, more: bool = False) -> asyncio.Queue[dict[str, Any]]:
    """A body already received, as Hypercorn holds it: its `receive` is this queue's `get`."""
    queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    for i, chunk in enumerate(chunks):
        queue.put_nowait({"type": "http.request", "body": chunk, "more_body": more or i < len(chunks) - 1})
    return queue


async def test_a_body_the_server_already_holds_is_read_without_arming_the_pace(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    loop = asyncio.get_running_loop()
    armed: list[float] = []
    call_at = loop.call_at
    monkeypatch.setattr(loop, "call_at", lambda when, *rest: armed.append(when) or call_at(when, *rest))
    queue = held(b'{"a":', b" 1}", b"")
    assert await read_capped(queue.get, MAX_BODY, PACE) == b'{"a": 1}'
    assert armed == [] and queue.empty()


async def test_a_held_start_then_the_rest_is_read_under_the_pace() -> None:
    queue = held(b"x" * 10, more=True)
    loop = asyncio.get_running_loop()
    loop.call_later(0.05, queue.put_nowait, {"type": "http.request", "body": b"y", "more_body": False})
    assert await read_capped(queue.get, MAX_BODY, PACE) == b"x" * 10 + b"y"
    # A held start whose rest never comes is cut by the pace, counted from the first wait.
    with pytest.raises(HubError) as cut:
        await read_capped(held(b"x" * 10, more=True).get, MAX_BODY, BodyPace(idle_secs=0.05, min_rate=0))
    assert cut.value.status == 408


async def test_a_held_body_over_the_limit_or_a_held_disconnect_is_refused_at_once() -> None:
    queue = held(b"x" * 6, b"x" * 6, b"x" * 6)
    with pytest.raises(HubError) as cut:
        await read_capped(queue.get, 10, PACE)
    assert cut.value.code == "payload_too_large" and queue.qsize() == 1  # the third chunk is never read
    queue = held(b"x" * 6, more=True)
    queue.put_nowait({"type": "http.disconnect"})
    with pytest.raises(HubError) as gone:
        await read_capped(queue.get, MAX_BODY, PACE)
    assert gone.value.code == "invalid_argument" and "went away" in gone.value.message


async def test_a_slow_body_is_answered_408_and_the_connection_closed(tmp_path: Any) -> None:
    """Through the whole app: the 408 is a problem document, no handler ran, nothing was written,
    and the response tells an HTTP/1.1 client the connection is closing."""
    settings = settings_for(tmp_path / "data", body_idle_secs=0.001)
    async with hub_client(settings) as client:
        before = project_count(client)
        headers = [
            (b"authorization", ADMIN["Authorization"].encode()),
            (b"content-type", b"application/json"),
            (b"content-length", b"1000"),
        ]
        status, response_headers, body = await _call_hanging(client, [b'{"id": "slow", "pad": "'], headers)
        assert status == 408
        assert orjson.loads(body)["code"] == "invalid_argument" and (b"connection", b"close") in response_headers
        assert project_count(client) == before


Reply = tuple[int, list[tuple[bytes, bytes]], bytes]


async def _asgi(
    client: HubClient,
    receive: Callable[[], Awaitable[dict[str, Any]]],
    *,
    version: str,
    method: str,
    path: str,
    headers: list[tuple[bytes, bytes]],
) -> Reply:
    """One request straight into the app's ASGI callable: its status, headers and body."""
    answer: dict[str, Any] = {"body": b""}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            answer["status"], answer["headers"] = message["status"], list(message["headers"])
        else:
            answer["body"] += message.get("body", b"")

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": version,
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 8080),
    }
    await client.app(scope, receive, send)
    return answer["status"], answer["headers"], answer["body"]


async def _call_hanging(client: HubClient, chunks: list[bytes], headers: list[tuple[bytes, bytes]]) -> Reply:
    """Send `chunks` of a longer body, then nothing more (the client hangs, never disconnects)."""
    queue = list(chunks)

    async def receive() -> dict[str, Any]:
        if not queue:
            await anyio.sleep_forever()
        return {"type": "http.request", "body": queue.pop(0), "more_body": True}

    with anyio.fail_after(10):  # a hang guard only
        return await _asgi(client, receive, version="1.1", method="POST", path="/api/v1/projects", headers=headers)


async def test_refusals_before_the_body_close_http1_connections_only(client: HubClient) -> None:
    """401 (no token), 413 (from Content-Length) and 415 are sent with the body unread: on HTTP/1.1
    the response says `Connection: close`; HTTP/2 has no such header (its stream just ends); a
    refusal of a request without a body keeps the connection."""
    cases = [
        ([(b"content-type", b"application/json"), (b"content-length", b"2")], 401),
        (
            [
                (b"authorization", ADMIN["Authorization"].encode()),
                (b"content-type", b"application/json"),
                (b"content-length", str(MAX_BODY + 1).encode()),
            ],
            413,
        ),
        (
            [
                (b"authorization", ADMIN["Authorization"].encode()),
                (b"content-type", b"text/plain"),
                (b"content-length", b"2"),
            ],
            415,
        ),
    ]
    for headers, status in cases:
        for version, closes in (("1.1", True), ("1.0", True), ("2", False)):
            got, response_headers, _ = await _call_version(client, version, "POST", headers)
            assert got == status
            assert ((b"connection", b"close") in response_headers) is closes, (status, version)
    got, response_headers, _ = await _call_version(client, "1.1", "GET", [])
    assert got == 401 and (b"connection", b"close") not in response_headers


async def _call_version(client: HubClient, version: str, method: str, headers: list[tuple[bytes, bytes]]) -> Reply:
    async def receive() -> dict[str, Any]:
        raise AssertionError("the body must not be read")

    return await _asgi(client, receive, version=version, method=method, path="/api/v1/agents", headers=headers)


@pytest.mark.parametrize(
    ("raw", "query", "refused"),
    [
        (b"/api/v1/projects/p-1_x~y", b"", False),
        (b"/.well-known/x", b"", False),  # a segment starting with a dot is not a dot segment
        (b"/api/v1/a//b", b"", True),
        (b"/api/v1/./b", b"", True),
        (b"/api/v1/a/..", b"", True),
        (b"api/v1/home", b"", True),
        (b"/api/v1/%2e%2e/b", b"", True),  # the same, encoded: the slow path
        (b"/api/v1/a%2Fb", b"", True),
        (b"/api/v1/caf%C3%A9", b"", False),
        (b"/api/v1/%FF", b"", True),
        (b"/api/v1/a%01", b"", True),
        (b"/api/v1/home", b"limit=5&cursor=a-b", False),
        (b"/api/v1/home", b"q=caf%C3%A9", False),
        (b"/api/v1/home", b"q=%FF", True),
    ],
)
def test_the_plain_path_and_the_decoding_path_judge_targets_alike(raw: bytes, query: bytes, refused: bool) -> None:
    """A plain target (issue 27: checked by one match) gets the answers the full check gives."""
    scope = {"raw_path": raw, "path": unquote_to_bytes(raw).decode("utf-8", "surrogateescape"), "query_string": query}
    if refused:
        with pytest.raises(HubError) as caught:
            check_target(scope)
        assert caught.value.code == "invalid_argument"
    else:
        check_target(scope)
