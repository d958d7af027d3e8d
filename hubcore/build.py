"""What build is running: the release version and the short commit it was built from.

The commit comes from `HUB_BUILD_COMMIT` when the packager sets it, else from the git checkout
the code runs from (an editable install), else it is `unknown`. Read once per process.
"""

from __future__ import annotations

import functools
import os
import subprocess
from pathlib import Path

from hubcore import __version__


def version() -> str:
    return __version__


@functools.cache
def commit() -> str:
    """The short commit hash of this build, or `unknown`."""
    given = os.environ.get("HUB_BUILD_COMMIT", "").strip()
    if given:
        return given[:12]
    root = Path(__file__).resolve().parent.parent
    if not (root / ".git").exists():
        return "unknown"
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return out.stdout.strip() or "unknown"
