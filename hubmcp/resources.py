"""Resources (read-only views), the skills extension methods, and an empty prompt catalogue.

Listing order: `hub://skill` (bootstrap), the skill files, then each part's resources in the hub's
part order (`Part.resources`: the knowledge base part lists its pages there), 100 a page; a page
asks each part only for what it needs after the cursor (`Part.owns_resource` says whose it is).
Templates and reads are the parts' too: a feature absent from the hub serves no template and its
URIs are not found. `nextCursor` is the URI of the page's last
resource; only cursors this process issued are accepted (an unissued one is INVALID_PARAMS).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import mcp_types as types
import orjson
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from hubcore.errors import HubError
from hubcore.parts.protocol import Part
from hubmcp import skills
from hubmcp.context import CallContext
from hubmcp.errors import agent_view, resource_missing, to_mcp_error

PAGE_SIZE = 100
BOOTSTRAP_URI = "hub://skill"
MAX_ISSUED_CURSORS = 10_000

# Conformance fixtures (tools/mcp-conformance only; off unless the app is built with them).
FIXTURE_TEXT_URI = "test://static-text"
FIXTURE_TEMPLATE = "test://template/{id}/data"


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
        out = [
            types.Resource(
                uri=BOOTSTRAP_URI,
                name="hub-bootstrap",
                title="Agent Hub bootstrap guide",
                description="How to connect to this hub and where to start",
                mime_type="text/markdown",
            )
        ]
        for f in sorted(self.skill.files, key=lambda f: (f.path != "SKILL.md", f.path)):
            is_root = f.path == "SKILL.md"
            out.append(
                types.Resource(
                    uri=f.uri,
                    name=entry.get("name", "hub") if is_root else f.path,
                    title=f.title,
                    description=entry.get("description", "") if is_root else f"Agent Hub guide: {f.title}",
                    mime_type=f.mime_type,
                    size=f.size,
                )
            )
        return out

    async def _from_parts(self, call: CallContext, after: str | None, want: int) -> list[types.Resource]:
        """Up to `want` of the parts' resources, resuming after `after` (a URI some part owns;
        None: from the first part's start). Each part reads only the page it is asked for."""
        parts = list(call.hub.core.parts)
        first = next((i for i, p in enumerate(parts) if after is not None and p.owns_resource(after)), None)
        if after is not None and first is None:
            return []  # an issued cursor no part owns any more: nothing follows it
        found: list[types.Resource] = []
        for index, part in enumerate(parts):
            if len(found) >= want or (first is not None and index < first):
                continue
            resume = after if index == first else None
            for r in await part.resources(call.caller, resume, want - len(found)):
                found.append(types.Resource(uri=r.uri, name=r.name, mime_type=r.mime_type))
        return found

    async def list(self, call: CallContext, cursor: str | None) -> types.ListResourcesResult:
        if cursor is not None and cursor not in self.cursors:
            raise MCPError(
                code=INVALID_PARAMS,
                message="invalid_argument: unknown cursor; list from the start",
                data={
                    "error": {
                        "code": "invalid_argument",
                        "message": "unknown cursor",
                        "retryable": False,
                        "details": {},
                    }
                },
            )
        static = self._static()
        uris = [str(r.uri) for r in static]
        if cursor is None:
            page, after = static, None
        elif cursor in uris:
            page, after = static[uris.index(cursor) + 1 :], None
        else:
            page, after = [], cursor
        page = page[: PAGE_SIZE + 1]
        page += await self._from_parts(call, after, PAGE_SIZE + 1 - len(page))
        more = len(page) > PAGE_SIZE
        page = page[:PAGE_SIZE]
        next_cursor = self.cursors.issue(str(page[-1].uri)) if more and page else None
        return types.ListResourcesResult(resources=page, next_cursor=next_cursor)

    def templates(self, parts: Sequence[Part]) -> types.ListResourceTemplatesResult:
        out = [
            types.ResourceTemplate(
                uri_template=t.uri_template,
                name=t.name,
                title=t.title or None,
                description=t.description or None,
                mime_type=t.mime_type,
            )
            for part in parts
            for t in part.resource_templates()
        ]
        if self.fixtures:
            out.append(types.ResourceTemplate(uri_template=FIXTURE_TEMPLATE, name="conformance-template"))
        return types.ListResourceTemplatesResult(resource_templates=out)

    # -- reading ---------------------------------------------------------------------------------

    async def read(self, call: CallContext, uri: str) -> types.ReadResourceResult:
        if uri == BOOTSTRAP_URI:
            # Standalone stdio has no origin: it names the configured public address if there is
            # one, else none at all (the bind address is where nothing listens).
            origin = call.origin or call.hub.settings.public_url
            text = self.skill.bootstrap(origin) if origin else self.skill.bootstrap_standalone()
            return _text(uri, text, "text/markdown")
        if uri.startswith(skills.SKILL_ROOT + "/") or uri == skills.SKILL_ROOT:
            f = self.skill.file_for(uri)
            if f is None:
                raise resource_missing(uri)
            return _text(uri, f.text, f.mime_type)
        for part in call.hub.core.parts:
            got = await _read_from(part, call, uri)
            if got is not None:
                return got
        if self.fixtures:
            fixture = _fixture(uri)
            if fixture is not None:
                return fixture
        raise resource_missing(uri)

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
            raise MCPError(
                code=INVALID_PARAMS, message=f"{uri} is not a directory this server serves", data={"uri": uri}
            )
        children = self.skill.children(rel)
        start = 0
        if cursor:
            uris = [c["uri"] for c in children]
            if cursor not in uris:
                raise MCPError(code=INVALID_PARAMS, message="unknown cursor", data={"uri": uri})
            start = uris.index(cursor) + 1
        page = children[start : start + PAGE_SIZE]
        result: dict[str, Any] = {"resources": page}
        if start + PAGE_SIZE < len(children):
            result["nextCursor"] = page[-1]["uri"]
        return result


async def _read_from(part: Part, call: CallContext, uri: str) -> types.ReadResourceResult | None:
    """The part's answer for `uri`: None when the URI is not the part's."""
    try:
        got = await part.read_resource(call.caller, uri)
    except HubError as err:
        err = agent_view(err, call.caller)  # a project an agent cannot see: forbidden, as a missing one
        if err.code == "not_found":
            raise resource_missing(uri, err.message) from None
        raise to_mcp_error(err, uri=uri) from None
    return None if got is None else _text(uri, got[0], got[1])


def _text(uri: str, text: str, mime: str) -> types.ReadResourceResult:
    return types.ReadResourceResult(contents=[types.TextResourceContents(uri=uri, mime_type=mime, text=text)])


def _fixture(uri: str) -> types.ReadResourceResult | None:
    if uri == FIXTURE_TEXT_URI:
        return _text(uri, "This is the content of the static text resource.", "text/plain")
    prefix, suffix = "test://template/", "/data"
    if uri.startswith(prefix) and uri.endswith(suffix) and len(uri) > len(prefix) + len(suffix):
        ident = uri[len(prefix) : -len(suffix)]
        body = orjson.dumps({"id": ident, "templateTest": True, "data": f"Data for ID: {ident}"}).decode()
        return _text(uri, body, "application/json")
    return None
