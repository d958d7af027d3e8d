"""What leaves the hub for a push service: the aes128gcm body (RFC 8291, through `http_ece`), the
VAPID header (RFC 8292, through `py_vapid`), and the POST (the standard library's `http.client`).

This module runs in a worker process (`anyio.to_process`), so the CPU a push costs never contends
for the hub process's interpreter lock with the event loop and the store actors (measured: with the
sends in threads of the hub process, question_post ran at a tenth of its rate while 10 devices were
pushed). It imports nothing of the hub but this package's key codec. The worker keeps, for its
lifetime, one connection per push service origin and one signed VAPID token per audience (valid 12
hours, renewed an hour before it expires): state of the worker process, never of the hub.
"""

from __future__ import annotations

import http.client
import os
import ssl
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from hubcore.services.push.keys import unb64url

if TYPE_CHECKING:
    from py_vapid import Vapid

TIMEOUT_SECS = 10.0
THREADS = 4  # pushes of one item to different services go out together (network waits overlap)
NICE = 10  # the worker yields the CPU to the hub process whenever both want it (writes come first)
TOKEN_SECS = 12 * 3600
RENEW_SECS = 3600


@dataclass(frozen=True)
class Wire:
    """One push as the worker needs it (picklable): where, to whom, what, and its headers."""

    endpoint: str
    p256dh: str
    auth: str
    data: bytes
    urgency: str
    topic: str
    ttl: int


@dataclass
class _Worker:
    """The worker process's own connections and signed tokens (see the module docstring)."""

    pem: bytes = b""
    vapid: Vapid | None = None
    tokens: dict[str, tuple[float, dict[str, str]]] = field(default_factory=dict)
    local: threading.local = field(default_factory=threading.local)  # each thread's connections by origin
    lock: threading.Lock = field(default_factory=threading.Lock)
    pool: ThreadPoolExecutor | None = None
    niced: bool = False

    @property
    def conns(self) -> dict[str, http.client.HTTPConnection]:
        if not hasattr(self.local, "conns"):
            self.local.conns = {}
        held: dict[str, http.client.HTTPConnection] = self.local.conns
        return held


_worker = _Worker()  # per worker process; the hub process never calls into this module's state


def encrypt(push: Wire) -> bytes:
    """The aes128gcm body for the browser's keys: a fresh ephemeral key and salt per message."""
    import http_ece  # the libraries load in the worker process only (the hub process never sends)
    from cryptography.hazmat.primitives.asymmetric import ec

    server_key = ec.generate_private_key(ec.SECP256R1())
    return bytes(
        http_ece.encrypt(
            push.data,
            salt=os.urandom(16),
            private_key=server_key,
            dh=unb64url(push.p256dh),
            auth_secret=unb64url(push.auth),
            version="aes128gcm",
        )
    )


def _vapid(pem: bytes, contact: str, audience: str) -> dict[str, str]:
    with _worker.lock:
        return _signed(pem, contact, audience)


def _signed(pem: bytes, contact: str, audience: str) -> dict[str, str]:
    from py_vapid import Vapid

    if _worker.pem != pem or _worker.vapid is None:
        _worker.pem, _worker.vapid, _worker.tokens = pem, Vapid.from_pem(pem), {}
    now = time.time()
    held = _worker.tokens.get(audience)
    if held is None or held[0] - now < RENEW_SECS:
        exp = int(now) + TOKEN_SECS
        headers = _worker.vapid.sign({"sub": contact, "aud": audience, "exp": exp})
        held = (exp, {"Authorization": headers["Authorization"]})
        _worker.tokens[audience] = held
    return held[1]


def _connection(origin: str, scheme: str, netloc: str) -> http.client.HTTPConnection:
    conn = _worker.conns.get(origin)
    if conn is None:
        if scheme == "https":
            conn = http.client.HTTPSConnection(netloc, timeout=TIMEOUT_SECS, context=ssl.create_default_context())
        else:
            conn = http.client.HTTPConnection(netloc, timeout=TIMEOUT_SECS)
        _worker.conns[origin] = conn
    return conn


def _post(push: Wire, pem: bytes, contact: str) -> int:
    parts = urlsplit(push.endpoint)
    origin = f"{parts.scheme}://{parts.netloc}"
    body = encrypt(push)
    headers = {
        **_vapid(pem, contact, origin),
        "Content-Encoding": "aes128gcm",
        "Content-Type": "application/octet-stream",
        "TTL": str(push.ttl),
        "Urgency": push.urgency,
        "Topic": push.topic,
        "Content-Length": str(len(body)),
    }
    target = parts.path + (f"?{parts.query}" if parts.query else "") or "/"
    for attempt in (1, 2):  # a kept connection the service closed meanwhile is reopened once
        conn = _connection(origin, parts.scheme, parts.netloc)
        try:
            conn.request("POST", target, body=body, headers=headers)
            response = conn.getresponse()
            response.read(65536)
            if response.will_close:
                conn.close()
                _worker.conns.pop(origin, None)
            return response.status
        except (OSError, http.client.HTTPException):
            conn.close()
            _worker.conns.pop(origin, None)
            if attempt == 2:
                return 0
    return 0


def send_all(pushes: list[Wire], pem: bytes, contact: str) -> list[int]:
    """Encrypt, sign and POST each push (a few at once); each one's HTTP status (0: no answer)."""
    if not _worker.niced:
        _worker.niced = True
        os.nice(NICE)  # this worker process only: a push burst never slows a write down
    if len(pushes) == 1:
        return [_post(pushes[0], pem, contact)]
    if _worker.pool is None:
        _worker.pool = ThreadPoolExecutor(THREADS, thread_name_prefix="push")
    return list(_worker.pool.map(lambda push: _post(push, pem, contact), pushes))
