"""Knowledge base tools: thin adapters over `hub.kb` (`hubcore.services.kb`).

`brain_get`, `brain_list`, `brain_put` and `brain_delete` with `store: "project"` come here from
the session tools (`hubmcp.tools.sessions`), which own those tool names; `brain_promote`,
`brain_history` and `brain_revert` are this module's. The project is `project_id`, default the
connection's active session's project; read access to the project is the whole rule (the service
decides it, and a project the agent cannot see answers `forbidden` exactly as a missing one does,
`hubmcp.errors.agent_view`).
"""

from __future__ import annotations

from typing import Any

from hubcore.errors import HubError, invalid
from hubcore.services.brains import BrainDelete, BrainGet, BrainList, BrainPut, BrainRead
from hubcore.services.kb import models
from hubcore.services.kb.agent import BrainHistory, BrainPromote, BrainRevert
from hubcore.services.requests import parse
from hubmcp.context import CallContext
from hubmcp.tools.base import Tool, outputs
from hubmcp.tools.current import active

NO_PROJECT = "project_id: name the project (this connection has no active session whose project it could default to)"
NO_SESSION = (
    "no active session to promote from: pass session_id (the id session_start returned); a client "
    "that opens a new MCP session per call keeps no active session between calls"
)


async def project_of(call: CallContext, named: str | None) -> str:
    if named is not None:
        return named
    current = await active(call)
    if current is None:
        raise HubError("invalid_argument", NO_PROJECT, details={"field": "project_id"})
    return current[1]


def no_session(req: BrainRead | BrainPut) -> None:
    """A session names a session brain; the project's knowledge base is named by project_id."""
    if req.session is not None or req.session_id is not None:
        raise invalid(
            "session and session_id name a session brain; with store 'project' name the project by project_id",
            field="session",
        )


def paged(req: BrainRead | BrainPut, path: str | None) -> dict[str, Any]:
    no_session(req)
    return {"path": path} if path is not None else {}


async def project_get(call: CallContext, req: BrainGet) -> dict[str, Any]:
    members = paged(req, req.path)
    pid = await project_of(call, req.project_id)
    result = await call.hub.kb.read(call.caller, parse(models.KbRead, {**members, "project_id": pid}))
    return {**result, "store": "project", "project_id": pid}


async def project_list(call: CallContext, req: BrainList) -> dict[str, Any]:
    no_session(req)
    pid = await project_of(call, req.project_id)
    prefix = req.path or "/fs/"
    result = await call.hub.kb.list(call.caller, parse(models.KbList, {"project_id": pid, "prefix": prefix}))
    return {"path": prefix, **result, "store": "project", "project_id": pid}


async def project_put(call: CallContext, req: BrainPut) -> dict[str, Any]:
    members = paged(req, req.path)
    pid = await project_of(call, req.project_id)
    write = parse(models.KbWrite, {**members, "project_id": pid, "content": req.content, "if_version": req.if_version})
    return {**await call.hub.kb.write(call.caller, write), "store": "project", "project_id": pid}


async def project_delete(call: CallContext, req: BrainDelete) -> dict[str, Any]:
    members = paged(req, req.path)
    pid = await project_of(call, req.project_id)
    gone = parse(models.KbDelete, {**members, "project_id": pid, "if_version": req.if_version})
    return {**await call.hub.kb.delete(call.caller, gone), "store": "project", "project_id": pid}


async def brain_promote(call: CallContext, req: BrainPromote) -> dict[str, Any]:
    current = await active(call)
    session_id = req.session_id or (current[0] if current else None)
    if session_id is None:
        raise HubError("conflict", NO_SESSION)
    project_id = req.project_id or (current[1] if current else None)
    if project_id is None:
        raise HubError("invalid_argument", NO_PROJECT, details={"field": "project_id"})
    return await call.hub.kb.promote(call.caller, req.request(project_id, session_id))


async def brain_history(call: CallContext, req: BrainHistory) -> dict[str, Any]:
    pid = await project_of(call, req.project_id)
    return await call.hub.kb.versions(call.caller, req.request(pid))


async def brain_revert(call: CallContext, req: BrainRevert) -> dict[str, Any]:
    pid = await project_of(call, req.project_id)
    return await call.hub.kb.revert(call.caller, req.request(pid))


STR, INT, BOOL = {"type": "string"}, {"type": "integer"}, {"type": "boolean"}
NULL_STR, NULL_INT = {"type": ["string", "null"]}, {"type": ["integer", "null"]}
FINDING = {
    "type": "object",
    "required": ["code", "path", "message"],
    "properties": {"code": STR, "path": STR, "message": STR, "line": INT, "meta": {"type": "object"}},
}
LINT = {"type": "array", "items": FINDING, "description": "lint findings about the page (never fail a write)"}
VERSION_ROW = {
    "type": "object",
    "required": ["id", "op", "actor", "at", "version", "kept", "current"],
    "properties": {
        "id": INT,
        "op": {"enum": list(models.OPS)},
        "actor": STR,
        "at": STR,
        "version": NULL_STR,
        "size_bytes": NULL_INT,
        "summary": NULL_STR,
        "kept": BOOL,
        "current": BOOL,
    },
}

TOOLS = (
    Tool(
        name="brain_promote",
        description=(
            "Copy a brain entry into a knowledge page of the project, with frontmatter (`type`, "
            "`title`, `description`, `tags`, a source citing the session). Returns its version and lint "
            "findings."
        ),
        input_model=BrainPromote,
        output_schema=outputs({"ok": BOOL, "path": STR, "version": STR, "lint": LINT}, ("ok", "path", "version")),
        handler=brain_promote,
    ),
    Tool(
        name="brain_history",
        description=(
            "Versions of a knowledge page, newest first, deleted ones included (op, author, size, "
            "`kept`, `current`); page back with `before`."
        ),
        input_model=BrainHistory,
        output_schema=outputs(
            {
                "path": STR,
                "current_version": NULL_STR,
                "versions": {"type": "array", "items": VERSION_ROW},
                "total": INT,
                "next_before": NULL_INT,
                "truncated": BOOL,
            },
            ("path", "current_version", "versions", "total", "next_before", "truncated"),
        ),
        handler=brain_history,
        read_only=True,
    ),
    Tool(
        name="brain_revert",
        description=(
            "Write a kept version of a knowledge page back as a new write (restores a deleted page); "
            "`changed: false` when it is already current."
        ),
        input_model=BrainRevert,
        output_schema=outputs(
            {
                "ok": BOOL,
                "path": STR,
                "store": {"const": "project"},
                "version": STR,
                "size_bytes": INT,
                "lint": LINT,
                "warnings": {"type": "array", "items": STR},
                "changed": BOOL,
            },
            ("ok", "path", "store", "version", "changed"),
        ),
        handler=brain_revert,
    ),
)
