"""`hub-cli` run in the test's own process: the same entry point the installed script calls
(`hubcli.entry.run`), with its own argv, environment, stdin, stdout and stderr, and its exit code
taken from `SystemExit` as the interpreter would take it.

Why: a `hub-cli` process spends 0.3 to 0.5 s of CPU importing the hub before it does anything, and
the command-line tests run a few hundred of them. In-process, the import is paid once per worker.

What it cannot show, and so what the real-process cases (`tests.cli.conftest.cli`) keep covering:
the installed script itself, the interpreter's own exit path (flushing, exit status), a stdin or
stdout that is a real pipe, and the process's own environment. A log record goes where the test
process's logging sends it (pytest's capture), not to stderr as logging's last resort would print
a warning in a process of its own. In exchange a command's leaked file or socket fails the test
(the suite's `filterwarnings = error`), where a process would drop it silently at exit. Each test
file that uses this runner keeps real-process cases over the same commands, and names them in its
docstring.

The command runs in a worker thread (it starts its own event loop with `anyio.run`, as it does in
its process), so the test's event loop keeps serving a live hub meanwhile. `sys.argv`, `os.environ`
and the three standard streams are the process's: commands run one at a time, under a lock, and
everything is put back afterwards.
"""

from __future__ import annotations

import io
import os
import sys
import threading
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial

import anyio

from hubcli import entry
from tests.cli.conftest import HUB_CLI, Run

_ONE_AT_A_TIME = threading.Lock()


def exit_status(code: object) -> int:
    """The status a process exiting with `SystemExit(code)` would have (the message of a non-int
    code goes to stderr, as the interpreter writes it)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code % 256
    sys.stderr.write(f"{code}\n")
    return 1


@contextmanager
def process_state(args: tuple[str, ...], env: dict[str, str], stdin: bytes) -> Iterator[tuple[io.BytesIO, io.BytesIO]]:
    """argv, environment and standard streams as a process started with them would see them;
    the bytes written to stdout and stderr."""
    saved = (sys.argv, dict(os.environ), sys.stdin, sys.stdout, sys.stderr)
    out, err = io.BytesIO(), io.BytesIO()
    sys.argv = [HUB_CLI, *args]
    os.environ.clear()
    os.environ.update(env)
    # Python's own choices for piped standard streams: UTF-8, strict, stderr backslash-escaping.
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    sys.stdout = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
    sys.stderr = io.TextIOWrapper(err, encoding="utf-8", errors="backslashreplace", write_through=True)
    try:
        yield out, err
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        argv, environ, sys.stdin, sys.stdout, sys.stderr = saved
        sys.argv = argv
        os.environ.clear()
        os.environ.update(environ)


def run_here(env: dict[str, str], args: tuple[str, ...], stdin: bytes) -> Run:
    with _ONE_AT_A_TIME, process_state(args, env, stdin) as (out, err):
        try:
            entry.run()
            code = 0
        except SystemExit as exc:
            code = exit_status(exc.code)
        except BaseException:  # the interpreter's own report of an uncaught exception, and status 1
            traceback.print_exc()
            code = 1
        sys.stdout.flush()
        sys.stderr.flush()
        return Run(code, out.getvalue().decode(), err.getvalue().decode())


async def cli_here(env: dict[str, str], *args: str, stdin: bytes = b"") -> Run:
    """`tests.cli.conftest.cli`'s signature and answer, without the process."""
    return await anyio.to_thread.run_sync(partial(run_here, env, args, stdin))
