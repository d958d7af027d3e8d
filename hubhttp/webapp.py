"""The web app (`pwa/`): static files served at `/` on the hub's one listener.

The files are package data of `hubhttp` (`hubhttp/pwa`, read with importlib.resources): in the
source tree `hubhttp/pwa` is a symbolic link to the repository's `pwa/` folder, and a built wheel
carries the folder itself, so an installed hub (pipx, `uv tool install`) serves the whole app.

The files are read once when the app is built (never from a request's path): a request names a key
in that table or gets the plain 404, so no spelling of a path (dot segments, encoded slashes,
backslashes, NUL) can reach a file outside `pwa/`, and there is no directory listing. Text files are
also kept gzipped for clients that accept it.

The shell's digest (a hash over every file's name and bytes) names the service worker's cache: the
hub writes it into `sw.js` as it serves it, with the list of files to precache, so a new release
swaps the cache. `/app/shell.json` tells the app the digest, the version and the build commit.

Every app response carries the app's CSP: `default-src 'self'`, no inline script or style, no
framing. The shell's files are revalidated on every load (`no-cache` with an ETag): the service
worker, not the HTTP cache, is what makes the app start offline.
"""

from __future__ import annotations

import gzip
import hashlib
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path, PurePosixPath

import orjson
from quart import Blueprint, Response, request

from hubcore import build
from hubcore.errors import HubError

log = logging.getLogger("hubhttp.webapp")

APP_PREFIX = "/app/"
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
    "connect-src 'self'; font-src 'self'; manifest-src 'self'; worker-src 'self'; frame-src 'self'; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}
TYPES = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".json": "application/json",
    ".webmanifest": "application/manifest+json",
    ".png": "image/png",
    ".svg": "image/svg+xml",
    ".txt": "text/plain; charset=utf-8",
    ".ico": "image/x-icon",
}
COMPRESSIBLE = (".html", ".css", ".js", ".json", ".webmanifest", ".svg", ".txt")
# Served at the root (the worker's scope is the folder it is served from) rather than under /app/.
ROOT_FILES = ("index.html", "sw.js", "manifest.webmanifest")
DIGEST_MARK = b"__SHELL_DIGEST__"
FILES_MARK = b"__SHELL_FILES__"
SKIPPED = ("README", ".keep")

bp = Blueprint("webapp", __name__)


@dataclass(frozen=True)
class File:
    data: bytes
    gzipped: bytes | None
    content_type: str
    etag: str


@dataclass(frozen=True)
class Shell:
    files: dict[str, File]  # by URL path: "/", "/sw.js", "/app/js/app.js"...
    digest: str


def _file(data: bytes, suffix: str) -> File:
    gz = gzip.compress(data, compresslevel=9, mtime=0) if suffix in COMPRESSIBLE else None
    return File(
        data, gz, TYPES.get(suffix, "application/octet-stream"), '"' + hashlib.sha256(data).hexdigest()[:20] + '"'
    )


def url_for_file(rel: str) -> str:
    if rel == "index.html":
        return "/"
    return "/" + rel if rel in ROOT_FILES else APP_PREFIX + rel


def pwa_root() -> Traversable:
    """The web app's folder as installed: package data of hubhttp."""
    return resources.files("hubhttp") / "pwa"


def _walk(node: Traversable, prefix: str) -> Iterator[tuple[str, Traversable]]:
    for entry in node.iterdir():
        # Symbolic links inside the app are not followed and hidden files are left out.
        if entry.name.startswith(".") or (isinstance(entry, Path) and entry.is_symlink()):
            continue
        rel = prefix + entry.name
        if entry.is_dir():
            yield from _walk(entry, rel + "/")
        elif entry.is_file():
            yield rel, entry


def _sources(root: Traversable) -> dict[str, bytes]:
    """Every servable file under `root` by its relative path, in path order: only what the app
    ships is served."""
    found: dict[str, bytes] = {}
    for rel, entry in sorted(_walk(root, ""), key=lambda item: item[0]):
        if entry.name.startswith(SKIPPED) or PurePosixPath(rel).suffix not in TYPES:
            continue
        found[rel] = entry.read_bytes()
    return found


def load_shell(root: Traversable | None = None) -> Shell:
    root = pwa_root() if root is None else root
    sources = _sources(root) if root.is_dir() else {}
    if "index.html" not in sources:
        log.warning("the web app is missing: no index.html under %s", root)
    digest = hashlib.sha256()
    for rel, data in sources.items():
        digest.update(rel.encode() + b"\0" + hashlib.sha256(data).digest())
    short = digest.hexdigest()[:16]
    urls = [url_for_file(rel) for rel in sources if rel != "sw.js"]
    files: dict[str, File] = {}
    for rel, data in sources.items():
        if rel == "sw.js":
            data = data.replace(DIGEST_MARK, short.encode()).replace(FILES_MARK, orjson.dumps(urls))
        files[url_for_file(rel)] = _file(data, Path(rel).suffix)
    info = {"digest": short, "version": build.version(), "commit": build.commit(), "files": urls}
    files[APP_PREFIX + "shell.json"] = _file(orjson.dumps(info), ".json")
    return Shell(files, short)


@cache
def shell() -> Shell:
    """Read once per process, when the app is built: the files ship with the hub and do not change
    while it runs."""
    return load_shell()


def _accepts_gzip() -> bool:
    for part in request.headers.get("Accept-Encoding", "").split(","):
        name, _, params = part.strip().partition(";")
        if name.strip().lower() in ("gzip", "*") and params.replace(" ", "") not in ("q=0", "q=0.0"):
            return True
    return False


def serve(url: str) -> Response:
    found = shell().files.get(url)
    if found is None:
        raise HubError("not_found", "no such file")
    headers = {**HEADERS, "Cache-Control": "no-cache", "ETag": found.etag, "Vary": "Accept-Encoding"}
    if url == "/sw.js":
        headers["Service-Worker-Allowed"] = "/"
    if found.etag in [t.strip() for t in request.headers.get("If-None-Match", "").split(",")]:
        return Response(b"", status=304, headers=headers)
    body = found.data
    if found.gzipped is not None and _accepts_gzip():
        body, headers["Content-Encoding"] = found.gzipped, "gzip"
    return Response(body, status=200, content_type=found.content_type, headers=headers)


@bp.get("/")
async def index() -> Response:
    return serve("/")


@bp.get("/sw.js")
async def service_worker() -> Response:
    return serve("/sw.js")


@bp.get("/manifest.webmanifest")
async def manifest() -> Response:
    return serve("/manifest.webmanifest")


@bp.get("/app/<path:name>")
async def app_file(name: str) -> Response:
    return serve(APP_PREFIX + name)
