"""The gate's edges on the real `hub-cli serve` process, over raw sockets: targets Hypercorn passes
through unnormalised, refusals sent with the body unread, and a body that stalls."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator

import h2.config
import h2.connection
import h2.events
import httpx
import pytest

from tests.foundation.test_serve_e2e import Served, base_env, serve, wait_ready

pytestmark = pytest.mark.e2e

ADMIN_TOKEN = "hub_e2e-admin"


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    tmp = tmp_path_factory.mktemp("gate")
    env = base_env(tmp, HUB_ADMIN_TOKEN=ADMIN_TOKEN, HUB_BODY_IDLE_SECS="0.5")
    with serve(env) as served:
        wait_ready(served.url)
        yield served
        assert served.stop() == 0


def port_of(hub: Served) -> int:
    return int(hub.url.rsplit(":", 1)[1])


def exchange(hub: Served, head: bytes, later: bytes = b"") -> bytes:
    """Send `head`, read the first response, then send `later` (if the socket still takes it)
    and read until the server closes. Returns everything the server sent."""
    with socket.create_connection(("127.0.0.1", port_of(hub)), timeout=10) as sock:
        sock.sendall(head)
        received = sock.recv(65536)
        if later:
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the hub may have closed
                sock.sendall(later)
        while True:
            try:
                chunk = sock.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                break
            received += chunk
    return received


def statuses(received: bytes) -> list[bytes]:
    return [line for line in received.split(b"\r\n") if line.startswith(b"HTTP/1.1 ")]


def request(method: str, target: bytes, *headers: bytes, body: bytes = b"") -> bytes:
    lines = [method.encode() + b" " + target + b" HTTP/1.1", b"Host: 127.0.0.1", *headers]
    if body:
        lines += [b"Content-Type: application/json", b"Content-Length: " + str(len(body)).encode()]
    return b"\r\n".join([*lines, b"", b""]) + body


def h2_status(hub: Served, path: str, token: str) -> int:
    """The status of one HTTP/2 (prior knowledge) GET with `path` as its `:path`, sent verbatim."""
    config = h2.config.H2Configuration(
        client_side=True, validate_outbound_headers=False, normalize_outbound_headers=False
    )
    conn = h2.connection.H2Connection(config)
    conn.initiate_connection()
    conn.send_headers(
        1,
        [
            (":method", "GET"),
            (":scheme", "http"),
            (":authority", "127.0.0.1"),
            (":path", path),
            ("authorization", f"Bearer {token}"),
        ],
        end_stream=True,
    )
    with socket.create_connection(("127.0.0.1", port_of(hub)), timeout=10) as sock:
        sock.sendall(conn.data_to_send())
        while True:
            data = sock.recv(65536)
            assert data, "the server closed without answering"
            for event in conn.receive_data(data):
                if isinstance(event, h2.events.ResponseReceived):
                    return int(dict(event.headers)[b":status"])
            sock.sendall(conn.data_to_send())


def test_double_slash_and_absolute_form_reach_nothing(hub: Served) -> None:
    admin = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    assert httpx.post(f"{hub.url}/api/v1/agents", json={"id": "bot"}, headers=admin).status_code == 201
    assert httpx.post(f"{hub.url}/api/v1/projects", json={"id": "x"}, headers=admin).status_code == 201
    token = httpx.post(f"{hub.url}/api/v1/agents/bot/token", headers=admin).json()["token"]
    auth = b"Authorization: Bearer " + token.encode()
    origin = hub.url.encode()
    for target in (
        b"//metrics",
        b"//api/v1/home",
        origin + b"/api/v1/home",
        origin + b"/metrics",
        b"/./api/v1/home",
        b"/api%2Fv1/home",
    ):
        assert statuses(exchange(hub, request("GET", target, b"Connection: close"))) == [b"HTTP/1.1 400 "], target
        assert statuses(exchange(hub, request("GET", target, auth, b"Connection: close"))) == [b"HTTP/1.1 400 "], target
    for target in (b"//api/v1/projects/x", origin + b"/api/v1/projects/x"):
        sent = request("PATCH", target, auth, b"Connection: close", body=b'{"display_name": "mine"}')
        assert statuses(exchange(hub, sent)) == [b"HTTP/1.1 400 "]
    for path in ("//api/v1/home", f"{hub.url}/api/v1/home", "//metrics"):
        assert h2_status(hub, path, token) == 400, path
    assert h2_status(hub, "/api/v1/home", token) == 401  # the canonical spelling meets the gate
    assert h2_status(hub, "/api/v1/home", ADMIN_TOKEN) == 200
    assert httpx.get(f"{hub.url}/api/v1/projects/x", headers=admin).json()["display_name"] == "x"


@pytest.mark.parametrize(
    "headers",
    [
        (b"Content-Type: application/json",),  # 401: no token
        (b"Authorization: Bearer " + ADMIN_TOKEN.encode(), b"Content-Type: text/plain"),  # 415
    ],
    ids=["401", "415"],
)
def test_an_unread_body_is_never_read_as_the_next_request(hub: Served, headers: tuple[bytes, ...]) -> None:
    """The refusal comes before the body is sent. The body is a whole request of its own: were it
    parsed as the next request on the connection, a second status line would come back."""
    smuggled = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    head = request("POST", b"/api/v1/agents", *headers, b"Content-Length: " + str(len(smuggled)).encode())
    received = exchange(hub, head, smuggled)
    assert statuses(received) in ([b"HTTP/1.1 401 "], [b"HTTP/1.1 415 "])
    assert b"\r\nconnection: close\r\n" in received.lower()  # said by the hub: the request did not ask


def test_a_declared_length_over_the_limit_is_refused_and_the_connection_closed(hub: Served) -> None:
    head = request(
        "POST",
        b"/api/v1/projects",
        b"Authorization: Bearer " + ADMIN_TOKEN.encode(),
        b"Content-Type: application/json",
        b"Content-Length: 99999999",
    )
    received = exchange(hub, head, b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    assert statuses(received) == [b"HTTP/1.1 413 "] and b"\r\nconnection: close\r\n" in received.lower()


def test_a_stalled_body_is_cut_with_408(hub: Served) -> None:
    """Half a body, then nothing: past the idle window (0.5 s on this hub) the hub answers 408 and
    closes, instead of holding the connection open forever."""
    head = (
        request(
            "POST",
            b"/api/v1/projects",
            b"Authorization: Bearer " + ADMIN_TOKEN.encode(),
            b"Content-Type: application/json",
            b"Content-Length: 100",
        )
        + b'{"id": "slow'
    )
    with socket.create_connection(("127.0.0.1", port_of(hub)), timeout=10) as sock:
        sock.sendall(head)
        received = b""
        while chunk := sock.recv(65536):  # ends when the hub closes the connection
            received += chunk
    assert received.startswith(b"HTTP/1.1 408 ")
    assert b"\r\nconnection: close\r\n" in received.lower() and b"application/problem+json" in received
    projects = httpx.get(f"{hub.url}/api/v1/projects", headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
    assert "slow" not in [p["id"] for p in projects.json()["projects"]]
