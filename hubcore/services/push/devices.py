"""Push devices: one row per browser subscription the human registered, with its name and filters.

Admin only (checked here, not only at the gate). A device is shown with its push service's origin,
never its endpoint (the endpoint is itself a capability to push to that browser). Registering an
endpoint that is already registered replaces its keys, name and filters under the same id.
"""

# No `from __future__ import annotations` in model modules: pydantic reads the annotations.

import secrets
import sqlite3
from typing import Annotated, Any
from urllib.parse import urlsplit

import orjson
from pydantic import AfterValidator, Field, StringConstraints
from pydantic_core import PydanticCustomError

from hubcore.caller import Caller
from hubcore.clock import iso
from hubcore.errors import HubError, not_found
from hubcore.services import validate
from hubcore.services.access import require_admin
from hubcore.services.core import Core
from hubcore.services.fields import Label
from hubcore.services.push.filters import Filters
from hubcore.services.push.keys import unb64url
from hubcore.services.requests import Request, parse

DEVICES_MAX = 50
NAME_MAX = 80
ENDPOINT_MAX = 2048
KEY_TEXT_MAX = 128
DEVICE_ID_RE = r"^dev_[0-9a-f]{16}$"


def _endpoint(url: str) -> str:
    parts = urlsplit(url)
    if (
        parts.scheme not in ("https", "http")
        or not parts.hostname
        or not validate.is_label(url)
        or parts.username
        or parts.password
    ):
        raise PydanticCustomError("endpoint", "must be an http(s) URL without credentials")
    return url


def _p256dh(text: str) -> str:
    # Imported on the first registration: cryptography is 6.7 MB and nothing at the start needs it.
    from cryptography.hazmat.primitives.asymmetric import ec

    try:
        ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), unb64url(text))
    except (ValueError, TypeError):
        raise PydanticCustomError("p256dh", "must be a base64url P-256 public key (65 bytes)") from None
    return text


def _auth(text: str) -> str:
    try:
        if len(unb64url(text)) != 16:
            raise ValueError(text)
    except ValueError:
        raise PydanticCustomError("auth", "must be a base64url 16-byte secret") from None
    return text


B64 = StringConstraints(min_length=1, max_length=KEY_TEXT_MAX, pattern=r"^[A-Za-z0-9_-]+=*$")
DeviceId = Annotated[str, StringConstraints(pattern=DEVICE_ID_RE), Field(description="device id")]
DeviceName = Annotated[str, Label(NAME_MAX), Field(description="what the human calls this device")]


class SubscriptionKeys(Request):
    p256dh: Annotated[str, B64, AfterValidator(_p256dh), Field(description="the browser's public key")]
    auth: Annotated[str, B64, AfterValidator(_auth), Field(description="the browser's auth secret")]


class DeviceCreate(Request):
    """`POST /push/devices`: the browser's push subscription (`PushSubscription.toJSON()`'s
    `endpoint` and `keys`), a name, and optional filters."""

    name: DeviceName
    endpoint: Annotated[
        str,
        StringConstraints(min_length=1, max_length=ENDPOINT_MAX),
        AfterValidator(_endpoint),
        Field(description="the push service endpoint the browser gave"),
    ]
    keys: SubscriptionKeys
    expirationTime: Annotated[int | None, Field(description="ignored (as the browser sends it)")] = None
    filters: Annotated[Filters, Field(default_factory=Filters)]


class DeviceRef(Request):
    device_id: DeviceId


class DeviceUpdate(Request):
    """`PATCH /push/devices/:id`: a new name, new filters (replacing the old ones whole), or both."""

    device_id: DeviceId
    name: DeviceName | None = None
    filters: Filters | None = None


def render(row: sqlite3.Row) -> dict[str, Any]:
    endpoint = urlsplit(row["endpoint"])
    return {
        "id": row["id"],
        "name": row["name"],
        "push_service": f"{endpoint.scheme}://{endpoint.netloc}",
        "filters": orjson.loads(row["filters"]),
        "created_at": iso(row["created_at"]),
        "last_delivered_at": iso(row["last_delivered_at"]) if row["last_delivered_at"] is not None else None,
        "last_result": row["last_result"],
    }


def _dump(filters: Filters) -> str:
    return orjson.dumps(filters.model_dump(mode="json")).decode()


class DevicesService:
    def __init__(self, core: Core) -> None:
        self.core = core

    async def create(self, caller: Caller, req: DeviceCreate) -> tuple[dict[str, Any], bool]:
        """Register (or re-register) a subscription -> (device, created)."""
        require_admin(caller, "registering a push device")
        now = self.core.now()

        def write(conn: sqlite3.Connection) -> tuple[dict[str, Any], bool]:
            old = conn.execute("SELECT id FROM push_devices WHERE endpoint = ?", (req.endpoint,)).fetchone()
            if old is None:
                count = conn.execute("SELECT COUNT(*) FROM push_devices").fetchone()[0]
                if count >= DEVICES_MAX:
                    raise HubError(
                        "rate_limited",
                        f"at most {DEVICES_MAX} push devices; revoke one first",
                        details={"cap": DEVICES_MAX},
                    )
                device_id = "dev_" + secrets.token_hex(8)
                conn.execute(
                    """INSERT INTO push_devices (id, name, endpoint, p256dh, auth, filters, created_at)
                                VALUES (?, ?, ?, ?, ?, ?, ?)""",
                    (device_id, req.name, req.endpoint, req.keys.p256dh, req.keys.auth, _dump(req.filters), now),
                )
            else:
                device_id = old["id"]
                conn.execute(
                    "UPDATE push_devices SET name = ?, p256dh = ?, auth = ?, filters = ? WHERE id = ?",
                    (req.name, req.keys.p256dh, req.keys.auth, _dump(req.filters), device_id),
                )
            row = conn.execute("SELECT * FROM push_devices WHERE id = ?", (device_id,)).fetchone()
            return render(row), old is None

        return await self.core.store.execute(write)

    async def list(self, caller: Caller) -> dict[str, Any]:
        require_admin(caller, "listing push devices")
        rows = await self.core.store.read(
            lambda conn: conn.execute("SELECT * FROM push_devices ORDER BY created_at, id").fetchall()
        )
        return {"devices": [render(r) for r in rows]}

    async def update(self, caller: Caller, req: DeviceUpdate) -> dict[str, Any]:
        require_admin(caller, "changing a push device")

        def write(conn: sqlite3.Connection) -> dict[str, Any]:
            if req.name is not None:
                conn.execute("UPDATE push_devices SET name = ? WHERE id = ?", (req.name, req.device_id))
            if req.filters is not None:
                conn.execute("UPDATE push_devices SET filters = ? WHERE id = ?", (_dump(req.filters), req.device_id))
            row = conn.execute("SELECT * FROM push_devices WHERE id = ?", (req.device_id,)).fetchone()
            if row is None:
                raise not_found(f"push device {req.device_id!r} not found")
            return render(row)

        return await self.core.store.execute(write)

    async def delete(self, caller: Caller, req: DeviceRef) -> None:
        require_admin(caller, "revoking a push device")

        def write(conn: sqlite3.Connection) -> None:
            if conn.execute("DELETE FROM push_devices WHERE id = ?", (req.device_id,)).rowcount == 0:
                raise not_found(f"push device {req.device_id!r} not found")

        await self.core.store.execute(write)


def device_rows(conn: sqlite3.Connection) -> list[sqlite3.Row]:
    return conn.execute("SELECT * FROM push_devices ORDER BY id").fetchall()


def filters_of(row: sqlite3.Row) -> Filters:
    return parse(Filters, orjson.loads(row["filters"]))
