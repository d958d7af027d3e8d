"""Sockets on 127.0.0.1 that keep what reaches them: where a test stands in for the place a hostile
page would send what it stole, and then proves nothing arrived. TCP keeps the first bytes of each
connection (answering none); UDP keeps every datagram."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal


@dataclass
class Catcher:
    port: int
    sock: socket.socket
    received: list[bytes] = field(default_factory=list)

    def serve_tcp(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return  # closed: the test is over
            with conn:
                conn.settimeout(1)
                try:
                    self.received.append(conn.recv(1024))
                except OSError:
                    self.received.append(b"")

    def serve_udp(self) -> None:
        while True:
            try:
                data, _ = self.sock.recvfrom(4096)
            except OSError:
                return  # closed: the test is over
            self.received.append(data)


@contextlib.contextmanager
def catching(kind: Literal["tcp", "udp"]) -> Iterator[Catcher]:
    """A catcher on a free port, served by a thread until the block ends."""
    tcp = kind == "tcp"
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM if tcp else socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    if tcp:
        sock.listen(16)
    found = Catcher(int(sock.getsockname()[1]), sock)
    thread = threading.Thread(target=found.serve_tcp if tcp else found.serve_udp, daemon=True)
    thread.start()
    try:
        yield found
    finally:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept or recvfrom
        sock.close()
        thread.join(5)
