"""`/api/v1/push`: the hub's VAPID key, the human's push devices, and the one public route a
notification's button calls (`/push/act`, authorised by the capability it carries, not a token)."""

from __future__ import annotations

from quart import Blueprint, Response

from hubcore.services.push.devices import DeviceCreate, DeviceRef, DeviceUpdate
from hubcore.services.push.service import PushAct
from hubcore.services.requests import parse
from hubhttp.context import caller, hub, json_body, json_response, no_content

bp = Blueprint("push", __name__, url_prefix="/api/v1/push")


@bp.get("/key")
async def key() -> Response:
    return json_response(hub().push.key(caller()))


@bp.get("/devices")
async def list_devices() -> Response:
    return json_response(await hub().push.devices.list(caller()))


@bp.post("/devices")
async def create_device() -> Response:
    device, created = await hub().push.devices.create(caller(), parse(DeviceCreate, await json_body()))
    return json_response(device, 201 if created else 200)


@bp.patch("/devices/<device_id>")
async def update_device(device_id: str) -> Response:
    req = parse(DeviceUpdate, {**await json_body(), "device_id": device_id})
    return json_response(await hub().push.devices.update(caller(), req))


@bp.delete("/devices/<device_id>")
async def delete_device(device_id: str) -> Response:
    await hub().push.devices.delete(caller(), parse(DeviceRef, {"device_id": device_id}))
    return no_content()


@bp.post("/devices/<device_id>/test")
async def test_device(device_id: str) -> Response:
    return json_response(await hub().push.test(caller(), parse(DeviceRef, {"device_id": device_id})))


@bp.post("/act")
async def act() -> Response:
    return json_response(await hub().push.act(parse(PushAct, await json_body())))
