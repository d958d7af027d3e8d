"""Session and brain tools: thin adapters over `hub.sessions`, `hub.brief` and `hub.brains`.

The connection's active session (see `hubmcp.active`) is set by `session_start` and cleared by
`session_end`; brain writes with no `session` named go to it, and every tool call made while it is
set is recorded in its brain for replay.
"""

from __future__ import annotations

from typing import Any

from hubcore.errors import HubError
from hubmcp.context import CallContext
from hubmcp.tools.base import PROJECT_ID, Tool, inputs, outputs

SESSION_REF: dict[str, Any] = {
    "description": "a session: its id, or {session_id}, or {agent, name, project_id} "
                   "(project_id defaults to your active session's project)",
    "oneOf": [
        {"type": "string", "minLength": 1},
        {"type": "object", "properties": {"session_id": {"type": "string"}}, "required": ["session_id"],
         "additionalProperties": False},
        {"type": "object", "properties": {"agent": {"type": "string"}, "name": {"type": "string"},
                                          "project_id": PROJECT_ID},
         "required": ["agent", "name"], "additionalProperties": False},
    ],
}
PATH = {"type": "string", "minLength": 1, "maxLength": 2048,
        "description": "/fs/<file path> or /kv/<key>; canonicalised (., .., trailing slash)"}
STORE_READ = {"enum": ["session", "project"], "default": "session",
              "description": "session brain (default) or the project knowledge base"}
STORE_WRITE = {"enum": ["session", "project"], "description": "required: session brain or project knowledge base"}
IF_VERSION = {"type": "string", "description": "write only if the stored version is this sha256:..., "
                                               "or 'absent' to create only"}
NULLABLE = {"type": ["string", "null"]}


async def active(call: CallContext) -> tuple[str, str] | None:
    """The connection's active session as (id, project), or None; a vanished one is forgotten."""
    sid = call.sessions.get(call.connection)
    if sid is None:
        return None
    try:
        row = await call.hub.sessions.get(call.caller, sid)
    except HubError:
        call.sessions.clear(call.connection)
        return None
    if row["status"] != "active" or row["owner"] != call.caller.actor:
        call.sessions.clear(call.connection)
        return None
    return sid, str(row["project_id"])


async def record(call: CallContext, tool: str, arguments: dict[str, Any], outcome: str) -> None:
    """Record a tool call in the active session's brain (replay); best effort, never fails a call."""
    current = call.sessions.get(call.connection)
    if current is None:
        return
    try:
        await call.hub.brains.record_call(current, tool, arguments, outcome)
        await call.hub.sessions.touch(current)
    except HubError:
        return


def session_arg(args: dict[str, Any]) -> Any:
    """`session`, with a top-level `project_id` filling in an {agent, name} reference's project."""
    ref = args.get("session")
    if isinstance(ref, dict) and "agent" in ref and "project_id" not in ref and args.get("project_id"):
        return {**ref, "project_id": args["project_id"]}
    return ref


async def session_start(call: CallContext, args: dict[str, Any]) -> dict[str, Any]:
    result = await call.hub.sessions.start(call.caller, args.get("project_id"), args.get("name"), args.get("from"))
    call.sessions.set(call.connection, result["session_id"])
    return result


async def session_end(call: CallContext, args: dict[str, Any]) -> dict[str, Any]:
    sid = args.get("session_id") or call.sessions.get(call.connection)
    if sid is None:
        raise HubError("conflict", "no active session to end: name session_id or call session_start first")
    result = await call.hub.sessions.end(call.caller, sid, args.get("handoff"))
    await record(call, "session_end", args, "ok")  # recorded here: the session stops being active below
    call.sessions.forget_session(sid)
    return result


async def session_list(call: CallContext, args: dict[str, Any]) -> dict[str, Any]:
    return await call.hub.sessions.list(call.caller, args.get("project_id"), args.get("limit", 200))


async def session_brief(call: CallContext, args: dict[str, Any]) -> dict[str, Any]:
    return await call.hub.brief.brief(call.caller, args.get("project_id"))


async def brain_get(call: CallContext, args: dict[str, Any]) -> dict[str, Any]:
    return await call.hub.brains.read_entry(call.caller, path=args.get("path"), session=session_arg(args),
                                            store=args.get("store"), active=await active(call))


async def brain_list(call: CallContext, args: dict[str, Any]) -> dict[str, Any]:
    return await call.hub.brains.list_entries(call.caller, path=args.get("path", "/fs/"),
                                              session=session_arg(args), store=args.get("store"),
                                              active=await active(call))


async def brain_put(call: CallContext, args: dict[str, Any]) -> dict[str, Any]:
    return await call.hub.brains.write_entry(call.caller, path=args.get("path"), value=args.get("value"),
                                             store=args.get("store"), session=session_arg(args),
                                             if_version=args.get("if_version"), active=await active(call))


async def brain_delete(call: CallContext, args: dict[str, Any]) -> dict[str, Any]:
    return await call.hub.brains.delete_entry(call.caller, path=args.get("path"), store=args.get("store"),
                                              session=session_arg(args), if_version=args.get("if_version"),
                                              active=await active(call))


SESSION_OUT = {
    "session_id": {"type": "string"}, "project_id": {"type": "string"}, "name": {"type": "string"},
    "owner": {"type": "string"}, "status": {"enum": ["active", "ended"]},
    "started": {"enum": ["created", "resumed", "adopted", "forked"]},
    "namespaces": {"type": "array", "items": {"type": "string"}},
    "recovery_path": {"type": "string"}, "handoff": NULLABLE, "previous_owner": NULLABLE,
    "lineage": {"type": ["object", "null"]}, "brain_bytes": {"type": ["integer", "null"]},
}
ENTRY_OUT = {"path": {"type": "string"}, "type": {"enum": ["key", "file"]}, "content": {"type": "string"},
             "version": {"type": "string"}, "size_bytes": {"type": "integer"}, "written_at": NULLABLE,
             "session_id": {"type": "string"}}
