"""`/api/v1/artifacts/...` and `/api/v1/projects/:id/artifacts` (admin): artifact reads and delete,
share links, the viewer pass, comments.

Thin adapters over `hub.artifacts`, `hub.shares` and `hub.comments` (`hubcore.services.artifacts`):
each route gathers its members (the path's, the query string's, the body's) into the operation's
typed request. The query string reads as every route's does (`hubhttp.api.query`: `version` and
`limit` integers, `live` a flag); a parameter the route does not take, or one given twice, is
refused naming it. `/raw` answers the stored text as `text/plain`, or for a protected version
`{envelope, ciphertext}` as JSON.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from quart import Blueprint, Response

from hubcore.services.artifacts import ArtifactGet, ArtifactList, ArtifactRef
from hubcore.services.artifacts.comments import CommentDelete, CommentList, CommentPost, CommentResolve
from hubcore.services.artifacts.scripts import ScriptsRef, ScriptsSet
from hubcore.services.artifacts.shares import ShareRef
from hubcore.services.requests import parse
from hubhttp.api.query import merged, no_query
from hubhttp.api.query import query as shared_query
from hubhttp.context import caller, hub, json_body, json_response, no_content
from hubhttp.pages.markdown import render

bp = Blueprint("artifacts", __name__, url_prefix="/api/v1")


def query(*, renamed: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The query string typed as the artifact models take it; the models refuse unknown names."""
    return shared_query(integers=("version", "limit"), flags=("live",), renamed=renamed)


# -- artifacts -----------------------------------------------------------------------------------


@bp.get("/artifacts")
async def list_artifacts() -> Response:
    req = parse(ArtifactList, query(renamed={"project": "project_id"}))
    return json_response(await hub().artifacts.list(caller(), req))


@bp.get("/projects/<project_id>/artifacts")
async def project_artifacts(project_id: str) -> Response:
    req = parse(ArtifactList, merged({"project_id": project_id}, query()))
    return json_response(await hub().artifacts.list(caller(), req))


@bp.get("/artifacts/<artifact_id>")
async def get_artifact(artifact_id: str) -> Response:
    found = await hub().artifacts.get(caller(), parse(ArtifactGet, merged({"artifact_id": artifact_id}, query())))
    if found["kind"] == "markdown" and not found["protected"]:
        found = {**found, "rendered": render(found["content"]).html}
    return json_response(found)


@bp.get("/artifacts/<artifact_id>/versions")
async def artifact_versions(artifact_id: str) -> Response:
    no_query()
    return json_response(await hub().artifacts.versions(caller(), parse(ArtifactRef, {"artifact_id": artifact_id})))


@bp.get("/artifacts/<artifact_id>/live")
async def artifact_live(artifact_id: str) -> Response:
    no_query()
    return json_response(await hub().artifacts.live(caller(), parse(ArtifactRef, {"artifact_id": artifact_id})))


@bp.get("/artifacts/<artifact_id>/raw")
async def artifact_raw(artifact_id: str) -> Response:
    req = parse(ArtifactGet, merged({"artifact_id": artifact_id}, query()))
    content, envelope = await hub().artifacts.raw(caller(), req)
    if envelope is not None:
        return json_response({"envelope": envelope, "ciphertext": content})
    return Response(
        content, status=200, content_type="text/plain; charset=utf-8", headers={"X-Content-Type-Options": "nosniff"}
    )


@bp.delete("/artifacts/<artifact_id>")
async def delete_artifact(artifact_id: str) -> Response:
    no_query()
    return json_response(await hub().artifacts.delete(caller(), parse(ArtifactRef, {"artifact_id": artifact_id})))


# -- share links and the viewer pass ---------------------------------------------------------------


@bp.post("/artifacts/<artifact_id>/share")
async def create_share(artifact_id: str) -> Response:
    no_query()
    body = await json_body(default={})
    req = parse(ShareRef, merged({"artifact_id": artifact_id}, body))
    return json_response(await hub().shares.create(caller(), req), 201)


@bp.get("/artifacts/<artifact_id>/share")
async def get_share(artifact_id: str) -> Response:
    no_query()
    return json_response(await hub().shares.report(caller(), parse(ShareRef, {"artifact_id": artifact_id})))


@bp.delete("/artifacts/<artifact_id>/share")
async def revoke_share(artifact_id: str) -> Response:
    no_query()
    await hub().shares.revoke(caller(), parse(ShareRef, {"artifact_id": artifact_id}))
    return no_content()


@bp.get("/artifacts/<artifact_id>/viewer-pass")
async def viewer_pass(artifact_id: str) -> Response:
    no_query()
    found = await hub().shares.viewer_pass(caller(), parse(ShareRef, {"artifact_id": artifact_id}))
    return json_response(found, headers={"Cache-Control": "no-store"})


# -- scripts in an HTML artifact (off until the human turns them on) -------------------------------


@bp.get("/artifacts/<artifact_id>/scripts")
async def get_scripts(artifact_id: str) -> Response:
    no_query()
    return json_response(await hub().scripts.report(caller(), parse(ScriptsRef, {"artifact_id": artifact_id})))


@bp.put("/artifacts/<artifact_id>/scripts")
async def set_scripts(artifact_id: str) -> Response:
    no_query()
    req = parse(ScriptsSet, merged({"artifact_id": artifact_id}, await json_body()))
    return json_response(await hub().scripts.set(caller(), req))


# -- comments ------------------------------------------------------------------------------------


@bp.get("/artifacts/<artifact_id>/comments")
async def list_comments(artifact_id: str) -> Response:
    req = parse(CommentList, merged({"artifact_id": artifact_id}, query()))
    return json_response(await hub().comments.list(caller(), req))


@bp.post("/artifacts/<artifact_id>/comments")
async def post_comment(artifact_id: str) -> Response:
    no_query()
    req = parse(CommentPost, merged({"artifact_id": artifact_id}, await json_body()))
    return json_response(await hub().comments.post(caller(), req), 201)


@bp.patch("/artifacts/<artifact_id>/comments/<comment_id>")
async def resolve_comment(artifact_id: str, comment_id: str) -> Response:
    no_query()
    body = await json_body(default={})
    req = parse(CommentResolve, merged({"artifact_id": artifact_id, "comment_id": comment_id}, body))
    return json_response(await hub().comments.resolve(caller(), req))


@bp.delete("/artifacts/<artifact_id>/comments/<comment_id>")
async def delete_comment(artifact_id: str, comment_id: str) -> Response:
    no_query()
    body = await json_body(default={})
    req = parse(CommentDelete, merged({"artifact_id": artifact_id, "comment_id": comment_id}, body))
    return json_response(await hub().comments.delete(caller(), req))
