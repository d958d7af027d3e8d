"""A loopback push service for tests: it checks every push the way a real one does (the VAPID token:
ES256 signature with the key the hub sent, `aud` the endpoint's origin, `exp` within 24 hours) and
then decrypts the `aes128gcm` body with the device's own keys, as the browser would."""

from __future__ import annotations

import base64
import json
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import anyio
import http_ece
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass
class Device:
    """A browser's push subscription: its key pair and auth secret, and the endpoint it was given."""

    endpoint: str
    key: ec.EllipticCurvePrivateKey = field(default_factory=lambda: ec.generate_private_key(ec.SECP256R1()))
    auth: bytes = field(default_factory=lambda: os.urandom(16))

    @property
    def p256dh(self) -> str:
        return b64(
            self.key.public_key().public_bytes(
                serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
            )
        )

    def subscription(self, name: str = "phone", **extra: Any) -> dict[str, Any]:
        return {
            "name": name,
            "endpoint": self.endpoint,
            "keys": {"p256dh": self.p256dh, "auth": b64(self.auth)},
            **extra,
        }


def verify_vapid(authorization: str, endpoint_origin: str) -> dict[str, Any]:
    """The claims of a `vapid t=<jwt>, k=<key>` header, after checking it; AssertionError if not."""
    assert authorization.startswith("vapid "), authorization
    parts = dict(p.strip().split("=", 1) for p in authorization[len("vapid ") :].split(","))
    token, key = parts["t"], parts["k"]
    header_b64, claims_b64, sig_b64 = token.split(".")
    assert json.loads(unb64(header_b64)) == {"typ": "JWT", "alg": "ES256"}
    public = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), unb64(key))
    sig = unb64(sig_b64)
    assert len(sig) == 64
    der = encode_dss_signature(int.from_bytes(sig[:32], "big"), int.from_bytes(sig[32:], "big"))
    public.verify(der, f"{header_b64}.{claims_b64}".encode(), ec.ECDSA(hashes.SHA256()))  # raises if forged
    claims: dict[str, Any] = json.loads(unb64(claims_b64))
    assert claims["aud"] == endpoint_origin
    assert time.time() < claims["exp"] <= time.time() + 24 * 3600
    assert claims["sub"].startswith(("mailto:", "https://"))
    claims["k"] = key
    return claims


class PushService:
    """The receiver: endpoints `/push/<n>` each answer with the status set for them (201 default)."""

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []
        self.devices: dict[str, Device] = {}
        self.status: dict[str, list[int]] = {}  # path -> statuses to answer in turn (then 201)
        self.arrived = threading.Semaphore(0)
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.origin = f"http://127.0.0.1:{self.server.server_address[1]}"

    def device(self) -> Device:
        path = f"/push/{len(self.devices)}"
        device = Device(self.origin + path)
        self.devices[path] = device
        return device

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        service = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                queued = service.status.get(self.path) or []
                status = queued.pop(0) if queued else 201
                headers = {k.lower(): v for k, v in self.headers.items()}
                service.received.append(service.open(self.path, headers, body, status))
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()
                service.arrived.release()

            def log_message(self, *args: Any) -> None:
                return None

        return Handler

    def open(self, path: str, headers: dict[str, str], body: bytes, status: int) -> dict[str, Any]:
        """What arrived, checked and decrypted with the device's keys."""
        device = self.devices[path]
        claims = verify_vapid(headers["authorization"], self.origin)
        assert headers["content-encoding"] == "aes128gcm"
        plain = http_ece.decrypt(body, private_key=device.key, auth_secret=device.auth, version="aes128gcm")
        return {
            "path": path,
            "headers": headers,
            "claims": claims,
            "message": json.loads(plain),
            "status": status,
            "at": time.perf_counter(),
        }

    async def next(self, timeout: float = 5.0) -> dict[str, Any]:
        got = await anyio.to_thread.run_sync(lambda: self.arrived.acquire(timeout=timeout))
        assert got, "no push arrived"
        return self.received[-1]

    def none_within(self, seconds: float) -> bool:
        return not self.arrived.acquire(timeout=seconds)


def serving() -> Iterator[PushService]:
    service = PushService()
    # shutdown() waits for the loop's next look at its flag: every 0.05 s, not the default 0.5 s
    # that every test using this service spent in its teardown.
    thread = threading.Thread(target=service.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield service
    finally:
        service.server.shutdown()
        service.server.server_close()
