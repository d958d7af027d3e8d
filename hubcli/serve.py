"""`hub-cli serve`: Hypercorn on asyncio, HTTP/1.1 and h2c, HTTP/2 over TLS when configured."""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
from dataclasses import replace

from hypercorn.asyncio.run import worker_serve
from hypercorn.config import Config
from hypercorn.utils import wrap_app

from hubcli import exits, malloc, memtrace
from hubcli.firstrun import make_admin_token
from hubcore.config import HubSettings, Settings, is_loopback
from hubcore.hub import data_dir_in_use
from hubhttp.asgi import HubASGI, settle_heap

log = logging.getLogger("hubcli.serve")


def _hypercorn_config(settings: HubSettings) -> Config:
    config = Config()
    config.bind = [settings.bind]
    config.graceful_timeout = settings.shutdown_grace_secs
    config.accesslog = None
    config.errorlog = logging.getLogger("hypercorn.error")
    if settings.tls_cert and settings.tls_key:
        config.certfile, config.keyfile = settings.tls_cert, settings.tls_key
        config.alpn_protocols = ["h2", "http/1.1"]
    return config


def _err(message: str) -> None:
    sys.stderr.write(f"hub-cli serve: {message}\n")


def run_serve(settings: Settings) -> int:
    hub = settings.hub
    host, _ = hub.host_port
    first_token: str | None = None
    if not hub.admin_token:
        if not is_loopback(host):
            _err(
                f"bind {hub.bind} is not loopback and no admin token is set "
                "(set admin_token under [hub] or HUB_ADMIN_TOKEN)"
            )
            return exits.NOT_CONFIGURED
        first_token = make_admin_token(settings.path)
        hub = replace(hub, admin_token=first_token)
    if data_dir_in_use(hub.data_path):
        _err(f"data directory {hub.data_path} is in use by another hub process")
        return exits.REFUSED
    logging.basicConfig(
        level=hub.log_level.upper(), stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    config = _hypercorn_config(hub)
    try:
        sockets = config.create_sockets()
    except OSError as exc:
        _err(f"cannot bind {hub.bind}: {exc.strerror}")
        return exits.UNREACHABLE
    bound = [s.getsockname() for s in (*sockets.secure_sockets, *sockets.insecure_sockets)]
    scheme = "https" if config.ssl_enabled else "http"
    address = f"{scheme}://{_fmt(bound[0])}" if bound else hub.bind
    malloc.limit_arenas()
    memtrace.start()
    app = HubASGI(hub)

    def announce(_hub: object) -> None:
        token_state = "generated" if first_token else "set"
        sys.stdout.write(
            f"Agent Hub listening on {address} (data directory {hub.data_path}; admin token {token_state})\n"
        )
        if first_token:
            sys.stdout.write(
                f"Admin token (shown once, saved to {settings.path}): {first_token}\nConnect: {address}/#connect\n"
            )
        sys.stdout.flush()

    app.on_settled.append(settle_heap)
    app.on_started.append(announce)
    try:
        asyncio.run(_serve(app, config, sockets))
    except Exception as exc:  # lifespan failures (store too new, damaged store) end here
        _err(str(exc) or type(exc).__name__)
        return exits.REFUSED
    return exits.OK


def _fmt(addr: tuple[str, int]) -> str:
    host, port = addr[0], addr[1]
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


async def _serve(app: HubASGI, config: Config, sockets: object) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()

    def on_signal() -> None:
        app.begin_shutdown()
        stop.set()

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, on_signal)
    memtrace.install(loop)
    trimmer = asyncio.create_task(malloc.trim_periodically())
    try:
        await worker_serve(
            wrap_app(app, config.wsgi_max_body_size, "asgi"),  # type: ignore[arg-type]
            config,
            sockets=sockets,  # type: ignore[arg-type]
            shutdown_trigger=stop.wait,
        )
    finally:
        trimmer.cancel()
