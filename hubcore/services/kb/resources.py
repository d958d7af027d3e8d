"""Knowledge base pages as read-only resources (spec "Resources"): `hub://kb/<project_id>/<path>`,
the page path without its leading slash, each segment percent-encoded.

- Listing: the pages of every project the caller can read, in project then path order, resumed
  after a given URI (the listing's cursor) so that a page of the listing costs one indexed range
  read per project file it touches, never a walk of everything before it. A knowledge base that is
  locked fails the listing with a retryable `unavailable` (the client retries with the same
  cursor); one that cannot be read at all (a damaged file) is skipped with a warning in the log.
- Reading: the `brain_get` project-store read (`KbService.read`: read access to the project is the
  whole rule). A `hub://kb/` URI that names no page (no path, a directory, a path the page rules
  refuse) is `invalid_argument`; a missing page is `not_found`.
"""

from __future__ import annotations

import logging
import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import quote, unquote

from hubcore.caller import Caller
from hubcore.errors import HubError, StoreBroken, StoreClosed
from hubcore.services import entries
from hubcore.services.access import visible_project_ids
from hubcore.services.core import Core
from hubcore.services.fields import PROJECT_ID_PATTERN
from hubcore.services.kb.files import KbFiles
from hubcore.services.kb.models import KbRead
from hubcore.services.kb.service import KbService
from hubcore.services.requests import parse
from hubcore.store.kb import TOP

log = logging.getLogger("hubcore.kb")

SCHEME = "hub://kb/"
TEMPLATE = SCHEME + "{project_id}/{+path}"


@dataclass(frozen=True)
class PageResource:
    project_id: str
    path: str

    @property
    def uri(self) -> str:
        return uri_of(self.project_id, self.path)

    @property
    def mime_type(self) -> str:
        return mime_type(self.path)


def uri_of(project_id: str, path: str) -> str:
    return SCHEME + project_id + "/" + "/".join(quote(s, safe="") for s in path.lstrip("/").split("/"))


def mime_type(path: str) -> str:
    return "text/markdown" if path.endswith(".md") else "text/plain"


def owns(uri: str) -> bool:
    return uri.startswith(SCHEME)


def parse_uri(uri: str) -> tuple[str, str]:
    """(project id, canonical page path) of a `hub://kb/` URI, or `invalid_argument` when it names
    no page."""
    project_id, _, rest = uri.removeprefix(SCHEME).partition("/")
    if not re.fullmatch(PROJECT_ID_PATTERN, project_id) or not rest:
        raise HubError("invalid_argument", "a knowledge base URI is hub://kb/<project_id>/fs/<page path>")
    try:
        segments = [unquote(s, errors="strict") for s in rest.split("/")]
    except UnicodeDecodeError:
        raise HubError("invalid_argument", "the URI's path is not percent-encoded UTF-8") from None
    if any("/" in s for s in segments):
        raise HubError("invalid_argument", "a path segment holds an encoded slash")
    return project_id, entries.page_path("/" + "/".join(segments))


class KbResources:
    """The resource view of every project's knowledge base."""

    def __init__(self, core: Core, files: KbFiles, kb: KbService) -> None:
        self.core, self.files, self.kb = core, files, kb

    async def read(self, caller: Caller, uri: str) -> tuple[str, str]:
        project_id, path = parse_uri(uri)
        page = await self.kb.read(caller, parse(KbRead, {"project_id": project_id, "path": path}))
        return str(page["content"]), mime_type(path)

    async def listing(self, caller: Caller, after: str | None, limit: int) -> Sequence[PageResource]:
        """Up to `limit` pages `caller` may read, after the page `after` names (a URI this
        listing gave; a page gone since is simply passed)."""
        start = _position(after)
        projects = await self.core.store.read(lambda conn: visible_project_ids(conn, caller))
        found: list[PageResource] = []
        for pid in projects:
            if len(found) >= limit:
                break
            if start is not None and pid < start[0]:
                continue
            since = start[1] if start is not None and pid == start[0] else ""
            found += await self._pages(pid, since, limit - len(found))
        return found

    async def _pages(self, project_id: str, after: str, limit: int) -> list[PageResource]:
        def read(conn: sqlite3.Connection) -> list[PageResource]:
            rows = conn.execute(
                "SELECT path FROM pages WHERE path > ? AND path < ? ORDER BY path LIMIT ?",
                (max(after, "/fs/"), "/fs/" + TOP, limit),
            )
            return [PageResource(project_id, str(r[0])) for r in rows]

        none: list[PageResource] = []
        try:
            return await self.files.read(project_id, read, none)
        except sqlite3.OperationalError as exc:
            if _locked(exc):
                raise HubError(
                    "unavailable",
                    f"the knowledge base of {project_id} is locked; list again with the same cursor",
                    retryable=True,
                ) from None
            return _skipped(project_id, exc)
        except (sqlite3.DatabaseError, StoreBroken, StoreClosed) as exc:
            return _skipped(project_id, exc)


def _position(after: str | None) -> tuple[str, str] | None:
    """Where a listing resumes: after (project, path) of the URI given; a URI that names no page
    (it was issued, so its project and path read) resumes at the start of its project."""
    if after is None:
        return None
    try:
        return parse_uri(after)
    except HubError:
        project_id = after.removeprefix(SCHEME).partition("/")[0]
        return project_id, ""


def _locked(exc: sqlite3.OperationalError) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def _skipped(project_id: str, exc: BaseException) -> list[PageResource]:
    log.warning("resources/list skipped the knowledge base of %s: it cannot be read (%s)", project_id, exc)
    return []
