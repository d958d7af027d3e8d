"""An acknowledged write survives `kill -9` (DESIGN section 2, durability).

A child process (`crash_writer.py`) writes through a store actor with many concurrent writers and
prints each row id only after `execute` returned. We kill it with SIGKILL at a random moment, then
open the file: every acknowledged id is there and the file passes `PRAGMA integrity_check`.
"""

from __future__ import annotations

import random
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

CHILD = Path(__file__).with_name("crash_writer.py")
REPO = Path(__file__).resolve().parents[2]
ITERATIONS = 5


def acknowledged_until_killed(path: Path, rng: random.Random) -> list[int]:
    """Run the child, kill it after a random number of acks; every id it printed."""
    target = rng.randint(1, 3000)
    acked: list[int] = []
    # As a context manager, Popen closes the pipes on the way out (an open one is a ResourceWarning).
    with subprocess.Popen(
        [sys.executable, str(CHILD), str(path), "16"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO
    ) as proc:
        watchdog = threading.Timer(30, proc.kill)
        watchdog.start()
        assert proc.stdout is not None and proc.stderr is not None
        try:
            for line in proc.stdout:
                acked.append(int(line))
                if len(acked) >= target:
                    time.sleep(rng.random() * 0.02)  # and a little later still
                    break
            proc.kill()  # SIGKILL
            rest = proc.stdout.read()  # acks written to the pipe before the kill count too
        finally:
            proc.wait()
            watchdog.cancel()
        assert len(acked) >= target, proc.stderr.read().decode(errors="replace")
    complete = rest.split(b"\n")[:-1]  # a fragment after the last newline was never a whole ack
    return acked + [int(line) for line in complete]


def test_acknowledged_writes_survive_kill_9(tmp_path: Path) -> None:
    rng = random.Random()
    for i in range(ITERATIONS):
        path = tmp_path / f"crash-{i}.db"
        acked = acknowledged_until_killed(path, rng)
        conn = sqlite3.connect(path)
        try:
            assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
            stored = {row[0] for row in conn.execute("SELECT id FROM acked")}
        finally:
            conn.close()
        missing = sorted(set(acked) - stored)
        assert not missing, f"iteration {i}: {len(missing)} acknowledged ids lost, e.g. {missing[:5]}"
