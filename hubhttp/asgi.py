"""The ASGI composition root: one listener for the REST API, public pages, probes and /mcp.

`HubASGI` owns the lifespan: on startup it opens the `Hub` and runs Quart's own startup, and the hub
is ready; then it loads the MCP endpoint in the background and enters its session manager for the
rest of the lifespan; on shutdown it reverses that. Every HTTP request passes the `Gate` (global
rules, and the token check /mcp needs before any MCP processing) and is counted in the metrics; then
`/mcp` goes to hubmcp's endpoint and everything else to Quart. This is the one module allowed to
import hubmcp (its app factory, and the bootstrap guide's renderer).

Why after ready: the mcp SDK's import is most of the start (about 450 ms of CPU and 19 MB, with the
cryptography and starlette it pulls in), and nothing but `/mcp` needs it. It is imported in a
worker thread the moment the hub is ready; an `/mcp` request that comes first waits for it (a
fraction of a second), so no MCP call fails for it (docs/decisions.md, issue 26).
"""

from __future__ import annotations

import gc
import importlib
import logging
import sys
from collections.abc import Callable
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import TaskGroup
from quart import Quart

from hubcore.clock import Clock
from hubcore.config import HubSettings
from hubcore.errors import HubError
from hubcore.hub import Hub
from hubhttp.app import create_app
from hubhttp.bootstrap import RENDERER_KEY
from hubhttp.context import HUB_KEY
from hubhttp.gate import Gate, Message, Receive, Scope, Send
from hubhttp.problems import send_problem
from hubhttp.routing import Access, RouteAccess
from hubmcp.skills import render_bootstrap

if TYPE_CHECKING:
    from hubmcp.http import McpEndpoint

MCP_PATH = "/mcp"
MCP_MODULE = "hubmcp.http"  # imported after ready (the mcp SDK): see the module's docstring

log = logging.getLogger("hubhttp.asgi")


# Second-generation collections between two full ones (CPython's default is 10). A full collection
# walks every long-lived object, and each open stream keeps about 190 of them alive (its connection,
# its tasks and coroutines, its request): with 500 streams open, 95,000 more, so every full
# collection cost a dozen times what it costs with none, about once a second under load, and was
# half of what 500 streams cost the writers (docs/benchmarks.md, "Fourth session: stream turns").
FULL_COLLECTION_PACE = 100


def settle_heap(_hub: Hub) -> None:
    """An `on_settled` hook for a process that serves one hub: what startup built (modules, the
    app, the catalogue, the stores' state: over 100,000 objects) is collected once, then frozen out
    of the collector's sight. Otherwise every full collection walks all of it again, about every
    6,000 requests (85 ms each on the shared bench machine: some 50 us a request, a third of
    what the hub costs over a bare app; docs/benchmarks.md, issue 27). Full collections then come
    a tenth as often (`FULL_COLLECTION_PACE`); the young generations, where a request's garbage
    goes, are collected as before. Not for a process that starts hub after hub (the tests): a
    freeze keeps what was alive at that moment for good."""
    gc.collect()
    gc.freeze()
    young, middle, _full = gc.get_threshold()
    gc.set_threshold(young, middle, FULL_COLLECTION_PACE)


