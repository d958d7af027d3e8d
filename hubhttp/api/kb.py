"""`/api/v1/projects/:id/kb/...`: the knowledge base routes (admin; spec "Knowledge base routes").

Thin adapters over `hub.kb` (`hubcore.services.kb`): each route gathers its members (the path's,
the query string's, the body's), parses them into the operation's typed request and renders the
service's answer. In a URL a page path drops its leading slash and may omit `fs`
(`paths.from_url`); the `path` and `prefix` query parameters read the same way, so `/fs/a.md`,
`fs/a.md` and `a.md` all name one page. A query parameter the route does not take, or one given
twice (in the query twice, or in both the query and the body), is refused naming it.

A page write takes JSON `{content, if_version?}`, or the page itself as `text/markdown` or
`text/plain` (UTF-8) with `?if_version=`; the gate answers 415 for any other type, and a JSON body
that does not parse is 400 before anything is stored.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from quart import Blueprint, Response, request
from werkzeug.exceptions import MethodNotAllowed

from hubcore.errors import HubError
from hubcore.services.kb import frontmatter, models
from hubcore.services.kb.paths import RESERVED_FINAL, from_url
from hubcore.services.requests import Request, parse
from hubhttp.api.query import merged
from hubhttp.api.query import query as shared_query
from hubhttp.context import caller, hub, json_body, json_response
from hubhttp.pages.markdown import render

bp = Blueprint("kb", __name__, url_prefix="/api/v1/projects/<project_id>/kb")

TEXT_TYPES = ("text/markdown", "text/plain")


def query(*, flags: Iterable[str] = ()) -> dict[str, Any]:
    """The query string typed as the models take it (`hubhttp.api.query`: `limit` and `before`
    integers, `flags` booleans), page paths in their URL form made canonical; anything else stays
    a string for the model to judge (an unknown name is refused there)."""
    out = shared_query(integers=("limit", "before"), flags=flags)
    for name in ("path", "prefix"):
        if name in out:
            out[name] = from_url(out[name], allow_root=name == "prefix", field=name)
    return out


def page(project_id: str, path: str) -> dict[str, str]:
    """The members the URL names: the project, and the page path made canonical."""
    return {"project_id": project_id, "path": from_url(path)}


def not_an_action(path: str) -> None:
    """An address ending in an action's segment (`.../review`, `.../revert`) is the action's, which
    only POST serves: any other method is 405, never a read or write of a page of that name (no
    page may take one: `paths.require_writable`)."""
    if path.rstrip("/").rsplit("/", 1)[-1] in RESERVED_FINAL:
        raise MethodNotAllowed(valid_methods=["POST"])


def _media() -> str:
    return (request.content_type or "").split(";", 1)[0].strip().lower()


async def write_members() -> Mapping[str, Any]:
    """A page write's body: JSON members, or the page's own bytes as its `content`."""
    if _media() not in TEXT_TYPES:
        return await json_body()
    raw = await request.get_data(as_text=False)
    try:
        return {"content": raw.decode("utf-8") if isinstance(raw, bytes) else raw}
    except UnicodeDecodeError:
        raise HubError("invalid_argument", "the page is not UTF-8 text", details={"field": "content"}) from None


def typed(model: type[Request], *sources: Mapping[str, Any]) -> Any:
    return parse(model, merged(*sources))


# -- pages -------------------------------------------------------------------------------------


@bp.get("/pages")
async def list_pages(project_id: str) -> Response:
    req = typed(models.KbList, {"project_id": project_id}, query(flags=("meta",)))
    return json_response(await hub().kb.list(caller(), req))


@bp.get("/pages/<path:path>")
async def read_page(project_id: str, path: str) -> Response:
    """With `rendered=1` the answer also holds `rendered`: the markdown after the frontmatter block
    as HTML, by the hub's one renderer (raw HTML escaped, unsafe links refused), for the web app."""
    not_an_action(path)
    members = query(flags=("rendered",))
    want = members.pop("rendered", False)
    found = await hub().kb.read(caller(), typed(models.KbRead, page(project_id, path), members))
    if want:
        content = found["content"]
        found = {**found, "rendered": render(content[frontmatter.parse(content).body_offset :]).html}
    return json_response(found)


@bp.put("/pages/<path:path>")
async def write_page(project_id: str, path: str) -> Response:
    not_an_action(path)
    req = typed(models.KbWrite, page(project_id, path), query(), await write_members())
    return json_response(await hub().kb.write(caller(), req))


@bp.delete("/pages/<path:path>")
async def delete_page(project_id: str, path: str) -> Response:
    not_an_action(path)
    req = typed(models.KbDelete, page(project_id, path), query(), await json_body(default={}))
    return json_response(await hub().kb.delete(caller(), req))


@bp.route("/pages/<path:path>/review", methods=["GET", "PUT", "PATCH", "DELETE", "OPTIONS"])
@bp.route("/pages/<path:path>/revert", methods=["GET", "PUT", "PATCH", "DELETE", "OPTIONS"])
async def action_other_method(project_id: str, path: str) -> Response:
    """An action's address under any other method: 405 naming POST alone. Without this rule the
    router would offer the page routes' methods too (a page path can end anywhere), and a page of
    that name cannot exist (`paths.require_writable`). Not in the OpenAPI document: it serves nothing."""
    raise MethodNotAllowed(valid_methods=["POST"])


@bp.post("/pages/<path:path>/review")
async def review_page(project_id: str, path: str) -> Response:
    req = typed(models.KbReview, page(project_id, path), query(), await json_body(default={}))
    return json_response(await hub().kb.review(caller(), req))


@bp.post("/pages/<path:path>/revert")
async def revert_page(project_id: str, path: str) -> Response:
    req = typed(models.KbRevert, page(project_id, path), query(), await json_body())
    return json_response(await hub().kb.revert(caller(), req))


@bp.post("/promote")
async def promote(project_id: str) -> Response:
    req = typed(models.KbPromote, {"project_id": project_id}, query(), await json_body())
    return json_response(await hub().kb.promote(caller(), req))


# -- history -----------------------------------------------------------------------------------


@bp.get("/history")
async def history(project_id: str) -> Response:
    req = typed(models.KbHistory, {"project_id": project_id}, query())
    return json_response(await hub().kb.history(caller(), req))


@bp.get("/versions")
async def versions(project_id: str) -> Response:
    req = typed(models.KbVersions, {"project_id": project_id}, query())
    return json_response(await hub().kb.versions(caller(), req))


@bp.delete("/versions")
async def forget(project_id: str) -> Response:
    req = typed(models.KbForget, {"project_id": project_id}, query(), await json_body(default={}))
    return json_response(await hub().kb.forget(caller(), req))


# -- derived views -----------------------------------------------------------------------------


@bp.get("/backlinks")
async def backlinks(project_id: str) -> Response:
    req = typed(models.KbBacklinks, {"project_id": project_id}, query())
    return json_response(await hub().kb.backlinks(caller(), req))


@bp.get("/lint")
async def lint(project_id: str) -> Response:
    req = typed(models.KbLint, {"project_id": project_id}, query(flags=("fresh",)))
    return json_response(await hub().kb.lint(caller(), req))


@bp.get("/stats")
async def stats(project_id: str) -> Response:
    req = typed(models.KbProject, {"project_id": project_id}, query())
    return json_response(await hub().kb.stats(caller(), req))
