"""Comment tools: `comment_post`, `comment_list`, `comment_resolve`, `comment_delete`; thin adapters
over `hub.comments` (`hubcore.services.artifacts.comments`, where every rule lives). An artifact an
agent cannot see answers exactly as a missing one does."""

from __future__ import annotations

from typing import Any

from hubcore.services.artifacts.comments import CommentDelete, CommentList, CommentPost, CommentResolve
from hubmcp.context import CallContext
from hubmcp.tools.base import Tool, outputs

STR, INT, BOOL, NUM = {"type": "string"}, {"type": "integer"}, {"type": "boolean"}, {"type": "number"}
ANCHOR: dict[str, Any] = {
    "oneOf": [
        {"type": "null"},
        {
            "type": "object",
            "required": ["mode", "x", "y"],
            "properties": {"mode": {"const": "point"}, "x": NUM, "y": NUM},
        },
        {"type": "object", "required": ["mode", "quote"], "properties": {"mode": {"const": "text"}, "quote": STR}},
        {
            "type": "object",
            "required": ["mode", "file", "side", "line"],
            "properties": {
                "mode": {"const": "line"},
                "file": STR,
                "side": {"enum": ["old", "new"]},
                "line": INT,
                "end_line": INT,
            },
        },
    ]
}
COMMENT: dict[str, Any] = {
    "id": STR,
    "artifact_id": STR,
    "author": STR,
    "body": STR,
    "anchor": ANCHOR,
    "anchor_version": INT,
    "done": BOOL,
    "outdated": BOOL,
    "created_at": STR,
    "updated_at": STR,
}
COMMENT_REQUIRED = tuple(COMMENT)


async def comment_post(call: CallContext, req: CommentPost) -> dict[str, Any]:
    return await call.hub.comments.post(call.caller, req)


async def comment_list(call: CallContext, req: CommentList) -> dict[str, Any]:
    return await call.hub.comments.list(call.caller, req)


async def comment_resolve(call: CallContext, req: CommentResolve) -> dict[str, Any]:
    return await call.hub.comments.resolve(call.caller, req)


async def comment_delete(call: CallContext, req: CommentDelete) -> dict[str, Any]:
    return await call.hub.comments.delete(call.caller, req)


TOOLS = (
    Tool(
        name="comment_post",
        description=(
            "Comment on an artifact, optionally anchored to a point, a quote or a diff's lines "
            "(`{mode: 'line', file, side, line}`). The `delete_token`, "
            "returned once, lets you resolve or delete it later."
        ),
        input_model=CommentPost,
        output_schema=outputs({**COMMENT, "delete_token": STR}, COMMENT_REQUIRED),
        handler=comment_post,
    ),
    Tool(
        name="comment_list",
        description=("Comments on an artifact, oldest first; page on with `after` = `next_after`."),
        input_model=CommentList,
        output_schema=outputs(
            {
                "artifact_id": STR,
                "comments": {
                    "type": "array",
                    "items": {"type": "object", "properties": COMMENT, "required": list(COMMENT_REQUIRED)},
                },
                "truncated": BOOL,
                "next_after": {"type": ["string", "null"]},
            },
            ("artifact_id", "comments", "truncated", "next_after"),
        ),
        handler=comment_list,
        read_only=True,
    ),
    Tool(
        name="comment_resolve",
        description=("Mark a comment done, or reopen it with `done: false`."),
        input_model=CommentResolve,
        output_schema=outputs(COMMENT, COMMENT_REQUIRED),
        handler=comment_resolve,
    ),
    Tool(
        name="comment_delete",
        description=("Delete a comment (needs the project or the comment's `delete_token`)."),
        input_model=CommentDelete,
        output_schema=outputs({"ok": {"const": True}}, ("ok",)),
        handler=comment_delete,
    ),
)
