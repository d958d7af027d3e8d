"""The outbound webhook (the spec's notify target, `notify_url`): a contentless POST when
something starts waiting on the human.

With `notify_url` set, a question, approval or enrolment request that starts waiting pokes the
target; the hub POSTs the plain text `Something is waiting for you in Agent Hub.` (no project,
agent, title, id or count) with `Authorization: Bearer <notify_token>` when a token is set. Sends
are coalesced: the first poke sends at once, pokes during the following `notify_interval_secs`
fold into one trailing send at its end. Background only, 10-second timeout, no retry; each send is
counted as `hub_notify_sends_total{result="delivered"|"failed"}`. The token goes only into the
header and is never logged.

hubcore does not import httpx: the default sender POSTs with `urllib.request` in a worker thread.
"""

from __future__ import annotations

import logging
import time
import urllib.error
import urllib.request
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any, Protocol
from urllib.parse import urlsplit

import anyio

from hubcore.clock import iso
from hubcore.config import HubSettings
from hubcore.metrics import HubMetrics
from hubcore.services.changes import Effects

log = logging.getLogger("hubcore.notify")

BODY = b"Something is waiting for you in Agent Hub."
TIMEOUT_SECS = 10.0


class Sender(Protocol):
    async def send(self, url: str, body: bytes, headers: dict[str, str], timeout: float) -> None:
        """POST `body`; raise on any failure (no answer, timeout, a non-2xx status)."""
        ...


def _post(url: str, body: bytes, headers: dict[str, str], timeout: float) -> None:
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            response.read(65536)
            if not 200 <= response.status < 300:
                raise OSError(f"notify target answered {response.status}")
    except urllib.error.HTTPError as exc:
        # urllib raises for an error status holding the open response: close it, or its socket leaks.
        exc.close()
        raise


class UrllibSender:
    """The standard library's HTTP client, run in a worker thread so the loop never blocks."""

    async def send(self, url: str, body: bytes, headers: dict[str, str], timeout: float) -> None:
        await anyio.to_thread.run_sync(partial(_post, url, body, headers, timeout), abandon_on_cancel=True)


def safe_url(url: str) -> str:
    """The target for logs: scheme, host and port only (no credentials, path or query)."""
    parts = urlsplit(url)
    host = parts.hostname or "?"
    return f"{parts.scheme}://{host}{f':{parts.port}' if parts.port else ''}"


class Webhook:
    def __init__(
        self,
        settings: HubSettings,
        metrics: HubMetrics,
        *,
        sender: Sender | None = None,
        sleep: Callable[[float], Awaitable[None]] = anyio.sleep,
    ) -> None:
        self.url = settings.notify_url or None
        self._token = settings.notify_token or None
        self.interval = float(settings.notify_interval_secs)
        self._metrics = metrics
        self._sender = sender or UrllibSender()
        self._sleep = sleep
        self._pending = False
        self._wake = anyio.Event()
        self.sent = 0
        self.last: tuple[str, float] | None = None  # (delivered | failed, when): the app shows it
        if self.url:
            for result in ("delivered", "failed"):
                metrics.notify_sends.labels(result=result)

    @property
    def enabled(self) -> bool:
        return self.url is not None

    def on_commit(self, effects: Effects) -> None:
        """A committed write's effects: poke when something started waiting on the human."""
        if effects.started_waiting:
            self.poke()

    def poke(self) -> None:
        """Something started waiting (called after the commit). Never blocks, never raises."""
        if self.url is None:
            return
        self._pending = True
        self._wake.set()

    async def run(self) -> None:
        """Background task: one send per poke burst, at most one per interval, one trailing."""
        if self.url is None:
            return
        while True:
            await self._wake.wait()
            self._wake = anyio.Event()
            while self._pending:
                self._pending = False
                await self.send_once()
                await self._sleep(self.interval)

    async def send_once(self) -> bool:
        """One POST to the target; logs and counts the outcome. True when delivered."""
        assert self.url is not None
        headers = {"Content-Type": "text/plain; charset=utf-8", "User-Agent": "agent-hub"}
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        self.sent += 1
        try:
            with anyio.fail_after(TIMEOUT_SECS):
                await self._sender.send(self.url, BODY, headers, TIMEOUT_SECS)
        except Exception as exc:
            reason = "timed out" if isinstance(exc, TimeoutError) else type(exc).__name__
            log.warning("notify send to %s failed (%s); not retried", safe_url(self.url), reason)
            self._metrics.notify_sends.labels(result="failed").inc()
            self.last = ("failed", time.time())
            return False
        self._metrics.notify_sends.labels(result="delivered").inc()
        self.last = ("delivered", time.time())
        return True

    def state(self) -> dict[str, Any]:
        """Whether a target is set and how its last send went (never the URL or the token)."""
        return {
            "configured": self.enabled,
            "last_result": self.last[0] if self.last else None,
            "last_at": iso(self.last[1]) if self.last else None,
        }
