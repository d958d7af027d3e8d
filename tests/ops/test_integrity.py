"""Integrity sampling (`integrity_sample_secs`): one store file per interval, round robin in name
order, read-only; `hub_integrity_ok` absent until the first sample, 0 while a damaged file's latest
sample failed; `hub_integrity_failures_total` counting failed samples. On asyncio and trio."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import anyio
import pytest

from hubcore.clock import FakeClock
from hubcore.hub import Hub
from hubcore.ops.integrity import IntegritySampler
from hubcore.ops.layout import store_files
from tests.ops.support import Made, make_hub_dir

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def made(tmp_path: Path) -> Made:
    return await make_hub_dir(tmp_path / "data")


def truncate(path: Path) -> None:
    with path.open("r+b") as handle:
        handle.truncate(path.stat().st_size // 2)


def sample_value(hub: Hub, name: str) -> float | None:
    return hub.metrics.registry.get_sample_value(name)


async def test_round_robin_in_name_order_and_a_damaged_file_fails(made: Made) -> None:
    clock = FakeClock()
    files = store_files(made.root)
    sampler = IntegritySampler(lambda: store_files(made.root), 60, clock=clock)
    assert sampler.ok is None
    seen = [await sampler.sample() for _ in range(len(files) + 1)]
    assert seen == [*sorted(files, key=str), sorted(files, key=str)[0]]
    assert sampler.ok is True and sampler.failures == 0 and sampler.samples == len(files) + 1
    truncate(made.brain)
    while (await sampler.sample()) != made.brain:
        pass
    assert sampler.ok is False and sampler.failures == 1
    assert sampler.latest[str(made.brain)] is False
    assert sampler.last_at == clock.now()


async def test_a_vanished_file_is_skipped_and_forgotten(made: Made) -> None:
    sampler = IntegritySampler(lambda: store_files(made.root), 60, clock=FakeClock())
    for _ in store_files(made.root):
        await sampler.sample()
    assert str(made.brain) in sampler.latest
    listed = store_files(made.root)
    made.brain.unlink()
    gone = IntegritySampler(lambda: listed, 60, clock=FakeClock())  # a listing taken before the removal
    while gone.samples < 2:
        assert await gone.sample() != made.brain
    assert str(made.brain) not in gone.latest and gone.ok is True
    await sampler.sample()  # the next pick lists again: the gone file's old result is dropped
    assert str(made.brain) not in sampler.latest


async def test_run_samples_once_per_interval_on_the_clock(made: Made) -> None:
    clock = FakeClock()
    slept: list[float] = []
    stop = anyio.CancelScope()

    async def sleep(seconds: float) -> None:
        slept.append(seconds)
        clock.advance(seconds)
        if len(slept) > 3:
            stop.cancel()  # the fourth wait ends the run, with no real time spent
            await anyio.sleep_forever()

    sampler = IntegritySampler(lambda: store_files(made.root), 30, clock=clock, sleep=sleep)
    start = clock.now()
    with anyio.fail_after(5), stop:  # a run that does not reach its fourth wait fails, not hangs
        await sampler.run()
    assert slept == [30, 30, 30, 30]
    assert sampler.samples == 3 and sampler.last_at == start + 90


async def test_metrics_absent_until_the_first_sample_then_failing(made: Made) -> None:
    settings = replace(made.settings, integrity_sample_secs=3600)  # the loop's first sample is an hour away
    truncate(made.brain)
    async with Hub.open(settings, clock=FakeClock()) as hub:
        assert hub.integrity is not None
        text = hub.metrics.render().decode()
        assert "hub_integrity_ok" not in text
        assert "hub_integrity_failures_total 0.0" in text
        for _ in store_files(made.root):
            await hub.integrity.sample()
        assert sample_value(hub, "hub_integrity_ok") == 0
        assert sample_value(hub, "hub_integrity_failures_total") == 1


async def test_a_sound_hub_samples_ok(made: Made) -> None:
    async with Hub.open(replace(made.settings, integrity_sample_secs=3600), clock=FakeClock()) as hub:
        assert hub.integrity is not None
        await hub.integrity.sample()
        assert sample_value(hub, "hub_integrity_ok") == 1
        assert sample_value(hub, "hub_integrity_failures_total") == 0


async def test_off_by_default_no_task_and_no_metric(made: Made) -> None:
    async with Hub.open(made.settings, clock=FakeClock()) as hub:
        assert hub.integrity is None
        text = hub.metrics.render().decode()
    assert "hub_integrity" not in text


def test_the_setting_is_read_and_a_negative_one_refused(tmp_path: Path) -> None:
    from hubcore.config import ConfigError, load

    absent = tmp_path / "none.toml"
    assert load({"HUB_INTEGRITY_SAMPLE_SECS": "5"}, path=absent).hub.integrity_sample_secs == 5
    assert load({}, path=absent).hub.integrity_sample_secs == 0
    with pytest.raises(ConfigError, match=r"hub\.integrity_sample_secs must not be negative"):
        load({"HUB_INTEGRITY_SAMPLE_SECS": "-1"}, path=absent)
