"""Action capabilities: what lets a notification's button resolve one item without the admin token.

A capability is `a1.<device>.<item>.<action>.<expiry>.<mac>`, the mac an HMAC-SHA256 (the hub's
push secret) of the other parts, cut to 128 bits. It is never stored, in clear or otherwise: the
hub recomputes the mac when it comes back. It names exactly one device, item, action and expiry;
`POST /api/v1/push/act` accepts it until the expiry, while the device is still registered, and the
item's own rule (answered once) makes it good for one resolution.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from dataclasses import dataclass

from hubcore.services.push.keys import b64url

VERSION = "a1"
CAP_MAX = 200
ACTION_RE = re.compile(r"^(approve|decline|o[0-5]|v[01])$")
PART_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
MAC_CHARS = 22  # 128 bits of base64url


@dataclass(frozen=True)
class Capability:
    device_id: str
    item_id: str
    action: str
    expires: int  # epoch seconds


def _mac(secret: bytes, cap: Capability) -> str:
    message = "\0".join((VERSION, cap.device_id, cap.item_id, cap.action, str(cap.expires))).encode()
    return b64url(hmac.new(secret, message, hashlib.sha256).digest()[:16])


def mint(secret: bytes, cap: Capability) -> str:
    return ".".join((VERSION, cap.device_id, cap.item_id, cap.action, str(cap.expires), _mac(secret, cap)))


def read(secret: bytes, text: str, now: float) -> Capability | None:
    """The capability `text` names when its mac is the hub's and it has not expired; else None
    (the caller answers every None the same way: nothing tells a forged one from an expired one)."""
    if len(text) > CAP_MAX:
        return None
    parts = text.split(".")
    if len(parts) != 6 or parts[0] != VERSION:
        return None
    _, device_id, item_id, action, expires, mac = parts
    if not (
        PART_RE.match(device_id)
        and PART_RE.match(item_id)
        and ACTION_RE.match(action)
        and expires.isdigit()
        and len(expires) <= 12
        and len(mac) == MAC_CHARS
    ):
        return None
    cap = Capability(device_id, item_id, action, int(expires))
    if not hmac.compare_digest(_mac(secret, cap), mac):
        return None
    return cap if now < cap.expires else None
