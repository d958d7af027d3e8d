"""The CPU of a command and of every process it starts, however they end (issue 26, part 5).

`/usr/bin/time` reports what the command's own children were waited for; a process whose parent
left first (Chromium's helpers when the browser goes, a server a test started and lost) is
reparented to init and its CPU is counted nowhere. Here the command runs under a child subreaper
(`PR_SET_CHILD_SUBREAPER`): such an orphan is reparented to this process, which waits for every
descendant before it reports, so user + sys are those of the whole tree. On a shared machine this
is the figure to compare (wall time is mostly waiting for a core); alternate the trees compared.

    python tools/bench/tree_cpu.py [--label NAME] -- .venv/bin/pytest -q -p no:randomly tests/webapp/test_a11y.py

Prints one line: the label, the command's exit status, wall seconds, user, sys and their sum, and
the 1-minute load average at the start and the end; exits with the command's status.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import resource
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36


def load() -> str:
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def run(command: list[str]) -> tuple[int, float, float, float]:
    """The command's exit status, wall seconds, and the user and sys seconds of its whole tree."""
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER) failed")
    started = time.monotonic()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    status = subprocess.call(command)
    while True:  # the orphans reparented here, until none is left
        try:
            os.wait()
        except ChildProcessError:
            break
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return status, wall, after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--label", default="run", help="a name for the line printed")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command (after --)")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command given")
    start = load()
    status, wall, user, system = run(command)
    print(
        f"{args.label}: exit {status}, wall {wall:.1f} s, CPU user {user:.1f} + sys {system:.1f}"
        f" = {user + system:.1f} s, load {start} -> {load()}",
        flush=True,
    )
    return status


if __name__ == "__main__":
    sys.exit(main())
