"""tools/bench/tree_cpu.py counts the CPU of a process its parent left behind (an orphan, as
Chromium's helpers or a lost server are), which `/usr/bin/time` and the parent's own rusage miss."""

from __future__ import annotations

import resource
import subprocess
import sys

BURN = "import time\nend = time.process_time() + 0.6\nwhile time.process_time() < end: pass\n"
ORPHAN = f"import subprocess, sys; subprocess.Popen([sys.executable, '-c', {BURN!r}])"  # left, not waited for


def test_an_orphans_cpu_is_counted_and_waited_for() -> None:
    # In a child process: the subreaper mark and the waits stay out of the test process.
    probe = (
        "import sys; from tools.bench.tree_cpu import run\n"
        f"status, wall, user, system = run([sys.executable, '-c', {ORPHAN!r}])\n"
        "print(status, user + system)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    status, cpu = done.stdout.split()
    assert status == "0"
    assert float(cpu) >= 0.6  # the orphan's burn, counted after its parent had exited


def test_without_the_subreaper_the_orphan_is_missed() -> None:
    """What the tool is for: the same command's own rusage does not see the orphan."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", ORPHAN], check=True, timeout=60)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime) < 0.5
