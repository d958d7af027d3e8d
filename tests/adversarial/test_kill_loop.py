"""The SIGKILL loop (tools/chaos/kill_loop.py) runs, and its checks can fail.

The long run is done by hand (`python -m tools.chaos.kill_loop --runs 30`); this keeps the script
from rotting: two kills of a real `hub-cli serve`, a few seconds.
"""

from __future__ import annotations

import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tools.chaos.kill_loop import Ledger, integrity

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.e2e
def test_two_kills_lose_no_acknowledged_write() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tools.chaos.kill_loop",
            "--runs",
            "2",
            "--seconds",
            "0.6",
            "--workers",
            "4",
            "--seed",
            "7",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert "lost: 0  integrity failures: 0  crashes: 0" in done.stdout
    acknowledged = re.search(
        r"acknowledged writes: (\d+) \(events (\d+), session starts (\d+), brain entries (\d+)\)", done.stdout
    )
    assert acknowledged, done.stdout
    assert all(int(n) > 0 for n in acknowledged.groups()), done.stdout
    assert "time to ready after SIGKILL: median" in done.stdout


def test_integrity_reports_a_damaged_file_and_passes_a_sound_one(tmp_path: Path) -> None:
    (tmp_path / "brains").mkdir()
    with sqlite3.connect(tmp_path / "hub.db") as conn:
        conn.execute("CREATE TABLE t (x)")
        conn.execute("INSERT INTO t VALUES (1)")
    conn.close()
    ledger = Ledger()
    integrity(tmp_path, "sound", ledger)
    assert ledger.integrity_failures == []
    (tmp_path / "brains" / "s1.db").write_bytes(b"SQLite format 3\x00" + b"\xff" * 4080)
    integrity(tmp_path, "damaged", ledger)
    assert len(ledger.integrity_failures) == 1 and "brains/s1.db" in ledger.integrity_failures[0]
