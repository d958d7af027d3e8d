"""The artifact frame has no network (issue 28 part 2): an HTML artifact that opens a WebRTC
connection with a STUN server at a local UDP listener sends it nothing from the app's viewer, the
public page or the share page, protected or not, because its scripts do not run until the human
turns them on (no CSP directive this Chromium honours stops WebRTC: docs/decisions.md,
"Artifacts"). The control: once the human turns scripts on in the app, the same artifact does reach the
listener, so the probe is real and the setting is what keeps it quiet."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.catchers import Catcher, catching
from tests.webapp.conftest import Hub
from tests.webapp.test_artifacts import PASSWORD, publish, viewer

pytestmark = pytest.mark.browser

QUIET_SECS = 2.5  # ICE gathering sends its first STUN binding request within milliseconds

PROBE = """<!doctype html><p id=ran>no</p><script>
document.getElementById("ran").textContent = "yes";
const pc = new RTCPeerConnection({iceServers: [{urls: "stun:127.0.0.1:PORT"}]});
pc.createDataChannel("leak");
pc.createOffer().then((offer) => pc.setLocalDescription(offer));
</script>"""


@pytest.fixture
def udp() -> Iterator[Catcher]:
    with catching("udp") as found:
        yield found


@pytest.fixture(scope="module")
def prober(hub: Hub) -> str:
    return hub.new_agent("prober")


def quiet(udp: Catcher) -> None:
    time.sleep(QUIET_SECS)
    assert udp.received == []


def test_no_datagram_from_the_viewer_the_public_page_or_the_share_page(
    hub: Hub, prober: str, app_page: Any, udp: Catcher
) -> None:
    project = hub.new_project("rtc")
    aid = publish(hub, prober, project, "Probe", PROBE.replace("PORT", str(udp.port)))
    assert hub.rest("GET", f"/artifacts/{aid}/scripts") == {"artifact_id": aid, "scripts": False}
    viewer(app_page, aid)
    frame = app_page.frame_locator("main iframe.art-frame")
    expect(frame.locator("#ran")).to_have_text("no")  # loaded, and its script never ran
    quiet(udp)
    public = app_page.context.new_page()
    public.goto(f"{hub.url}/artifacts/{aid}")
    expect(public.frame_locator("#artifact-frame").locator("#ran")).to_have_text("no")
    quiet(udp)
    token = hub.rest("POST", f"/artifacts/{aid}/share", {}, expect=201)["token"]
    public.goto(f"{hub.url}/s/{token}")
    expect(public.frame_locator("#artifact-frame").locator("#ran")).to_have_text("no")
    quiet(udp)


def test_a_protected_artifact_is_as_quiet(hub: Hub, prober: str, app_page: Any, udp: Catcher) -> None:
    project = hub.new_project("rtcp")
    done = hub.agent_call(
        prober,
        "artifact_publish",
        {
            "project_id": project,
            "title": "Locked probe",
            "kind": "html",
            "content": PROBE.replace("PORT", str(udp.port)),
            "password": PASSWORD,
        },
    )
    main = viewer(app_page, done["artifact_id"])
    gate = main.locator("form.art-gate")
    gate.get_by_label("Password").fill(PASSWORD)
    gate.get_by_role("button", name="Unlock").click()
    # The loader writes the decrypted document in place of itself; its CSP lets only the loader run.
    inner = app_page.frame_locator("main iframe.art-frame")
    expect(inner.locator("#ran")).to_have_text("no")
    quiet(udp)


def test_the_human_turns_scripts_on_and_then_the_probe_reaches_the_listener(
    hub: Hub, prober: str, app_page: Any, udp: Catcher
) -> None:
    project = hub.new_project("rtcon")
    aid = publish(hub, prober, project, "Trusted", PROBE.replace("PORT", str(udp.port)))
    main = viewer(app_page, aid)
    main.get_by_role("button", name="Scripts off: turn on").click()
    dialog = app_page.locator("dialog.dialog")
    expect(dialog).to_contain_text("WebRTC")
    dialog.get_by_role("button", name="Turn scripts on").click()
    expect(main.get_by_role("button", name="Scripts on: turn off")).to_be_visible()
    assert hub.rest("GET", f"/artifacts/{aid}/scripts") == {"artifact_id": aid, "scripts": True}
    expect(app_page.frame_locator("main iframe.art-frame").locator("#ran")).to_have_text("yes")
    deadline = time.monotonic() + 10
    while not udp.received and time.monotonic() < deadline:
        time.sleep(0.1)
    assert udp.received, "with scripts on, the probe's STUN request should reach the listener"
    main.get_by_role("button", name="Scripts on: turn off").click()
    expect(main.get_by_role("button", name="Scripts off: turn on")).to_be_visible()
    expect(app_page.frame_locator("main iframe.art-frame").locator("#ran")).to_have_text("no")
    assert hub.rest("GET", f"/artifacts/{aid}/scripts")["scripts"] is False
