"""The files the public pages load from the hub: the shell's script and style, and mermaid.

Each is served at a name carrying its version or content digest (`/assets/<name>`), so it can be
cached for a year: a new release of a file is a new name. Mermaid is vendored from the npm registry
(`tools/vendor-mermaid` refreshes it; its licence sits beside it) and loaded only by frames that
hold a diagram.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cache, cached_property
from importlib.resources import files
from importlib.resources.abc import Traversable

HERE = files("hubhttp.pages") / "assets"  # package data, wherever the package is installed
MERMAID_VERSION = "11.17.2"
IMMUTABLE = "public, max-age=31536000, immutable"


@dataclass(frozen=True)
class Asset:
    source: Traversable
    content_type: str
    eager: bool = True  # read with the app; else on its first request (mermaid: 3.5 MB few frames load)

    def __post_init__(self) -> None:
        if self.eager:
            _ = self.data

    @cached_property
    def data(self) -> bytes:
        return self.source.read_bytes()


@dataclass(frozen=True)
class Assets:
    by_name: dict[str, Asset]
    viewer_js: str
    viewer_css: str
    mermaid: str


def _digest_name(stem: str, suffix: str) -> str:
    digest = hashlib.sha256((HERE / f"{stem}{suffix}").read_bytes()).hexdigest()[:12]
    return f"{stem}.{digest}{suffix}"


@cache
def assets() -> Assets:
    """Read once per process (the app reads them when it is built, off any request; mermaid, 3.5 MB
    only frames with a diagram load, on its first request): the files ship inside the package and
    never change while it runs."""
    js, css = _digest_name("viewer", ".js"), _digest_name("viewer", ".css")
    mermaid = f"mermaid-{MERMAID_VERSION}.min.js"
    named = {
        js: ("viewer.js", "text/javascript"),
        css: ("viewer.css", "text/css"),
        mermaid: ("mermaid.min.js", "text/javascript"),
        "mermaid.LICENSE": ("mermaid.LICENSE", "text/plain"),
    }
    by_name = {
        name: Asset(HERE / file, f"{kind}; charset=utf-8", eager=name != mermaid)
        for name, (file, kind) in named.items()
    }
    return Assets(by_name, js, css, mermaid)
