"""End to end: the real `hub-cli serve` process."""

from __future__ import annotations

import os
import signal
import socket
import sqlite3
import ssl
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

pytestmark = pytest.mark.e2e


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def base_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HUB_")}
    env.update(
        {
            "HUB_CONFIG": str(tmp_path / "config.toml"),
            "HUB_DATA_DIR": str(tmp_path / "data"),
            "HUB_SHUTDOWN_GRACE_SECS": "3",
            "HUB_MIN_FREE_BYTES": "0",
            **extra,
        }
    )
    return env


class Served:
    def __init__(self, proc: subprocess.Popen[str], url: str, lines: list[str]) -> None:
        self.proc, self.url, self.lines = proc, url, lines

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=20)


@contextmanager
def serve(env: dict[str, str], scheme: str = "http") -> Iterator[Served]:
    port = free_port()
    env = {**env, "HUB_BIND": f"127.0.0.1:{port}"}
    lines: list[str] = []
    # As a context manager, Popen closes the pipes on the way out (an open one is a ResourceWarning).
    with subprocess.Popen(
        [sys.executable, "-m", "hubcli", "serve"], env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    ) as proc:
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            assert line.startswith("Agent Hub listening on"), (line, proc.stderr.read() if proc.stderr else "")
            lines.append(line)
            if "generated" in line:
                lines += [proc.stdout.readline(), proc.stdout.readline()]
            yield Served(proc, f"{scheme}://127.0.0.1:{port}", lines)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def wait_ready(url: str, *, within: float = 15, **kwargs: object) -> None:
    deadline = time.monotonic() + within
    # One client for the polls: a new one each time built a TLS context, about 15 ms of CPU a poll.
    with httpx.Client(timeout=2, **kwargs) as http:  # type: ignore[arg-type]
        while time.monotonic() < deadline:
            try:
                if http.get(f"{url}/readyz").status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.05)
    raise AssertionError("hub never became ready")


def test_first_run_makes_and_saves_an_admin_token_then_stops_cleanly(tmp_path: Path) -> None:
    env = base_env(tmp_path)
    with serve(env) as hub:
        startup, token_line, connect = hub.lines
        assert hub.url in startup and str(tmp_path / "data") in startup and "admin token generated" in startup
        token = token_line.strip().rsplit(" ", 1)[1]
        assert connect.startswith("Connect: " + hub.url)
        config = tmp_path / "config.toml"
        assert (config.stat().st_mode & 0o777) == 0o600
        assert tomllib.loads(config.read_text())["hub"]["admin_token"] == token
        wait_ready(hub.url)
        auth = {"Authorization": f"Bearer {token}"}
        r = httpx.post(f"{hub.url}/api/v1/agents", json={"id": "bot"}, headers=auth)
        assert r.status_code == 201
        assert httpx.get(f"{hub.url}/api/v1/agents").status_code == 401
        assert hub.stop() == 0
    wal = tmp_path / "data" / "hub.db-wal"
    assert not wal.exists() or wal.stat().st_size == 0  # checkpointed at close
    with sqlite3.connect(tmp_path / "data" / "hub.db") as conn:
        assert conn.execute("SELECT id FROM agents").fetchall() == [("bot",)]
    # The second start reads the saved token and shows it no more.
    with serve(env) as hub:
        assert "admin token set" in hub.lines[0] and len(hub.lines) == 1
        wait_ready(hub.url)
        r = httpx.get(f"{hub.url}/api/v1/agents", headers={"Authorization": f"Bearer {token}"})
        assert r.json()["agents"][0]["id"] == "bot"
        assert hub.stop() == 0


def test_non_loopback_bind_without_admin_token_refuses_to_start(tmp_path: Path) -> None:
    env = {**base_env(tmp_path), "HUB_BIND": "0.0.0.0:0"}
    r = subprocess.run([sys.executable, "-m", "hubcli", "serve"], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 78 and "admin token" in r.stderr
    assert not (tmp_path / "config.toml").exists()


def test_a_second_hub_on_the_same_directory_is_refused(tmp_path: Path) -> None:
    env = base_env(tmp_path, HUB_ADMIN_TOKEN="hub_e2e-admin")
    with serve(env) as hub:
        wait_ready(hub.url)
        r = subprocess.run(
            [sys.executable, "-m", "hubcli", "serve"],
            capture_output=True,
            text=True,
            timeout=60,
            env={**env, "HUB_BIND": f"127.0.0.1:{free_port()}"},
        )
        assert r.returncode == 1 and "in use" in r.stderr
        assert hub.stop() == 0


def test_h2c_prior_knowledge(tmp_path: Path) -> None:
    env = base_env(tmp_path, HUB_ADMIN_TOKEN="hub_e2e-admin")
    with serve(env) as hub:
        wait_ready(hub.url)
        with httpx.Client(http1=False, http2=True) as client:
            r = client.get(f"{hub.url}/healthz")
        assert r.status_code == 200 and r.http_version == "HTTP/2"
        assert hub.stop() == 0


def test_http2_over_tls(tmp_path: Path) -> None:
    trustme = pytest.importorskip("trustme")
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1")
    cert_file, key_file = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert.cert_chain_pems[0].write_to_path(str(cert_file))
    cert.private_key_pem.write_to_path(str(key_file))
    env = base_env(tmp_path, HUB_ADMIN_TOKEN="hub_e2e-admin", HUB_TLS_CERT=str(cert_file), HUB_TLS_KEY=str(key_file))
    context = ssl.create_default_context()
    ca.configure_trust(context)
    with serve(env, scheme="https") as hub:
        assert hub.lines[0].startswith("Agent Hub listening on https://")
        wait_ready(hub.url, verify=context)
        with httpx.Client(http2=True, verify=context) as client:
            r = client.get(f"{hub.url}/healthz")
        assert r.status_code == 200 and r.http_version == "HTTP/2"
        assert hub.stop() == 0


def test_sigterm_ends_open_streams_and_exits_promptly(tmp_path: Path) -> None:
    env = base_env(tmp_path, HUB_ADMIN_TOKEN="hub_e2e-admin", HUB_SHUTDOWN_GRACE_SECS="30")
    with serve(env) as hub:
        wait_ready(hub.url)
        headers = {"Authorization": "Bearer hub_e2e-admin"}
        with httpx.stream("GET", f"{hub.url}/api/v1/stream", headers=headers, timeout=20) as stream:
            lines = stream.iter_lines()
            assert next(lines) == ": connected"
            started = time.monotonic()
            hub.proc.send_signal(signal.SIGTERM)
            rest = list(lines)  # the response ends instead of hanging until the grace window closes
        assert rest == [""] or rest == []
        assert hub.proc.wait(timeout=20) == 0
        assert time.monotonic() - started < 10
