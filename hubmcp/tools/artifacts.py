"""Artifact tools: thin adapters over `hub.artifacts` (`hubcore.services.artifacts`).

`artifact_publish`, `artifact_update` and `artifact_draft` are made in the connection's active
session unless the call names a `session_id`. An artifact an agent cannot see answers `forbidden`
exactly as a missing one does (`hubmcp.errors.agent_view`). A `password` argument never reaches
this module: the stdio bridge and `hub-cli call` turn it into ciphertext and an `envelope` on the
agent's machine (`hubmcp/protect.py`).
"""

from __future__ import annotations

from typing import Any, TypeVar

from hubcore.services.artifacts import (
    ArtifactDraft,
    ArtifactGet,
    ArtifactList,
    ArtifactPublish,
    ArtifactRef,
    ArtifactUpdate,
)
from hubmcp.context import CallContext
from hubmcp.tools.base import Tool, outputs

W = TypeVar("W", ArtifactPublish, ArtifactUpdate, ArtifactDraft)


def in_session(call: CallContext, req: W) -> W:
    """The write with its session: the one it names, else the connection's active session."""
    if req.session_id is not None or call.connection is None:
        return req
    active = call.sessions.get(call.connection)
    return req if active is None else req.model_copy(update={"session_id": active})


async def artifact_publish(call: CallContext, req: ArtifactPublish) -> dict[str, Any]:
    return await call.hub.artifacts.publish_artifact(call.caller, in_session(call, req))


async def artifact_update(call: CallContext, req: ArtifactUpdate) -> dict[str, Any]:
    return await call.hub.artifacts.update(call.caller, in_session(call, req))


async def artifact_draft(call: CallContext, req: ArtifactDraft) -> dict[str, Any]:
    return await call.hub.artifacts.draft(call.caller, in_session(call, req))


async def artifact_get(call: CallContext, req: ArtifactGet) -> dict[str, Any]:
    return await call.hub.artifacts.get(call.caller, req)


async def artifact_versions(call: CallContext, req: ArtifactRef) -> dict[str, Any]:
    return await call.hub.artifacts.versions(call.caller, req)


async def artifact_list(call: CallContext, req: ArtifactList) -> dict[str, Any]:
    return await call.hub.artifacts.list(call.caller, req)


async def artifact_delete(call: CallContext, req: ArtifactRef) -> dict[str, Any]:
    return await call.hub.artifacts.delete(call.caller, req)


STR, INT, BOOL = {"type": "string"}, {"type": "integer"}, {"type": "boolean"}
NULL_STR, NULL_INT = {"type": ["string", "null"]}, {"type": ["integer", "null"]}
ENVELOPE = {"type": ["object", "null"], "description": "the protected version's envelope (null when public)"}
SUMMARY_MEMBERS: dict[str, Any] = {
    "id": STR,
    "project_id": STR,
    "title": STR,
    "kind": {"enum": ["html", "markdown", "diff"]},
    "description": STR,
    "actor": NULL_STR,
    "session_id": NULL_STR,
    "version": INT,
    "label": NULL_STR,
    "size_bytes": INT,
    "protected": BOOL,
    "live_version": NULL_INT,
    "comments_count": INT,
    "comments_open": INT,
    "created_at": STR,
    "updated_at": STR,
}
SUMMARY = {"type": "object", "properties": SUMMARY_MEMBERS, "required": list(SUMMARY_MEMBERS)}
VERSION = {
    "type": "object",
    "required": ["version", "size_bytes", "protected", "live", "created_at"],
    "properties": {
        "version": INT,
        "label": NULL_STR,
        "size_bytes": INT,
        "protected": BOOL,
        "actor": NULL_STR,
        "session_id": NULL_STR,
        "live": BOOL,
        "created_at": STR,
        "updated_at": STR,
    },
}
DIFF = {
    "type": ["object", "null"],
    "description": "a diff's summary: files [{path, old_path, status, added, "
    "removed, hunks, binary}], added, removed, hunks",
}
WROTE = outputs({"artifact_id": STR, "version": INT}, ("artifact_id", "version"))
TOOLS = (
    Tool(
        name="artifact_publish",
        description=(
            "Publish HTML, markdown or a unified `diff` (git diff) for the human as a new artifact. "
            "Protect HTML or markdown with a `password` (hub-cli, stdio) or ciphertext and `envelope` "
            "(guide: Artifacts)."
        ),
        input_model=ArtifactPublish,
        output_schema=WROTE,
        handler=artifact_publish,
    ),
    Tool(
        name="artifact_update",
        description=(
            "Add a version. Give `base_version`: a newer one is a conflict unless `force`. A protected "
            "artifact needs the new `envelope`; `envelope: null` makes it public."
        ),
        input_model=ArtifactUpdate,
        output_schema=WROTE,
        handler=artifact_update,
    ),
    Tool(
        name="artifact_draft",
        description=(
            "Edit the next version live (the human's open page follows); artifact_update seals it. "
            "Returns `viewer_url`."
        ),
        input_model=ArtifactDraft,
        output_schema=outputs(
            {"artifact_id": STR, "live_version": INT, "live_rev": INT, "viewer_url": STR},
            ("artifact_id", "live_version", "live_rev", "viewer_url"),
        ),
        handler=artifact_draft,
    ),
    Tool(
        name="artifact_get",
        description=(
            "An artifact with one version's content: the current one, `version`, or the `live` one; "
            "a diff's `diff` summary."
        ),
        input_model=ArtifactGet,
        output_schema=outputs(
            {**SUMMARY_MEMBERS, "envelope": ENVELOPE, "content": STR, "live": BOOL, "live_rev": INT, "diff": DIFF},
            (*SUMMARY_MEMBERS, "envelope", "content"),
        ),
        handler=artifact_get,
        read_only=True,
    ),
    Tool(
        name="artifact_versions",
        description="Every version of an artifact, oldest first.",
        input_model=ArtifactRef,
        output_schema=outputs(
            {"artifact_id": STR, "versions": {"type": "array", "items": VERSION}}, ("artifact_id", "versions")
        ),
        handler=artifact_versions,
        read_only=True,
    ),
    Tool(
        name="artifact_list",
        description="Artifacts you can see, newest updated first: of one project, one session, or all; "
        "more with `cursor` (`next_cursor`).",
        input_model=ArtifactList,
        # next_cursor (a string, null on the last page) is named by `required` only (docs/decisions.md, issue 27)
        output_schema=outputs({"artifacts": {"type": "array", "items": SUMMARY}}, ("artifacts", "next_cursor")),
        handler=artifact_list,
        read_only=True,
    ),
    Tool(
        name="artifact_delete",
        description="Delete an artifact with all its versions and comments.",
        input_model=ArtifactRef,
        output_schema=outputs({"ok": BOOL}, ("ok",)),
        handler=artifact_delete,
    ),
)