WRITE_OUT = {"ok": {"type": "boolean"}, "path": {"type": "string"}, "version": {"type": "string"},
             "size_bytes": {"type": "integer"}, "warnings": {"type": "array", "items": {"type": "string"}},
             "session_id": {"type": "string"}}

TOOLS = (
    Tool(
        name="session_start",
        title="Start or resume a session",
        description=(
            "Register or resume your session in a project by name (idempotent on the name). With `from` "
            "(a session id, or {agent, name}) you adopt an ended session (same id, brain and handoff; "
            "ownership moves to you) or fork a running one (a new session with a copy of its brain); "
            "`started` says which. The session becomes this connection's active session: brain writes "
            "go to it and your tool calls are recorded in it. Call session_brief first."
        ),
        input_schema=inputs({"project_id": PROJECT_ID,
                             "name": {"type": "string", "minLength": 1, "maxLength": 100},
                             "from": SESSION_REF}, ("project_id", "name")),
        output_schema=outputs(SESSION_OUT, ("session_id", "owner", "status", "started", "namespaces",
                                            "recovery_path")),
        handler=session_start,
    ),
    Tool(
        name="session_end",
        title="End a session",
        description=("End your active session (or `session_id`), leaving a handoff note of at most 4096 "
                     "characters for whoever continues. Owner or admin only. Its brain stays readable "
                     "until the human prunes it."),
        input_schema=inputs({"session_id": {"type": "string"},
                             "handoff": {"type": "string", "maxLength": 4096}}),
        output_schema=outputs({"id": {"type": "string"}, "status": {"type": "string"},
                               "handoff": NULLABLE}, ("id", "status")),
        handler=session_end,
    ),
    Tool(
        name="session_list",
        title="List sessions",
        description=("Sessions in the projects you can read (optionally one project), most recently "
                     "active first, at most 200: owner, status, handoff (cut to 200 characters), lineage, "
                     "brain size."),
        input_schema=inputs({"project_id": PROJECT_ID, "limit": {"type": "integer", "minimum": 1, "maximum": 200}}),
        output_schema=outputs({"sessions": {"type": "array", "items": {"type": "object"}},
                               "truncated": {"type": "boolean"}}, ("sessions", "truncated")),
        handler=session_list,
        read_only=True,
    ),
    Tool(
        name="session_brief",
        title="Brief before starting",
        description=("What to know before you start work in a project: answers to your questions and "
                     "approvals, your previous session and its handoff, the events since you last read "
                     "the feed (open items first, others' work before your own), and stale knowledge "
                     "pages. Pointers only; moves no cursor."),
        input_schema=inputs({"project_id": PROJECT_ID}, ("project_id",)),
        output_schema=outputs({"project_id": {"type": "string"}, "since": {"type": "object"},
                               "answers": {"type": "object"}, "previous_session": {"type": ["object", "null"]},
                               "events": {"type": "object"}, "stale_pages": {"type": "object"}},
                              ("since", "answers", "previous_session", "events", "stale_pages")),
        handler=session_brief,
        read_only=True,
    ),
    Tool(
        name="brain_get",
        title="Read a brain entry",
        description=("Read one entry of a session brain: yours by default, or any session you can read "
                     "(`session`). Returns its content and `version` (sha256:...) for conditional writes."),
        input_schema=inputs({"path": PATH, "store": STORE_READ, "session": SESSION_REF,
                             "project_id": PROJECT_ID}, ("path",)),
        output_schema=outputs(ENTRY_OUT, ("path", "content", "version")),
        handler=brain_get,
        read_only=True,
    ),
    Tool(
        name="brain_list",
        title="List a brain directory",
        description="One directory level of a session brain (at most 500 entries; `truncated` says if more).",
        input_schema=inputs({"path": PATH, "store": STORE_READ, "session": SESSION_REF,
                             "project_id": PROJECT_ID}),
        output_schema=outputs({"path": {"type": "string"}, "entries": {"type": "array"},
                               "truncated": {"type": "boolean"}}, ("path", "entries", "truncated")),
        handler=brain_list,
        read_only=True,
    ),
    Tool(
        name="brain_put",
        title="Write a brain entry",
        description=("Write text (at most 4 MiB) at a path of your running session's brain: /fs/ for "
                     "files, /kv/ for keys. `if_version` makes it conditional ('absent' creates only); "
                     "a mismatch is a conflict ending current_version=...; without it the last writer wins."),
        input_schema=inputs({"path": PATH, "value": {"type": "string"}, "store": STORE_WRITE,
                             "session": SESSION_REF, "if_version": IF_VERSION, "project_id": PROJECT_ID},
                            ("path", "value", "store")),
        output_schema=outputs(WRITE_OUT, ("ok", "path", "version")),
        handler=brain_put,
    ),
    Tool(
        name="brain_delete",
        title="Delete a brain entry",
        description="Delete an entry of your running session's brain; a missing entry is not_found.",
        input_schema=inputs({"path": PATH, "store": STORE_WRITE, "session": SESSION_REF, "if_version": IF_VERSION,
                             "project_id": PROJECT_ID}, ("path", "store")),
        output_schema=outputs({"ok": {"type": "boolean"}, "path": {"type": "string"}}, ("ok", "path")),
        handler=brain_delete,
    ),
)
