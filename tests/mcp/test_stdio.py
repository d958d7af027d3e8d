"""`hub-cli mcp` over stdio through the SDK's own client: standalone and bridge, both eras."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from pathlib import Path
from unittest.mock import ANY

import anyio
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from hubcore.caller import Caller
from hubcore.clock import FakeClock
from hubcore.config import HubSettings
from hubcore.hub import Hub
from hubcore.services import resolutions
from hubmcp.stdio import serve_standalone
from tests.mcp.live import ERAS, LEGACY, MODERN, MODERN_META, LiveHub, structured, tool_error
from tests.requests import a_project, a_signal

pytestmark = pytest.mark.anyio

HUB_CLI = str(Path(sys.executable).with_name("hub-cli"))


def cli_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HUB_")}
    env.update({"HUB_CONFIG": str(tmp_path / "client.toml"), **extra})
    return env


def stdio(env: dict[str, str], mode: str) -> Client:
    return Client(StdioServerParameters(command=HUB_CLI, args=["mcp"], env=env), mode=mode, cache=None)


@pytest.mark.parametrize("mode", ERAS)
async def test_standalone_serves_the_data_directory_as_the_human(
    tmp_path: Path, settings: HubSettings, mode: str
) -> None:
    async with Hub.open(settings) as hub:
        await hub.projects.create(Caller.admin(), a_project(id="demo"))
    env = cli_env(tmp_path, HUB_DATA_DIR=settings.data_dir, HUB_AGENT_ID="local-agent")
    async with stdio(env, mode) as client:
        assert client.protocol_version == (MODERN if mode == MODERN else "2025-11-25")
        me = structured(await client.call_tool("whoami", {}))
        assert me["kind"] == "admin" and me["actor"] == "local-agent"
        sent = structured(await client.call_tool("signal_append", {"project_id": "demo", "summary": "local"}))
        page = structured(await client.call_tool("feed_read", {"project_id": "demo"}))
        assert [(e["id"], e["actor"]) for e in page["events"]] == [(sent["event_id"], "local-agent")]
        # The human has no oracle to hide from: a missing project is not_found, as a tool error result.
        missing = tool_error(await client.call_tool("feed_read", {"project_id": "nowhere"}), "not_found")
        assert "nowhere" in missing["message"]
        # The process is the connection: session_start binds, and brain calls need no session_id.
        started = structured(await client.call_tool("session_start", {"project_id": "demo", "name": "s"}))
        assert started["active_session"] is True
        structured(await client.call_tool("brain_put", {"path": "/kv/k", "content": "v", "store": "session"}))
        skill = await client.read_resource("skill://hub/SKILL.md")
        assert "name: hub" in skill.contents[0].text  # type: ignore[union-attr]
        # Nothing listens at any address here (no public URL set): the bootstrap names none,
        # neither the configured bind address nor a /mcp URL, and says the client is connected.
        boot = (await client.read_resource("hub://skill")).contents[0].text  # type: ignore[union-attr]
        assert "http" not in boot and "/mcp" not in boot and "{{ORIGIN}}" not in boot, boot
        assert "127.0.0.1" not in boot and "connected already" in boot and "skill://hub/SKILL.md" in boot
        assert me["mcp_url"] is None and me["guide_url"] is None


class Sweeps:
    """Counts the deadline sweeper's completed sweeps, so the test waits on the sweeper itself."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.done = 0
        self._changed = anyio.Event()
        real = resolutions.ResolutionsService.sweep

        async def sweep(service: resolutions.ResolutionsService) -> int:
            count = await real(service)
            self.done += 1
            self._changed.set()
            return count

        monkeypatch.setattr(resolutions.ResolutionsService, "sweep", sweep)

    async def after(self, seen: int) -> None:
        """Wait until a sweep that began after `seen` sweeps had finished is itself finished."""
        with anyio.fail_after(10):  # a hang guard, not a pace: each wait ends on a sweep
            while self.done < seen + 2:
                self._changed = anyio.Event()
                await self._changed.wait()


