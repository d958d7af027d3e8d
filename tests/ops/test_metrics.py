"""`GET /metrics`: every metric of the spec's list present and counting, on a served hub (REST and
the agent endpoint over real HTTP): HTTP requests by method and status class, failed responses by
hub error code (every code rendered from the start), events by kind (every kind rendered at 0),
tool calls by tool (a call naming no tool under `<unknown>`), notify sends by result, the storage
gauges, and with sampling on the integrity pair."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from hubcore.config import HubSettings
from hubcore.errors import STATUS_BY_CODE
from hubcore.services.events import KINDS
from tests.harness import ADMIN
from tests.harness import test_settings as make_settings
from tests.mcp.live import LiveHub, live_hub, modern_result, modern_tool_call

pytestmark = pytest.mark.anyio
Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


@pytest.fixture
def settings(tmp_path: Path) -> HubSettings:
    # A notify target that never answers (no item waits in these tests, so nothing is sent).
    return make_settings(tmp_path / "data", notify_url="http://127.0.0.1:9/hook", integrity_sample_secs=3600)


@pytest.fixture
async def live(settings: HubSettings) -> AsyncIterator[LiveHub]:
    async with live_hub(settings) as hub:
        yield hub


async def scrape(live: LiveHub) -> Samples:
    r = await live.http.get("/metrics", headers=ADMIN)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(r.text)
        for s in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float | None:
    return samples.get((name, tuple(sorted(labels.items()))))


async def test_every_listed_metric_is_present_from_the_start(live: LiveHub) -> None:
    samples = await scrape(live)
    for kind in KINDS:
        assert value(samples, "hub_events_appended_total", kind=kind) == 0, kind
    for code in STATUS_BY_CODE:
        assert value(samples, "hub_failed_responses_total", code=code) == 0, code
    for result in ("delivered", "failed"):
        assert value(samples, "hub_notify_sends_total", result=result) == 0
    db = Path(live.app.settings.data_dir) / "hub.db"
    assert value(samples, "hub_db_size_bytes") == db.stat().st_size
    assert value(samples, "hub_db_wal_bytes") is not None
    free = value(samples, "hub_data_free_bytes")
    assert free is not None and free > 0
    assert value(samples, "hub_integrity_failures_total") == 0
    assert value(samples, "hub_integrity_ok") is None  # absent until the first sample
    assert value(samples, "hub_http_requests_total", method="GET", status_class="2xx") is None  # none answered yet


async def test_counters_count_what_happened(live: LiveHub) -> None:
    await live.make_project("web")
    r = await live.http.get("/api/v1/projects/nope", headers=ADMIN)
    assert r.status_code == 404
    ok = await modern_result(live, modern_tool_call("signal_append", {"project_id": "web", "summary": "built"}))
    assert not ok.get("isError")
    refused = await modern_result(live, modern_tool_call("signal_append", {"project_id": "web", "summary": ""}))
    assert refused["isError"] is True
    unknown = await modern_result(live, modern_tool_call("no_such_tool", {}))
    assert unknown["isError"] is True
    assert (await live.http.get("/api/v1/projects")).status_code == 401  # the gate's refusal counts too
    samples = await scrape(live)
    assert value(samples, "hub_events_appended_total", kind="signal") == 1
    assert value(samples, "hub_events_appended_total", kind="question") == 0
    assert value(samples, "hub_mcp_tool_calls_total", tool="signal_append", outcome="ok") == 1
    assert value(samples, "hub_mcp_tool_calls_total", tool="signal_append", outcome="error") == 1
    assert value(samples, "hub_mcp_tool_calls_total", tool="<unknown>", outcome="error") == 1
    assert not any(labels and dict(labels).get("tool") == "no_such_tool" for _, labels in samples)
    # The REST 404, the unknown tool's not_found and the refused call's invalid_argument.
    assert value(samples, "hub_failed_responses_total", code="not_found") == 2
    assert value(samples, "hub_failed_responses_total", code="invalid_argument") == 1
    assert value(samples, "hub_failed_responses_total", code="unauthenticated") == 1
    assert value(samples, "hub_http_requests_total", method="POST", status_class="2xx") is not None
    assert value(samples, "hub_http_requests_total", method="GET", status_class="4xx") == 2


async def test_integrity_pair_after_a_sample(live: LiveHub) -> None:
    sampler = live.app.hub.integrity
    assert sampler is not None
    await sampler.sample()
    samples = await scrape(live)
    assert value(samples, "hub_integrity_ok") == 1
    assert value(samples, "hub_integrity_failures_total") == 0


async def test_without_sampling_or_notify_those_metrics_are_absent(tmp_path: Path) -> None:
    async with live_hub(make_settings(tmp_path / "other")) as hub:
        samples = await scrape(hub)
    names = {name for name, _ in samples}
    assert not {"hub_integrity_ok", "hub_integrity_failures_total"} & names
    assert "hub_notify_sends_total" not in names
    assert value(samples, "hub_events_appended_total", kind="enrol_request") == 0
