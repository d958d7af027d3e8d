"""Web Push for the human (DESIGN section 11): the public key, devices, test sends, and the one
thing a notification's button may do, `act`.

`act` takes a capability (see `caps`) and resolves exactly the item it names with exactly the
choice it names, as the human, through the same answer and decision services the app uses: a
forged, expired or unknown capability, or one whose device was revoked, is 404 `not_found`; an
item already resolved (or past its deadline) is 409 `conflict`, which also makes a replay 409.
Nothing is written by a refusal.
"""

# No `from __future__ import annotations` in model modules: pydantic reads the annotations.

from collections.abc import Callable
from typing import Annotated, Any

import orjson
from pydantic import Field, StringConstraints

from hubcore.caller import Caller
from hubcore.errors import not_found
from hubcore.services import forms
from hubcore.services.access import require_admin
from hubcore.services.core import Core
from hubcore.services.push import caps, message
from hubcore.services.push.devices import DeviceRef, DevicesService
from hubcore.services.push.keys import PushKeys
from hubcore.services.push.sender import Push, PushSender, target_of
from hubcore.services.requests import Request
from hubcore.services.resolutions import AnswerPost, Decision, DecisionPost, ResolutionsService

NO_ACTION = "no such action (it expired, its device was revoked, or it never existed)"


class PushAct(Request):
    """`POST /push/act`: a notification button's capability."""

    cap: Annotated[
        str,
        StringConstraints(min_length=1, max_length=caps.CAP_MAX),
        Field(description="the capability the push carried for this button"),
    ]


class PushService:
    def __init__(
        self,
        core: Core,
        keys: PushKeys,
        sender: PushSender,
        resolutions: ResolutionsService,
        notify_state: Callable[[], dict[str, Any]],
    ) -> None:
        self.core = core
        self._notify_state = notify_state
        self.keys = keys
        self.sender = sender
        self.devices = DevicesService(core)
        self._resolutions = resolutions

    def key(self, caller: Caller) -> dict[str, Any]:
        require_admin(caller, "reading the push key")
        return {
            "public_key": self.keys.public_key,
            "contact": self.core.settings.push_contact,
            "notify_url": self._notify_state(),
        }

    async def test(self, caller: Caller, req: DeviceRef) -> dict[str, Any]:
        """Send a test notification to one device now -> {result}; recorded like any send."""
        require_admin(caller, "sending a test push")
        row = await self.core.store.read(
            lambda conn: conn.execute("SELECT * FROM push_devices WHERE id = ?", (req.device_id,)).fetchone()
        )
        if row is None:
            raise not_found(f"push device {req.device_id!r} not found")
        push = Push(target_of(row), message.test_message(row["name"]), "normal", "test", 600)
        result = await self.sender.send(push, retries=0)  # the human is waiting for the answer: one try
        await self.sender.record({row["id"]: result})
        return {"device_id": row["id"], "result": result}

    async def act(self, req: PushAct) -> dict[str, Any]:
        """Resolve the item the capability names with its choice, as the human."""
        cap = caps.read(self.keys.act_secret, req.cap, self.core.now())
        if cap is None:
            raise not_found(NO_ACTION)
        human = Caller.admin()
        item = await self.core.store.read(lambda conn: _item(conn, cap.device_id, cap.item_id))
        if item is None:
            raise not_found(NO_ACTION)
        kind, payload = item
        if cap.action in ("approve", "decline"):
            if kind not in ("approval", "enrol_request"):
                raise not_found(NO_ACTION)
            decision: Decision = "approve" if cap.action == "approve" else "decline"
            result = await self._resolutions.decide(human, DecisionPost(approval_id=cap.item_id, decision=decision))
        else:
            answer = _answer(kind, payload, cap.action)
            if answer is None:
                raise not_found(NO_ACTION)
            body, value = answer
            result = await self._resolutions.answer(human, AnswerPost(question_id=cap.item_id, body=body, value=value))
        return {"item_id": cap.item_id, "action": cap.action, "event_id": result["event_id"]}


def _item(conn: Any, device_id: str, item_id: str) -> tuple[str, dict[str, Any]] | None:
    """The item's kind and payload when the device is still registered and the item exists."""
    if conn.execute("SELECT 1 FROM push_devices WHERE id = ?", (device_id,)).fetchone() is None:
        return None
    row = conn.execute(
        "SELECT i.kind, e.payload FROM inbox i JOIN events e ON e.id = i.event_id WHERE i.event_id = ?", (item_id,)
    ).fetchone()
    return None if row is None else (row["kind"], orjson.loads(row["payload"]))


def _answer(kind: str, payload: dict[str, Any], action: str) -> tuple[str | None, dict[str, Any] | None] | None:
    """(body, value) the question's button stands for, or None when it names no choice."""
    if kind != "question":
        return None
    index = int(action[1:])
    options = payload.get("options")
    if action.startswith("o") and isinstance(options, list) and index < len(options):
        return str(options[index]), None
    form = payload.get("form")
    if action.startswith("v") and isinstance(form, dict):
        choices = forms.quick_choices(form)
        if index < len(choices):
            return None, choices[index][1]
    return None