async def test_standalone_sweeps_deadlines_with_no_call_made(
    settings: HubSettings, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(resolutions, "SWEEP_INTERVAL_SECS", 0.02)
    sweeps = Sweeps(monkeypatch)
    async with Hub.open(settings, clock=clock) as hub:
        await hub.projects.create(Caller.admin(), a_project(id="demo"))
        asked = await hub.posts.signal_append(
            Caller.admin("local-agent"),
            a_signal(project_id="demo", kind="approval", summary="Deploy?", expires_in_seconds=60, on_expiry="approve"),
        )
    stdin_r, stdin_w = os.pipe()
    stdout_r, stdout_w = os.pipe()
    with (
        open(stdin_r, encoding="utf-8") as stdin,
        open(stdout_w, "w", encoding="utf-8") as stdout,
        open(stdout_r, encoding="utf-8"),
        open(stdin_w, "w", encoding="utf-8") as feed,
    ):
        async with anyio.create_task_group() as tg:
            tg.start_soon(
                lambda: serve_standalone(
                    settings,
                    label="local-agent",
                    clock=clock,
                    stdin=anyio.wrap_file(stdin),
                    stdout=anyio.wrap_file(stdout),
                )
            )
            await sweeps.after(sweeps.done)  # the server's sweeper has run a whole sweep: nothing due yet
            assert not await anyio.to_thread.run_sync(_expired, settings, asked["event_id"])
            clock.advance(61)  # the deadline passes while the server runs; no client says a word
            await sweeps.after(sweeps.done)
            assert await anyio.to_thread.run_sync(_expired, settings, asked["event_id"])
            feed.close()  # end of input: the server stops and closes the hub
    with sqlite3.connect(f"file:{Path(settings.data_dir) / 'hub.db'}?mode=ro", uri=True) as conn:
        rows = conn.execute("SELECT payload FROM events WHERE actor = 'hub'").fetchall()
    assert [json.loads(r[0]) for r in rows] == [{"expired": True, "decision": "approved", "body": ANY}]


def _expired(settings: HubSettings, event_id: str) -> bool:
    with sqlite3.connect(f"file:{Path(settings.data_dir) / 'hub.db'}?mode=ro", uri=True) as conn:
        row = conn.execute("SELECT status FROM inbox WHERE event_id = ?", (event_id,)).fetchone()
    return row is not None and row[0] == "resolved"


async def test_standalone_refuses_a_directory_a_running_hub_holds(tmp_path: Path, live: LiveHub) -> None:
    env = cli_env(tmp_path, HUB_DATA_DIR=live.app.settings.data_dir)
    result = await anyio.run_process([HUB_CLI, "mcp"], env=env, check=False, input=b"")
    assert result.returncode == 1
    assert b"in use" in result.stderr


@pytest.mark.parametrize("mode", ERAS)
async def test_bridge_carries_the_token_and_both_eras(tmp_path: Path, live: LiveHub, mode: str) -> None:
    token = await live.make_agent("bot")
    env = cli_env(tmp_path, HUB_URL=live.base, HUB_TOKEN=token)
    async with stdio(env, mode) as client, live.client() as human:
        assert client.protocol_version == (MODERN if mode == MODERN else "2025-11-25")
        me = structured(await client.call_tool("whoami", {}))
        assert me["agent_id"] == "bot"
        q = structured(await client.call_tool("question_post", {"project_id": "space-bot", "summary": "ok?"}))
        await human.call_tool("answer_post", {"question_id": q["question_id"], "body": "fine"})
        got = structured(await client.call_tool("version", {}))
        assert [i["id"] for i in got["notifications"]["pending"]] != []
        tools = await client.list_tools()
        assert "inbox_wait" in [t.name for t in tools.tools]


async def test_bridge_with_a_refused_token_exits_77(tmp_path: Path, live: LiveHub) -> None:
    env = cli_env(tmp_path, HUB_URL=live.base, HUB_TOKEN="hub_wrong")
    result = await anyio.run_process([HUB_CLI, "mcp"], env=env, check=False, input=b"")
    assert result.returncode == 77


BRIDGE_OPENINGS = {
    LEGACY: [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ],
    MODERN: [{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": MODERN_META}}],
}


WAIT_CALL = {"name": "inbox_wait", "arguments": {"wait_seconds": 30}}


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize("in_flight", [False, True], ids=["idle", "wait_in_flight"])
async def test_bridge_exits_0_soon_after_its_stdin_closes(
    tmp_path: Path, live: LiveHub, mode: str, in_flight: bool
) -> None:
    # An MCP client closing stdin must not wait out its grace period and kill the bridge; a
    # request still in flight (a 30 s inbox_wait) is dropped, not awaited.
    token = await live.make_agent("bot")
    env = cli_env(tmp_path, HUB_URL=live.base, HUB_TOKEN=token)
    async with await anyio.open_process([HUB_CLI, "mcp"], env=env) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        lines = b"".join(json.dumps(m).encode() + b"\n" for m in BRIDGE_OPENINGS[mode])
        await proc.stdin.send(lines)
        answer = await BufferedByteReceiveStream(proc.stdout).receive_until(b"\n", 1 << 20)
        assert json.loads(answer)["id"] == 1
        if in_flight:
            meta = {"_meta": MODERN_META} if mode == MODERN else {}
            call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {**WAIT_CALL, **meta}}
            await proc.stdin.send(json.dumps(call).encode() + b"\n")
            await anyio.sleep(0.3)  # the call reaches the hub and waits there
        await proc.stdin.aclose()
        try:
            # Not a timing test: a bridge that kept reading would never exit, and one awaiting the
            # call would take its 30 s; 15 s leaves a loaded machine room to start and stop Python.
            with anyio.fail_after(15):
                assert await proc.wait() == 0
        finally:
            if proc.returncode is None:  # still running: the failure above, and no hang on exit
                proc.kill()


def test_bridge_pump_sets_headers_and_fills_modern_result_members() -> None:
    from mcp_types import JSONRPCNotification, JSONRPCRequest, JSONRPCResponse

    from hubmcp.stdio import Pump, endpoint_url

    assert endpoint_url("http://h:1/") == "http://h:1/mcp" and endpoint_url("http://h:1/mcp") == "http://h:1/mcp"
    pump = Pump()
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
    call = JSONRPCRequest(jsonrpc="2.0", id=5, method="tools/call", params={"name": "whoami", "_meta": meta})
    assert pump.headers_for(call) == {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "whoami"}
    listing = JSONRPCRequest(jsonrpc="2.0", id=6, method="resources/list", params={"_meta": meta})
    pump.headers_for(listing)
    filled = pump.inbound(JSONRPCResponse(jsonrpc="2.0", id=6, result={"resources": []}))
    assert filled.result == {"resources": [], "resultType": "complete", "ttlMs": 0, "cacheScope": "private"}
    kept = pump.inbound(JSONRPCResponse(jsonrpc="2.0", id=5, result={"content": [], "resultType": "complete"}))
    assert kept.result == {"content": [], "resultType": "complete"}
    legacy = Pump()
    init = JSONRPCRequest(jsonrpc="2.0", id=1, method="initialize", params={"protocolVersion": "2025-11-25"})
    assert legacy.headers_for(init) == {}
    legacy.inbound(JSONRPCResponse(jsonrpc="2.0", id=1, result={"protocolVersion": "2025-11-25"}))
    done = JSONRPCNotification(jsonrpc="2.0", method="notifications/initialized")
    assert legacy.headers_for(done) == {"MCP-Protocol-Version": "2025-11-25"}
    untouched = legacy.inbound(JSONRPCResponse(jsonrpc="2.0", id=2, result={"tools": []}))
    assert untouched.result == {"tools": []}