class HubASGI:
    def __init__(self, settings: HubSettings, *, clock: Clock | None = None, quart: Quart | None = None) -> None:
        """`quart`: an app from `create_app` that no other HubASGI is serving (the test harness
        reuses one from lifespan to lifespan: building it is most of what a test hub costs)."""
        self.settings = settings
        self.clock = clock
        self.quart = quart if quart is not None else create_app()
        self._hub: Hub | None = None
        self._mcp: McpEndpoint | None = None
        # Set once the endpoint serves, or once it never will (a failed load, the lifespan ending):
        # an /mcp request that comes before waits on it.
        self._mcp_settled = anyio.Event()
        # The gate judges the route `_route` will run: /mcp here, everything else by Quart's URL map.
        self.gate = Gate(self._route, self._current_hub, RouteAccess(self.quart, {MCP_PATH: Access.TOKEN}))
        self.on_started: list[Callable[[Hub], None]] = []
        # Run once the MCP endpoint serves (or failed to load): the whole process is built.
        self.on_settled: list[Callable[[Hub], None]] = []
        # The request counter's child per (method, status class), for the hub being served.
        self._counters: dict[tuple[str, int], Any] = {}

    def begin_shutdown(self) -> None:
        """Called when the server stops accepting, before it waits for in-flight requests: waits
        answer and streams end at once, so the server need not wait out its grace window."""
        if self._hub is not None:
            self._hub.begin_shutdown()
        if self._mcp is not None:
            self._mcp.begin_shutdown()

    def _current_hub(self) -> Hub:
        if self._hub is None:
            raise HubError("unavailable", "the hub is starting or stopping", retryable=True)
        return self._hub

    @property
    def hub(self) -> Hub:
        return self._current_hub()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return  # no websockets here
        if self._hub is None:
            await send_problem(send, self._unready(), None)
            return
        counters = self._counters
        method = scope["method"]

        async def counted_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                key = (method, message["status"] // 100)
                counter = counters.get(key)
                if counter is None:  # prometheus' labels() locks and builds a key: once per pair
                    counter = counters[key] = self.hub.metrics.http_requests.labels(
                        method=method, status_class=f"{key[1]}xx"
                    )
                counter.inc()
            await send(message)

        await self.gate(scope, receive, counted_send)

    async def _route(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["path"] == MCP_PATH:
            mcp = self._mcp
            if mcp is None:
                await self._mcp_settled.wait()
                mcp = self._mcp
            if mcp is None:  # its load failed, or the hub is stopping
                await send_problem(send, self._unready(), None)
                return
            await mcp(scope, receive, send)
            return
        await self.quart(scope, receive, send)  # type: ignore[arg-type]

    async def _serve_mcp(self, hub: Hub, stopping: anyio.Event) -> None:
        """Import the MCP endpoint (in a thread: the event loop keeps serving), serve it until the
        lifespan ends. A failed load is logged; /mcp then answers 503 and the rest of the hub serves."""
        try:
            module = sys.modules.get(MCP_MODULE)
            if module is None:
                module = await anyio.to_thread.run_sync(importlib.import_module, MCP_MODULE)
            endpoint: McpEndpoint = module.create_endpoint(hub)
        except Exception:
            log.exception("the MCP endpoint failed to load; /mcp answers 503")
            self._mcp_settled.set()
            self._settled(hub)
            return
        try:
            async with endpoint.run():
                if not stopping.is_set():
                    self._mcp = endpoint
                self._mcp_settled.set()
                self._settled(hub)
                await stopping.wait()
        finally:
            self._mcp = None
            self._mcp_settled.set()

    def _settled(self, hub: Hub) -> None:
        for hook in self.on_settled:
            hook(hub)

    def _unready(self) -> HubError:
        return HubError("unavailable", "the hub is starting or stopping", retryable=True)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        message = await receive()
        assert message["type"] == "lifespan.startup"
        stopping = anyio.Event()
        self._mcp_settled = anyio.Event()
        async with AsyncExitStack() as stack:
            try:
                hub = await stack.enter_async_context(Hub.open(self.settings, clock=self.clock, serving_later=True))
                self._hub = hub
                self._counters = {}
                self.quart.extensions[HUB_KEY] = hub
                self.quart.extensions[RENDERER_KEY] = render_bootstrap
                # Unwound in reverse: Quart's shutdown, then the MCP endpoint told to stop and
                # waited for (its sessions end), then the hub closes.
                background: TaskGroup = await stack.enter_async_context(anyio.create_task_group())
                stack.callback(stopping.set)
                await self.quart.startup()
                stack.push_async_callback(self.quart.shutdown)
            except BaseException as exc:
                log.error("startup failed: %s", exc)
                self._hub = None
                await send({"type": "lifespan.startup.failed", "message": str(exc)})
                raise
            await send({"type": "lifespan.startup.complete"})
            hub.mark_serving()  # the background work held back for the start (the semantic model)
            background.start_soon(self._serve_mcp, hub, stopping)
            for hook in self.on_started:
                hook(hub)
            message = await receive()
            hub.begin_shutdown()
            self._hub = None
            self._mcp = None
        await send({"type": "lifespan.shutdown.complete"})
