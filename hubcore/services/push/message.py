"""What one push carries: the notification a device shows, per its `content` setting, with its action
buttons and their capabilities; or the silent update that closes a resolved item's notification.

Payloads are JSON, encrypted end to end (aes128gcm) for the device, and kept under the 4 KiB a push
service accepts: a long body is cut first, then buttons past the second.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from hubcore.services import forms
from hubcore.services.push import caps

PAYLOAD_MAX = 3800  # plaintext bytes; aes128gcm adds 86 and a push service takes 4096
TITLE_CHARS, BODY_CHARS = 120, 300
CAP_TTL_SECS = 7 * 86400
CONTENTLESS = "Something is waiting for you in Agent Hub."
KIND_WORDS = {
    "question": "asks",
    "approval": "asks to approve",
    "enrol_request": "asks to join",
    "finished": "finished",
    "idea": "has an idea",
}


@dataclass(frozen=True)
class ItemFacts:
    """What the sender read about an item, once for every device."""

    event_id: str
    project_id: str
    project_name: str | None
    kind: str
    actor: str
    summary: str
    payload: dict[str, Any]
    expires_at: float | None
    waiting: int  # the human's waiting count (the app badge)


def buttons(facts: ItemFacts) -> list[tuple[str, str]]:
    """(action, title) for each choice the item offers: options, a form's quick choices, or
    Approve and Decline."""
    if facts.kind in ("approval", "enrol_request"):
        return [("approve", "Approve"), ("decline", "Decline")]
    if facts.kind != "question":
        return []
    options = facts.payload.get("options")
    if isinstance(options, list):
        return [(f"o{i}", str(text)) for i, text in enumerate(options[:6])]
    form = facts.payload.get("form")
    if isinstance(form, dict):
        return [(f"v{i}", title) for i, (title, _) in enumerate(forms.quick_choices(form))]
    return []


def item_message(facts: ItemFacts, *, device_id: str, content: str, secret: bytes, now: float) -> bytes:
    expires = int(min(facts.expires_at or now + CAP_TTL_SECS, now + CAP_TTL_SECS))
    offered = buttons(facts)
    if content == "contentless":
        offered = [(a, t) for a, t in offered if a in ("approve", "decline")]  # option text is content
    actions = [
        {
            "action": action,
            "title": title[: forms.TITLE_MAX],
            "cap": caps.mint(secret, caps.Capability(device_id, facts.event_id, action, expires)),
        }
        for action, title in offered
    ]
    message: dict[str, Any] = {
        "v": 1,
        "type": "item",
        "id": facts.event_id,
        "kind": facts.kind,
        "url": f"/#/inbox?item={facts.event_id}",
        "badge": facts.waiting,
        "actions": actions,
    }
    if content == "contentless":
        message.update(title="Agent Hub", body=CONTENTLESS)
    else:
        where = facts.project_name or facts.project_id
        text = facts.payload.get("body")
        body = f"{facts.actor} {KIND_WORDS.get(facts.kind, '')} · {where}"
        if isinstance(text, str) and text.strip():
            body += "\n" + text.strip()
        message.update(title=facts.summary[:TITLE_CHARS], body=body[:BODY_CHARS], project_id=facts.project_id)
    return _fit(message)


def _fit(message: dict[str, Any]) -> bytes:
    data = orjson.dumps(message)
    if len(data) > PAYLOAD_MAX:
        message["body"] = str(message.get("body", ""))[:80]
        data = orjson.dumps(message)
    while len(data) > PAYLOAD_MAX and message["actions"]:
        message["actions"] = message["actions"][:-1]
        data = orjson.dumps(message)
    return data


def close_message(event_id: str, waiting: int) -> bytes:
    """The silent update: close the item's notification wherever it shows; the new badge count."""
    return orjson.dumps({"v": 1, "type": "close", "id": event_id, "badge": waiting})


def test_message(name: str) -> bytes:
    return orjson.dumps(
        {
            "v": 1,
            "type": "test",
            "id": "test",
            "title": "Agent Hub",
            "body": f"Push works on {name}.",
            "url": "/#/settings",
            "actions": [],
        }
    )
