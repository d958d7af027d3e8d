"""The memory soak (tools/chaos/soak.py) runs, and its verdict can fail.

The long run is done by hand (`python -m tools.chaos.soak --minutes 30`); this keeps the script from
rotting: a few seconds of every kind of operation against a real `hub-cli serve`, streams and parked
waits included, and the verdict's arithmetic on made-up samples.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tools.chaos.soak import MIB, Sample, Tally, judge, parse, report, slope

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.e2e
def test_a_short_soak_drives_every_operation_and_reports_memory() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tools.chaos.soak",
            "--minutes",
            "0.05",
            "--rate",
            "40",
            "--streams",
            "6",
            "--waits",
            "4",
            "--sample",
            "0.5",
            "--settle",
            "0.5",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode in (0, 1), done.stdout + done.stderr[-3000:]  # 1: a few seconds prove no level
    out = done.stdout
    opened = re.search(r"6 streams \((\d+) opens", out)
    assert opened and int(opened.group(1)) >= 6, out
    assert re.search(r"4 parked waits \((\d+) returned\)", out), out
    line = out.split("operations: ", 1)[1].splitlines()[0]
    operations = dict(item.rsplit(" ", 1) for item in line.split(", "))
    for op in ("signal_append", "question_post", "brain_put", "artifact_publish", "kb page write (REST)"):
        assert int(operations.get(op, 0)) > 0, (op, out)
    for measure in (r"RSS \(VmRSS\)", r"own memory \(RssAnon\)"):
        assert re.search(
            measure + r" warm \(at [\d.]+ min\): [\d.]+ MiB; end of load: [\d.]+ MiB; "
            r"after the clients closed \([\d.]+ s\): [\d.]+ MiB",
            out,
        ), out
    assert out.count("growth over the last") == 2 and "load average at the end" in out


def samples(rss_mib: list[float], closed_mib: float, step: float = 10.0) -> list[Sample]:
    load = [Sample(step * (n + 1), int(r * MIB), 100, "load") for n, r in enumerate(rss_mib)]
    return [*load, Sample(load[-1].at + step, int(closed_mib * MIB), 90, "closed")]


def test_the_verdict_passes_a_level_hub_and_fails_a_growing_one() -> None:
    args = parse(["--minutes", "30"])
    level = samples([100.0] * 180, 104.0)
    verdict = judge(args, level)
    assert verdict.warm.at == 300 and verdict.growth == pytest.approx(0.0) and verdict.met
    growing = samples([100.0 + 0.5 * n for n in range(180)], 104.0)  # +3 MiB a minute
    verdict = judge(args, growing)
    assert verdict.growth == pytest.approx(3.0) and not verdict.met
    not_released = samples([100.0] * 180, 120.0)
    verdict = judge(args, not_released)
    assert verdict.after_close == pytest.approx(1.2) and not verdict.met


def both(rss_mib: list[float], anon_mib: list[float], closed: tuple[float, float]) -> list[Sample]:
    """Samples with VmRSS and RssAnon apart (the files' share is the difference)."""
    load = [
        Sample(10.0 * (n + 1), int(r * MIB), 100, "load", int(a * MIB), int((r - a) * MIB))
        for n, (r, a) in enumerate(zip(rss_mib, anon_mib, strict=True))
    ]
    rss, anon = (int(x * MIB) for x in closed)
    return [*load, Sample(load[-1].at + 10, rss, 90, "closed", anon, rss - anon)]


def test_the_exit_status_needs_vmrss_and_rssanon_both_level(capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's target is RSS: a hub whose own memory levels off while VmRSS grows (mapped file
    pages, as with the readers' map) fails the soak, and so does the reverse."""
    args = parse(["--minutes", "30", "--settle", "60"])
    tally = Tally(ops={"signal_append": 1000})
    level = [100.0] * 180
    growing = [100.0 + 0.5 * n for n in range(180)]  # +3 MiB a minute
    assert report(args, both([r + 30 for r in level], level, (131.0, 101.0)), tally, 1800) == 0
    assert report(args, both([r + 30 for r in growing], level, (220.0, 101.0)), tally, 1800) == 1
    assert report(args, both([r + 30 for r in growing], growing, (220.0, 190.0)), tally, 1800) == 1
    assert report(args, both([r + 30 for r in level], level, (160.0, 130.0)), tally, 1800) == 1  # not released
    out = capsys.readouterr().out
    assert "RSS (VmRSS) warm (at 5.0 min): 130.0 MiB" in out and "own memory (RssAnon) warm (at 5.0 min)" in out
    # run 2: VmRSS's slope and ratio; run 3: both measures' slopes and ratios; run 4: both ratios
    assert out.count("NOT met") == 2 + 4 + 2


def test_slope_is_least_squares_in_mib_a_minute() -> None:
    points = [Sample(60.0 * n, int((50 + 2 * n) * MIB), 1, "load") for n in range(5)]
    assert slope(points) == pytest.approx(2.0)
    assert slope(points[:1]) == 0.0


def test_the_command_line_refuses_unbounded_values() -> None:
    for bad in (["--rate", "0"], ["--rate", "10000"], ["--streams", "-1"], ["--minutes", "0"]):
        with pytest.raises(SystemExit):
            parse(bad)
