"""One-shot requests to a hub's agent endpoint (`hub-cli call`, `tools`, the bridge's preflight).

Each call is its own HTTP request on the 2026-07-28 revision: no handshake, no session. Failures
map to the command line's exit codes: unreachable 69, token refused 77, hub refusal 1.
"""

from __future__ import annotations

import base64
import itertools
import re
from typing import Any

import orjson

from hubcli import exits

PROTOCOL = "2026-07-28"
CLIENT_INFO = {"name": "hub-cli", "version": "1.0.0"}
_ids = itertools.count(1)
# The `Mcp-Name` header's encoding (SEP-2243), as the mcp SDK's `mcp.shared.inbound.encode_header_value`
# writes it: importing the SDK for these three lines cost each `hub-cli call` about 0.4 s of CPU
# (tests/cli/test_call_header.py holds the two to the same output).
_HEADER_SAFE = re.compile(r"^[\x20-\x7E]*$")
_B64_SENTINEL = re.compile(r"^=\?base64\?(?P<payload>.*)\?=$")


class CliFailure(Exception):
    """A failure the command reports on stderr and turns into an exit code."""

    def __init__(self, code: int, message: str, body: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.body = code, message, body


def header_value(value: str) -> str:
    """`value` verbatim when it is printable ASCII without edge whitespace and does not look like the
    sentinel; otherwise its UTF-8 bytes wrapped as `=?base64?...?=`."""
    if _HEADER_SAFE.fullmatch(value) and value == value.strip() and not _B64_SENTINEL.fullmatch(value):
        return value
    return f"=?base64?{base64.b64encode(value.encode('utf-8')).decode('ascii')}?="


def endpoint(hub_url: str) -> str:
    url = hub_url.rstrip("/")
    return url if url.endswith("/mcp") else f"{url}/mcp"


def _sse_messages(text: str) -> list[Any]:
    messages, data = [], []
    for line in text.splitlines():
        if line.startswith("data:"):
            data.append(line[5:].lstrip())
        elif not line.strip() and data:
            messages.append(orjson.loads("\n".join(data)))
            data = []
    if data:
        messages.append(orjson.loads("\n".join(data)))
    return messages


async def request(
    hub_url: str, token: str | None, method: str, params: dict[str, Any] | None = None, *, timeout: float = 90.0
) -> dict[str, Any]:
    """Send one JSON-RPC request; its result, or `CliFailure`."""
    rid = next(_ids)
    body = {
        "jsonrpc": "2.0",
        "id": rid,
        "method": method,
        "params": {
            **(params or {}),
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": PROTOCOL,
                "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
    headers = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": PROTOCOL,
        "Mcp-Method": method,
    }
    if method == "tools/call" and params:
        headers["Mcp-Name"] = header_value(str(params.get("name", "")))
    if token:
        headers["Authorization"] = f"Bearer {token}"
    import httpx  # here, not with the module: local commands import CliFailure and never send

    try:
        async with httpx.AsyncClient(timeout=httpx.Timeout(timeout)) as http:
            r = await http.post(endpoint(hub_url), content=orjson.dumps(body), headers=headers)
    except httpx.HTTPError as exc:
        raise CliFailure(exits.UNREACHABLE, f"cannot reach the hub at {hub_url}: {exc}") from None
    if r.status_code == 401:
        raise CliFailure(exits.TOKEN_REFUSED, "the hub refused the token (set HUB_TOKEN or [client] token)")
    kind = r.headers.get("content-type", "")
    try:
        messages = _sse_messages(r.text) if kind.startswith("text/event-stream") else [r.json()]
    except ValueError:
        raise CliFailure(exits.REFUSED, f"the hub answered HTTP {r.status_code}: {r.text[:200]}") from None
    reply = next((m for m in messages if isinstance(m, dict) and m.get("id") == rid), None)
    if reply is None:
        raise CliFailure(exits.REFUSED, f"the hub answered HTTP {r.status_code} without a reply")
    if "error" in reply:
        err = reply["error"]
        data = err.get("data") if isinstance(err, dict) else None
        detail = data.get("error") if isinstance(data, dict) and isinstance(data.get("error"), dict) else err
        raise CliFailure(exits.REFUSED, str(err.get("message", "refused")), detail)
    return dict(reply.get("result") or {})
