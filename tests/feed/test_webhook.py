"""The notify target: a contentless POST to a real loopback receiver, coalesced, counted, quiet."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import anyio
import pytest

from hubcore.caller import Caller
from hubcore.config import HubSettings
from hubcore.metrics import HubMetrics
from hubcore.services import webhook as nt
from tests.core.support import wait_until
from tests.feed.conftest import ClientFactory
from tests.requests import a_question, a_signal

pytestmark = pytest.mark.anyio
TOKEN = "notify-secret-token-123"


class Receiver:
    """A tiny HTTP server on loopback that records what it was sent."""

    def __init__(self, status: int = 204, delay: float = 0.0) -> None:
        self.requests: list[dict[str, Any]] = []
        self.arrived = threading.Semaphore(0)
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                receiver.requests.append({"path": self.path, "body": body, "headers": dict(self.headers)})
                time.sleep(delay)
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()
                receiver.arrived.release()

            def log_message(self, *args: Any) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook?x=1"

    async def next(self, timeout: float = 5.0) -> dict[str, Any]:
        got = await anyio.to_thread.run_sync(lambda: self.arrived.acquire(timeout=timeout))
        assert got, "no notify request arrived"
        return self.requests[-1]


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    thread = threading.Thread(target=r.server.serve_forever, daemon=True)
    thread.start()
    yield r
    r.server.shutdown()
    r.server.server_close()


def counted(metrics: HubMetrics, result: str) -> float:
    value = metrics.registry.get_sample_value("hub_notify_sends_total", {"result": result})
    return float(value or 0)


async def test_a_question_sends_the_contentless_post(
    make_client: ClientFactory, receiver: Receiver, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    async with make_client(notify_url=receiver.url, notify_token=TOKEN, notify_interval_secs=60) as client:
        await client.make_project("proj")
        hub = client.app.hub
        await hub.posts.signal_append(Caller.admin(), a_signal(project_id="proj", summary="just a signal"))
        await hub.posts.question_post(Caller.admin(), a_question(project_id="proj", summary="Secret question title?"))
        request = await receiver.next()
        assert request["body"] == b"Something is waiting for you in Agent Hub."
        assert request["path"] == "/hook?x=1"
        assert request["headers"]["Authorization"] == f"Bearer {TOKEN}"
        assert request["headers"]["Content-Type"].startswith("text/plain")
        await wait_until(lambda: counted(hub.metrics, "delivered") >= 1, "the send to be counted")
        assert len(receiver.requests) == 1  # the signal sent nothing
        assert b"hub_notify_sends_total" in hub.metrics.render()
    assert TOKEN not in caplog.text


async def test_failures_are_counted_logged_and_not_retried(caplog: pytest.LogCaptureFixture) -> None:
    failing = Receiver(status=500)
    threading.Thread(target=failing.server.serve_forever, daemon=True).start()
    try:
        metrics = HubMetrics(__import__("pathlib").Path("."))
        target = nt.Webhook(HubSettings(notify_url=failing.url, notify_token=TOKEN), metrics)
        assert await target.send_once() is False
        assert counted(metrics, "failed") == 1 and counted(metrics, "delivered") == 0
        assert len(failing.requests) == 1
    finally:
        failing.server.shutdown()
        failing.server.server_close()
    # Nobody listening at all.
    dead = nt.Webhook(HubSettings(notify_url="http://127.0.0.1:9/x", notify_token=TOKEN), metrics)
    assert await dead.send_once() is False
    assert counted(metrics, "failed") == 2
    assert "notify send to http://127.0.0.1" in caplog.text and TOKEN not in caplog.text


async def test_the_send_times_out(monkeypatch: pytest.MonkeyPatch) -> None:
    slow = Receiver(delay=1.0)
    threading.Thread(target=slow.server.serve_forever, daemon=True).start()
    monkeypatch.setattr(nt, "TIMEOUT_SECS", 0.2)
    try:
        metrics = HubMetrics(__import__("pathlib").Path("."))
        target = nt.Webhook(HubSettings(notify_url=slow.url), metrics)
        start = time.monotonic()
        assert await target.send_once() is False
        assert time.monotonic() - start < 0.9 and counted(metrics, "failed") == 1
    finally:
        slow.server.shutdown()
        slow.server.server_close()


class FakeSender:
    def __init__(self) -> None:
        self.sent: list[dict[str, str]] = []

    async def send(self, url: str, body: bytes, headers: dict[str, str], timeout: float) -> None:
        self.sent.append(headers)


class GateSleep:
    """A sleep that lasts until the test opens it: the interval, without waiting in real time."""

    def __init__(self) -> None:
        self.asked: list[float] = []
        self._open = anyio.Event()

    async def __call__(self, seconds: float) -> None:
        self.asked.append(seconds)
        await self._open.wait()
        self._open = anyio.Event()

    def open(self) -> None:
        self._open.set()


async def test_sends_are_coalesced_with_one_trailing_send() -> None:
    sender, sleep = FakeSender(), GateSleep()
    metrics = HubMetrics(__import__("pathlib").Path("."))
    target = nt.Webhook(
        HubSettings(notify_url="http://x/", notify_interval_secs=60), metrics, sender=sender, sleep=sleep
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(target.run)
        for _ in range(3):
            target.poke()
        await anyio.wait_all_tasks_blocked()
        assert len(sender.sent) == 1 and sleep.asked == [60.0]  # first poke sends at once
        for _ in range(5):
            target.poke()  # inside the interval: folded into one trailing send
        await anyio.wait_all_tasks_blocked()
        assert len(sender.sent) == 1
        sleep.open()
        await anyio.wait_all_tasks_blocked()
        assert len(sender.sent) == 2 and "Authorization" not in sender.sent[0]
        sleep.open()  # a quiet interval: no further send
        await anyio.wait_all_tasks_blocked()
        assert len(sender.sent) == 2
        target.poke()
        await anyio.wait_all_tasks_blocked()
        assert len(sender.sent) == 3
        tg.cancel_scope.cancel()
    assert counted(metrics, "delivered") == 3


async def test_unset_url_sends_nothing(make_client: ClientFactory) -> None:
    async with make_client() as client:
        await client.make_project("proj")
        hub = client.app.hub
        assert not hub.webhook.enabled
        await hub.posts.question_post(Caller.admin(), a_question(project_id="proj", summary="q?"))
        assert hub.webhook.sent == 0
        assert b"hub_notify_sends_total{" not in hub.metrics.render()


def test_safe_url_drops_credentials_and_path() -> None:
    assert nt.safe_url("https://user:pw@example.test:8443/a/b?token=x") == "https://example.test:8443"
