"""The notify target fires when an enrolment request starts waiting, and says nothing about it."""

from __future__ import annotations

import pytest

from tests.core.support import wait_until
from tests.enrol.conftest import ClientFactory, ask, fingerprint
from tests.feed.test_webhook import Receiver, counted, receiver  # noqa: F401 (the receiver fixture)

pytestmark = pytest.mark.anyio


async def test_a_request_pokes_the_notify_target_with_no_content(
    make_client: ClientFactory,
    receiver: Receiver,  # noqa: F811
) -> None:
    async with make_client(notify_url=receiver.url, notify_token="notify-secret", notify_interval_secs=60) as client:
        r = await client.post("/api/v1/enrol", json=ask("Sly Fox", why="quietly asking", suggested_id="fox"))
        assert r.status_code == 202
        sent = await receiver.next()
        assert sent["body"] == b"Something is waiting for you in Agent Hub."
        assert sent["headers"]["Authorization"] == "Bearer notify-secret"
        assert not any(word in str(sent) for word in ("fox", "Sly", "quietly", "space-"))
        await wait_until(lambda: counted(client.app.hub.metrics, "delivered") == 1, "the send to be counted")
        # A refused request (the same peer again) starts nothing waiting: no second poke is due.
        before = fingerprint(client)
        assert (await client.post("/api/v1/enrol", json=ask("Other"))).status_code == 429
        assert fingerprint(client) == before
