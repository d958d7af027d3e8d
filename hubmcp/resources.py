"""Resources (read-only views), the skills extension methods, and an empty prompt catalogue.

Listing order: `hub://skill` (bootstrap), the skill files, then knowledge base pages of readable
projects in project and path order, 100 a page. `nextCursor` is the URI of the page's last
resource; only cursors this process issued are accepted (an unissued one is INVALID_PARAMS).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote, unquote

import mcp_types as types
import orjson
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from hubcore.errors import HubError
from hubmcp import skills
from hubmcp.context import CallContext
from hubmcp.errors import resource_invalid, resource_missing, to_mcp_error

PAGE_SIZE = 100
BOOTSTRAP_URI = "hub://skill"
KB_PREFIX = "hub://kb/"
KB_TEMPLATE = "hub://kb/{project_id}/{+path}"
MAX_ISSUED_CURSORS = 10_000

# Conformance fixtures (tools/mcp-conformance only; off unless the app is built with them).
FIXTURE_TEXT_URI = "test://static-text"
FIXTURE_TEMPLATE = "test://template/{id}/data"


def kb_uri(project_id: str, path: str) -> str:
    return KB_PREFIX + project_id + "/" + "/".join(quote(seg, safe="") for seg in path.lstrip("/").split("/"))


def parse_kb_uri(uri: str) -> tuple[str, str]:
    """(project_id, page path) of a `hub://kb/` URI; INVALID_PARAMS when it names no page."""
    rest = uri[len(KB_PREFIX):]
    project_id, _, raw_path = rest.partition("/")
    segments = [unquote(s) for s in raw_path.split("/")] if raw_path else []
    if not project_id or not segments or not all(segments) or segments[0] != "fs" or len(segments) < 2:
        raise resource_invalid(uri, "a hub://kb/ URI names a page as hub://kb/<project_id>/fs/<path>")
    return unquote(project_id), "/" + "/".join(segments)


class IssuedCursors:
    def __init__(self, limit: int = MAX_ISSUED_CURSORS) -> None:
        self._seen: OrderedDict[str, None] = OrderedDict()
        self._limit = limit

    def issue(self, cursor: str) -> str:
        self._seen[cursor] = None
        self._seen.move_to_end(cursor)
        while len(self._seen) > self._limit:
            self._seen.popitem(last=False)
        return cursor

    def __contains__(self, cursor: str) -> bool:
        return cursor in self._seen


class Resources:
    def __init__(self, *, fixtures: bool = False) -> None:
        self.skill = skills.load()
        self.cursors = IssuedCursors()
        self.fixtures = fixtures

    # -- listing ---------------------------------------------------------------------------------

    def _static(self) -> list[types.Resource]:
        entry = self.skill.frontmatter
        out = [types.Resource(
            uri=BOOTSTRAP_URI, name="hub-bootstrap", title="Agent Hub bootstrap guide",
            description="How to connect to this hub and where to start", mime_type="text/markdown",
        )]
        for f in sorted(self.skill.files, key=lambda f: (f.path != "SKILL.md", f.path)):
            is_root = f.path == "SKILL.md"
            out.append(types.Resource(
                uri=f.uri,
                name=entry.get("name", "hub") if is_root else f.path,
                title=f.title,
                description=entry.get("description", "") if is_root else f"Agent Hub guide: {f.title}",
                mime_type=f.mime_type,
                size=f.size,
            ))
        return out

    async def _kb(self, call: CallContext) -> Iterator[types.Resource]:
        kb = getattr(call.hub, "kb", None)
        lister = getattr(kb, "resource_pages", None)
        if lister is None:
            return iter(())
        found: list[types.Resource] = []
        for project in await call.hub.projects.list(call.caller):
            for path in await lister(call.caller, project["id"]):
                found.append(types.Resource(
                    uri=kb_uri(project["id"], path), name=f"{project['id']}:{path}",
                    mime_type="text/markdown" if path.endswith(".md") else "text/plain",
                ))
        return iter(found)

    async def list(self, call: CallContext, cursor: str | None) -> types.ListResourcesResult:
        if cursor is not None and cursor not in self.cursors:
            raise MCPError(code=INVALID_PARAMS, message="invalid_argument: unknown cursor; list from the start",
                           data={"error": {"code": "invalid_argument", "message": "unknown cursor",
                                           "retryable": False, "details": {}}})
        every = [*self._static(), *await self._kb(call)]
        start = 0
        if cursor is not None:
            uris = [r.uri for r in every]
            start = next((i + 1 for i, u in enumerate(uris) if u == cursor), None) or _after(uris, cursor)
        page = every[start:start + PAGE_SIZE]
        more = start + PAGE_SIZE < len(every)
        next_cursor = self.cursors.issue(str(page[-1].uri)) if more and page else None
        return types.ListResourcesResult(resources=page, next_cursor=next_cursor)

    def templates(self) -> types.ListResourceTemplatesResult:
        out = [types.ResourceTemplate(
            uri_template=KB_TEMPLATE, name="knowledge-base-page", title="Knowledge base page",
            description="A project's knowledge base page by path under /fs/ (segments percent-encoded)",
            mime_type="text/markdown",
        )]
        if self.fixtures:
            out.append(types.ResourceTemplate(uri_template=FIXTURE_TEMPLATE, name="conformance-template"))
        return types.ListResourceTemplatesResult(resource_templates=out)

    # -- reading ---------------------------------------------------------------------------------

    async def read(self, call: CallContext, uri: str) -> types.ReadResourceResult:
        if uri == BOOTSTRAP_URI:
            origin = call.origin or call.hub.settings.public_url or f"http://{call.hub.settings.bind}"
            return _text(uri, self.skill.bootstrap(origin), "text/markdown")
        if uri.startswith(skills.SKILL_ROOT + "/") or uri == skills.SKILL_ROOT:
            f = self.skill.file_for(uri)
            if f is None:
                raise resource_missing(uri)
            return _text(uri, f.text, f.mime_type)
        if uri.startswith(KB_PREFIX):
            return await self._read_kb(call, uri)
        if self.fixtures:
            fixture = _fixture(uri)
            if fixture is not None:
                return fixture
        raise resource_missing(uri)

    async def _read_kb(self, call: CallContext, uri: str) -> types.ReadResourceResult:
        project_id, path = parse_kb_uri(uri)
        try:
            await call.hub.projects.get(call.caller, project_id)
        except HubError as err:
            if err.code != "not_found":
                raise to_mcp_error(err, uri=uri) from None
            # Resources answer a missing or unreadable project as `forbidden`, the same for both.
            raise to_mcp_error(HubError("forbidden", f"project {project_id!r} is not readable"),
                               uri=uri) from None
        reader = getattr(getattr(call.hub, "kb", None), "resource_read", None)
        if reader is None:
            raise resource_missing(uri, f"no page {path} in project {project_id!r}")
        try:
            text = await reader(call.caller, project_id, path)
        except HubError as err:
            if err.code == "not_found":
                raise resource_missing(uri, err.message) from None
            raise to_mcp_error(err, uri=uri) from None
        return _text(uri, text, "text/markdown" if path.endswith(".md") else "text/plain")

    # -- skills extension ------------------------------------------------------------------------

    def skills_list(self) -> dict[str, Any]:
        return {"skills": [self.skill.entry()]}

    def skills_get(self, uri: str) -> dict[str, Any]:
        if uri not in (skills.SKILL_MD_URI, skills.SKILL_ROOT, skills.SKILL_ROOT + "/"):
            raise MCPError(code=INVALID_PARAMS, message=f"no skill at {uri}", data={"uri": uri})
        return {"skill": self.skill.entry()}

    def directory_read(self, uri: str, cursor: str | None) -> dict[str, Any]:
        rel = self.skill.directory_path(uri)
        if rel is None:
            raise MCPError(code=INVALID_PARAMS, message=f"{uri} is not a directory this server serves",
                           data={"uri": uri})
        children = self.skill.children(rel)
        start = 0
        if cursor:
            uris = [c["uri"] for c in children]
            if cursor not in uris:
                raise MCPError(code=INVALID_PARAMS, message="unknown cursor", data={"uri": uri})
            start = uris.index(cursor) + 1
        page = children[start:start + PAGE_SIZE]
        result: dict[str, Any] = {"resources": page}
        if start + PAGE_SIZE < len(children):
            result["nextCursor"] = page[-1]["uri"]
        return result


def _after(uris: list[str], cursor: str) -> int:
    """Where to resume after an issued cursor whose resource is gone: the first URI past it."""
    return next((i for i, u in enumerate(uris) if u > cursor), len(uris))


def _text(uri: str, text: str, mime: str) -> types.ReadResourceResult:
    return types.ReadResourceResult(contents=[types.TextResourceContents(uri=uri, mime_type=mime, text=text)])


def _fixture(uri: str) -> types.ReadResourceResult | None:
    if uri == FIXTURE_TEXT_URI:
        return _text(uri, "This is the content of the static text resource.", "text/plain")
    prefix, suffix = "test://template/", "/data"
    if uri.startswith(prefix) and uri.endswith(suffix) and len(uri) > len(prefix) + len(suffix):
        ident = uri[len(prefix):-len(suffix)]
        body = orjson.dumps({"id": ident, "templateTest": True, "data": f"Data for ID: {ident}"}).decode()
        return _text(uri, body, "application/json")
    return None
