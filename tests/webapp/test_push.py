"""Push in Chromium (the full browser, `full_browser`: the headless shell the other tests use grants no
notification permission, tests/chromium.py): the app subscribes (headless Chromium cannot, so
`pushManager.subscribe` is stubbed by an init script with the test's own keys and a loopback
endpoint), the hub encrypts a push to that endpoint (decrypted there with the device's keys), and
CDP's `ServiceWorker.deliverPushMessage` hands it to the service worker, which shows it with its
buttons; a button answers the question through `/api/v1/push/act`, read back over REST. Also: the
form question drawn and answered in the app, and the delivery receipt."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.push.receiver import PushService, serving
from tests.webapp.conftest import ADMIN_TOKEN, PHONE, Hub

pytestmark = pytest.mark.browser

STUB = """
(() => {
  const sub = %s;
  let current = null;
  const fake = () => ({ endpoint: sub.endpoint, expirationTime: null, options: {},
    toJSON: () => ({ endpoint: sub.endpoint, expirationTime: null, keys: sub.keys }),
    unsubscribe: async () => { current = null; return true; } });
  if (self.PushManager) {
    PushManager.prototype.subscribe = async function () { current = fake(); return current; };
    PushManager.prototype.getSubscription = async function () { return current; };
  }
})();
"""


@pytest.fixture
def pushes() -> Iterator[PushService]:
    yield from serving()


def wait_for(check: Any, what: str, timeout: float = 10.0) -> Any:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        found = check()
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def push_page(browser: Any, hub: Hub, pushes: PushService) -> tuple[Any, Any, dict[str, Any]]:
    device = pushes.device()
    sub = device.subscription()
    context = browser.new_context(viewport=PHONE, base_url=hub.url, service_workers="allow")
    context.grant_permissions(["notifications"], origin=hub.url)
    context.add_init_script(STUB % json.dumps({"endpoint": sub["endpoint"], "keys": sub["keys"]}))
    page = context.new_page()
    page.goto("/app/shell.json")
    page.evaluate("t => localStorage.setItem('agent-hub.token', t)", ADMIN_TOKEN)
    page.goto("/#/settings")
    page.wait_for_selector("h1.screen-title")
    page.evaluate("navigator.serviceWorker.ready.then(() => true)")
    return context, page, sub


def registration_id(context: Any, page: Any, hub: Hub) -> tuple[Any, str]:
    cdp = context.new_cdp_session(page)
    found: list[str] = []
    lock = threading.Lock()

    def updated(params: dict[str, Any]) -> None:
        with lock:
            found.extend(
                r["registrationId"]
                for r in params["registrations"]
                if r["scopeURL"].startswith(hub.url) and not r.get("isDeleted")
            )

    cdp.on("ServiceWorker.workerRegistrationUpdated", updated)
    cdp.send("ServiceWorker.enable")
    wait_for(lambda: found or (page.wait_for_timeout(50) and False), "the worker's registration")
    return cdp, found[0]


NOTIFICATIONS = """() => self.registration.getNotifications().then(ns => ns.map(n => ({
  title: n.title, body: n.body, tag: n.tag, actions: n.actions.map(a => a.action), data: n.data })))"""
CLICK = """(action) => self.registration.getNotifications().then(([n]) => {
  self.dispatchEvent(new NotificationEvent("notificationclick", { notification: n, action }));
  return true; })"""


def shown(context: Any, page: Any, want: Any) -> list[dict[str, Any]]:
    worker = wait_for(lambda: context.service_workers or (page.wait_for_timeout(50) and None), "the worker")[0]

    last: list[Any] = []

    def check() -> Any:
        got = worker.evaluate(NOTIFICATIONS)
        last[:] = got
        return (got,) if want(got) else (page.wait_for_timeout(50) and None)

    try:
        return list(wait_for(check, "the notifications")[0])
    except AssertionError as timed_out:  # say what was showing: the next reader needs it
        raise AssertionError(f"{timed_out}; showing: {last!r}") from None


def test_a_push_shows_its_buttons_and_a_button_answers(full_browser: Any, hub: Hub, pushes: PushService) -> None:
    context, page, _ = push_page(full_browser, hub, pushes)  # the full browser: the shell shows no notification
    device_id = None
    try:
        page.fill("#push-name", "Test phone")
        page.click("text=Enable push here")
        page.wait_for_selector("li.device >> text=Test phone (this device)")
        [device] = [d for d in hub.rest("GET", "/push/devices")["devices"] if d["name"] == "Test phone"]
        device_id = device["id"]
        bot = hub.new_agent("pusher")
        project = hub.new_project("push")
        question = hub.question(bot, project, "Ship the release?", options=["Yes", "Not yet", "Later"])
        sent = wait_for(
            lambda: [r for r in pushes.received if r["message"].get("id") == question], "the push", timeout=30
        )[0]  # the first send starts the push worker process
        assert sent["message"]["title"] == "Ship the release?"
        cdp, reg = registration_id(context, page, hub)
        cdp.send(
            "ServiceWorker.deliverPushMessage",
            {"origin": hub.url, "registrationId": reg, "data": json.dumps(sent["message"])},
        )
        [note] = shown(context, page, lambda ns: len(ns) == 1)
        assert note["title"] == "Ship the release?" and note["tag"] == question
        assert note["actions"] == ["o0", "o1"]  # the platform's two buttons; "Later" is behind a tap
        worker = context.service_workers[0]
        worker.evaluate(CLICK, "o1")
        answered = wait_for(lambda: hub.item(question)["status"] == "resolved" and hub.item(question), "the answer")
        assert answered["answer"]["body"] == "Not yet" and answered["answer"]["actor"] == "human"
        [said] = shown(context, page, lambda ns: len(ns) == 1 and ns[0]["title"].startswith("Done"))
        assert said["title"] == "Done: Not yet"
        # The same push again (a late delivery): the button now says the item was already answered.
        cdp.send(
            "ServiceWorker.deliverPushMessage",
            {"origin": hub.url, "registrationId": reg, "data": json.dumps(sent["message"])},
        )
        shown(context, page, lambda ns: len(ns) == 1 and ns[0]["actions"] == ["o0", "o1"])
        worker.evaluate(CLICK, "o0")
        [said] = shown(context, page, lambda ns: len(ns) == 1 and ns[0]["title"].startswith("Already"))
        assert said["title"] == "Already answered in the app: Yes"
        assert hub.item(question)["answer"]["body"] == "Not yet"
        # The hub's close update for the resolved item clears it.
        closed = wait_for(
            lambda: [
                r for r in pushes.received if r["message"].get("type") == "close" and r["message"]["id"] == question
            ],
            "the close push",
        )[0]
        cdp.send(
            "ServiceWorker.deliverPushMessage",
            {"origin": hub.url, "registrationId": reg, "data": json.dumps(closed["message"])},
        )
        shown(context, page, lambda ns: ns == [])
        # The receipt: not picked up until the agent reads its answer, then delivered.
        page.goto(f"/#/inbox?status=resolved&item={question}")  # where a tap on the notification opens
        page.wait_for_selector(f"li[data-event-id='{question}'][aria-selected=true] .receipt")
        assert "Not picked up yet" in page.inner_text(f"li[data-event-id='{question}'] .receipt")
        hub.mcp(bot, "inbox_wait", {"wait_seconds": 0})
        page.reload()
        page.wait_for_selector(f"li[data-event-id='{question}'] .receipt >> text=Delivered to pusher")
    finally:
        if device_id:
            hub.rest("DELETE", f"/push/devices/{device_id}", expect=204)
        context.close()


def test_a_form_question_is_drawn_prefilled_and_answered(app_page: Any, hub: Hub) -> None:
    bot = hub.new_agent("former")
    project = hub.new_project("form")
    form = {
        "type": "object",
        "required": ["email"],
        "properties": {
            "email": {"type": "string", "format": "email", "title": "Reply to"},
            "copies": {"type": "integer", "minimum": 1, "maximum": 5, "default": 2, "title": "Copies"},
            "colour": {
                "type": "string",
                "oneOf": [{"const": "r", "title": "Red"}, {"const": "b", "title": "Blue"}],
                "default": "b",
                "title": "Colour",
            },
            "rush": {"type": "boolean", "title": "Rush it", "default": True},
        },
    }
    question = hub.question(bot, project, "Order details?", form=form)
    # The package's hub is shared: its Inbox holds other tests' questions, oldest first.
    app_page.goto(f"/#/inbox?project={project}")
    row = f"li[data-event-id='{question}']"
    app_page.wait_for_selector(f"{row} form.form-question")
    assert app_page.input_value(f"{row} input[type=number]") == "2"
    assert app_page.is_checked(f"{row} label:text-is('Blue') input")
    assert app_page.is_checked(f"{row} label:has-text('Rush it') input")
    app_page.get_by_label("Reply to (required)").fill("ops@example.org")
    app_page.click(f"{row} label:text-is('Red')")
    app_page.click(f"{row} form.form-question button[type=submit]")
    answered = wait_for(lambda: hub.item(question)["status"] == "resolved" and hub.item(question), "the answer")
    assert answered["answer"]["value"] == {"email": "ops@example.org", "copies": 2, "colour": "r", "rush": True}
