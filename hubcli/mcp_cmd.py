"""`hub-cli mcp`, `hub-cli call` and `hub-cli tools`."""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
import orjson

from hubcli import exits
from hubcli.client import CliFailure, request
from hubcore.config import Settings
from hubmcp.protect import ProtectError, protect_arguments


def _err(command: str, message: str) -> None:
    sys.stderr.write(f"hub-cli {command}: {message}\n")


def dump_json(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode()


def run_mcp(settings: Settings) -> int:
    """stdio: a bridge to HUB_URL, or the local data directory served standalone."""
    from hubcli.local import local_caller, run_local
    from hubmcp.stdio import serve_bridge, serve_standalone

    client = settings.client
    if client.url:
        try:
            anyio.run(_preflight, client.url, client.token, client.timeout)
        except CliFailure as failure:
            _err("mcp", failure.message)
            return failure.code
        anyio.run(lambda: serve_bridge(client.url or "", client.token, timeout=client.timeout))
        return exits.OK
    hub = settings.hub
    try:
        label = local_caller(settings).label
        run_local(hub, lambda: serve_standalone(hub, label=label))
    except CliFailure as failure:
        _err("mcp", failure.message)
        return failure.code
    return exits.OK


async def _preflight(url: str, token: str | None, timeout: float) -> None:
    await request(url, token, "server/discover", timeout=timeout)


def _target(settings: Settings, command: str) -> tuple[str, str | None] | int:
    if not settings.client.url:
        _err(command, "no hub named: set HUB_URL or [client] url in the config file")
        return exits.NOT_CONFIGURED
    return settings.client.url, settings.client.token


def run_call(settings: Settings, tool: str, raw: str | None) -> int:
    target = _target(settings, "call")
    if isinstance(target, int):
        return target
    text = sys.stdin.read() if raw == "-" else (raw or "{}")
    try:
        arguments = orjson.loads(text or "{}")
    except orjson.JSONDecodeError as exc:
        _err("call", f"arguments are not valid JSON: {exc}")
        return exits.USAGE
    if not isinstance(arguments, dict):
        _err("call", "arguments must be a JSON object")
        return exits.USAGE
    try:
        # A write tool's password becomes ciphertext and envelope here; it is never sent.
        arguments = protect_arguments(tool, arguments)
    except ProtectError as refused:
        _err("call", str(refused))
        return exits.USAGE
    url, token = target
    try:
        result = anyio.run(
            lambda: request(
                url,
                token,
                "tools/call",
                {"name": tool, "arguments": arguments},
                timeout=max(settings.client.timeout, 90.0),
            )
        )
    except CliFailure as failure:
        _err("call", failure.message)
        if failure.body is not None:
            sys.stdout.write(dump_json({"error": failure.body}) + "\n")
        return failure.code
    structured = result.get("structuredContent")
    if result.get("isError"):
        _err("call", _error_line(result))
        error = error_object(result)  # the error object an error result's text ends with
        sys.stdout.write(dump_json({"error": error} if error is not None else result) + "\n")
        return exits.REFUSED
    if structured is not None:
        sys.stdout.write(dump_json(structured) + "\n")
    else:
        for block in result.get("content", []):
            if block.get("type") == "text":
                sys.stdout.write(block["text"] + "\n")
    return exits.OK


def error_object(result: dict[str, Any]) -> dict[str, Any] | None:
    """The `{code, message, retryable, details}` a hub tool error's text ends with (its last line
    is `{"error": ...}` as JSON; an error result carries no structured content), or None."""
    for block in result.get("content", []):
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            try:
                body = json.loads(block["text"].rsplit("\n", 1)[-1])
            except ValueError:
                return None
            error = body.get("error") if isinstance(body, dict) else None
            return error if isinstance(error, dict) else None
    return None


def _error_line(result: dict[str, Any]) -> str:
    """A tool error's first text line (`<code>: <message>`), which every hub tool error starts with."""
    for block in result.get("content", []):
        if block.get("type") == "text" and block.get("text"):
            return str(block["text"]).splitlines()[0]
    return "the tool reported an error"


def run_tools(settings: Settings, compact: bool) -> int:
    target = _target(settings, "tools")
    if isinstance(target, int):
        return target
    url, token = target

    async def list_all() -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            page = await request(
                url, token, "tools/list", {"cursor": cursor} if cursor else {}, timeout=settings.client.timeout
            )
            found.extend(page.get("tools", []))
            cursor = page.get("nextCursor")
            if not cursor:
                return found

    try:
        tools = anyio.run(list_all)
    except CliFailure as failure:
        _err("tools", failure.message)
        return failure.code
    if compact:
        width = max((len(t["name"]) for t in tools), default=0)
        for t in tools:
            first = (t.get("description") or "").split(". ")[0].rstrip(".")
            sys.stdout.write(f"{t['name'].ljust(width)}  {t.get('title') or first}\n")
    else:
        sys.stdout.write(dump_json(tools) + "\n")
    return exits.OK
