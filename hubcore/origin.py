"""The origin (`scheme://host[:port]`) a client used to reach the hub.

Forwarded headers (`Forwarded`, else `X-Forwarded-Proto` / `X-Forwarded-Host`) are honoured only
when the socket peer is listed in the `trust_proxy` setting; otherwise the request's own scheme
and `Host` header decide. Plain functions over strings, shared by the HTTP and MCP adapters.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Mapping

_HOST_RE = re.compile(r"^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.\-_~%]+)(:\d{1,5})?$")


def peer_trusted(peer: str | None, trust_proxy: Iterable[str]) -> bool:
    """Whether `peer` (an IP address) is listed in `trust_proxy` (addresses or CIDR networks)."""
    if not peer:
        return False
    try:
        address = ipaddress.ip_address(peer)
    except ValueError:
        return False
    for entry in trust_proxy:
        try:
            if address in ipaddress.ip_network(entry.strip(), strict=False):
                return True
        except ValueError:
            continue
    return False


def _valid_host(value: str) -> str | None:
    value = value.strip()
    return value if value and _HOST_RE.match(value) else None


def _forwarded(headers: Mapping[str, str]) -> tuple[str | None, str | None]:
    """(proto, host) from the last hop of `Forwarded`, else from the X-Forwarded-* pair."""
    raw = headers.get("forwarded")
    if raw:
        last = raw.split(",")[-1]
        pairs = {}
        for part in last.split(";"):
            key, _, val = part.partition("=")
            pairs[key.strip().lower()] = val.strip().strip('"')
        return pairs.get("proto"), pairs.get("host")
    proto = headers.get("x-forwarded-proto")
    host = headers.get("x-forwarded-host")
    return (proto.split(",")[-1].strip() if proto else None), (host.split(",")[-1].strip() if host else None)


def request_origin(
    *,
    scheme: str,
    headers: Mapping[str, str],
    peer: str | None,
    trust_proxy: Iterable[str],
    fallback_host: str,
) -> str:
    """The origin the caller reached. `headers` keys are lower-case."""
    host = _valid_host(headers.get("host", "")) or fallback_host
    scheme = scheme if scheme in ("http", "https") else "http"
    if peer_trusted(peer, trust_proxy):
        proto, fwd_host = _forwarded(headers)
        if proto in ("http", "https"):
            scheme = proto
        if fwd_host and _valid_host(fwd_host):
            host = fwd_host
    return f"{scheme}://{host}"
