"""Session and brain tools: thin adapters over `hub.sessions`, `hub.brief` and `hub.brains`.

The connection's active session (see `hubmcp.active`) is set by `session_start` and cleared by
`session_end`; brain writes with no session named go to it, and every tool call made while it is
set is recorded in its brain for replay. A request with no connection identity (2026-07-28 without
`Hub-Connection`, and so every `hub-cli call`) has no active session: its session-bound calls name
their session by `session_id`, and a call that names none is a `conflict` saying how to name it.
A call with no active session that names a session the caller runs is recorded in that session.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from hubcore.errors import HubError
from hubcore.services.brains import BrainDelete, BrainGet, BrainList, BrainPut, BrainRead
from hubcore.services.brief import SessionBrief
from hubcore.services.sessions import SessionEnd, SessionList, SessionStart
from hubmcp.context import CallContext
from hubmcp.tools import kb
from hubmcp.tools.base import Tool, outputs
from hubmcp.tools.current import active, active_id

log = logging.getLogger("hubmcp")
NULLABLE = {"type": ["string", "null"]}


NO_CONNECTION = (
    "this request has no active session: name the session with session_id (the id session_start "
    "returned), or send the same Hub-Connection header on every request of this client so that "
    "session_start makes its session the connection's active one"
)


def named_id(args: dict[str, Any]) -> str | None:
    """The session id a call names: `session_id`, or `session` given as {session_id}."""
    for ref in (args.get("session_id"), args.get("session")):
        if isinstance(ref, dict):
            ref = ref.get("session_id")
        if isinstance(ref, str) and ref:
            return ref
    return None


async def working_id(call: CallContext, args: dict[str, Any]) -> str | None:
    """The session a call is made in, for replay: the connection's active session, else (none,
    or no connection identity) the session the call names when the caller runs it: known to its
    handler when it resolved that session, else one indexed read."""
    current = active_id(call) or call.working.session_id
    if current is not None:
        return current
    sid = named_id(args)
    return sid if sid is not None and await call.hub.sessions.running(call.caller, sid) is not None else None


async def record(
    call: CallContext, tool: str, arguments: dict[str, Any], outcome: str, current: str | None = None
) -> None:
    """Record a tool call in its session's brain (replay), written behind: never fails a call."""
    if call.working.recorded:
        return
    current = current or await working_id(call, arguments)
    if current is None:
        return
    try:
        call.hub.brains.note_call(current, tool, arguments, outcome)
    except Exception:  # a recorder bug must not turn the call's own answer into an internal error
        log.exception("recording %s in session %s failed", tool, current)


def seen_by(call: CallContext) -> Callable[[Any], None]:
    """Told the session row a read resolved: a session the caller runs is where the call is made."""

    def seen(row: Any) -> None:
        if row["status"] == "active" and row["owner"] == call.caller.actor:
            call.working.session_id = str(row["id"])

    return seen


async def _bound(call: CallContext, req: BrainRead | BrainPut) -> tuple[str, str] | None:
    """The connection's active session for a brain call; a session-store call on a request with
    no connection identity must name its session."""
    named = req.reference()
    current = await active(call)
    if named is None and current is None and call.connection is None and req.store != "project":
        raise HubError("conflict", NO_CONNECTION)
    return current


async def session_start(call: CallContext, req: SessionStart) -> dict[str, Any]:
    generation = call.hub.sessions.generation  # before: a change while it runs is not trusted
    result = await call.hub.sessions.start(call.caller, req)
    if call.connection is not None:
        call.sessions.set(call.connection, result["session_id"], str(result["project_id"]), generation)
    return {**result, "active_session": call.connection is not None}


async def session_end(call: CallContext, req: SessionEnd) -> dict[str, Any]:
    sid = req.session_id or active_id(call)
    if sid is None:
        if call.connection is None:
            raise HubError("conflict", NO_CONNECTION)
        raise HubError("conflict", "no active session to end: pass session_id (the id session_start returned)")
    # Worked out before the end (an ended session runs no more) and recorded here, since the
    # session stops being active below.
    working = await working_id(call, req.model_dump(exclude_none=True))
    result = await call.hub.sessions.end(call.caller, req.model_copy(update={"session_id": sid}))
    if working is not None:
        await record(call, "session_end", req.model_dump(exclude_none=True), "ok", working)
    call.working.recorded = True
    call.sessions.forget_session(sid)
    return result


async def session_list(call: CallContext, req: SessionList) -> dict[str, Any]:
    return await call.hub.sessions.list(call.caller, req)


async def session_brief(call: CallContext, req: SessionBrief) -> dict[str, Any]:
    return await call.hub.brief.brief(call.caller, req)


async def brain_get(call: CallContext, req: BrainGet) -> dict[str, Any]:
    if req.store == "project":  # the project's knowledge base
        return await kb.project_get(call, req)
    current = await _bound(call, req)
    return await call.hub.brains.read_entry(call.caller, req, active=current, seen=seen_by(call))


async def brain_list(call: CallContext, req: BrainList) -> dict[str, Any]:
    if req.store == "project":  # the project's knowledge base
        return await kb.project_list(call, req)
    current = await _bound(call, req)
    return await call.hub.brains.list_entries(call.caller, req, active=current, seen=seen_by(call))


async def brain_put(call: CallContext, req: BrainPut) -> dict[str, Any]:
    if req.store == "project":  # the project's knowledge base
        return await kb.project_put(call, req)
    # Recorded in the session it writes (its connection's active one, or the one it names when the
    # connection has none) with the parsed request, so paths read canonical; a write elsewhere is
    # recorded as usual. Either way behind, like every call's record.
    here = active_id(call) is None or req.reference() is None
    result = await call.hub.brains.write_entry(call.caller, req, active=await _bound(call, req))
    call.working.session_id = result["session_id"]  # written: a session the caller runs
    if here:
        await record(call, "brain_put", req.model_dump(exclude_unset=True), "ok", result["session_id"])
        call.working.recorded = True
    return result


async def brain_delete(call: CallContext, req: BrainDelete) -> dict[str, Any]:
    if req.store == "project":  # the project's knowledge base
        return await kb.project_delete(call, req)
    result = await call.hub.brains.delete_entry(call.caller, req, active=await _bound(call, req))
    call.working.session_id = result["session_id"]
    return result


SESSION_OUT = {
    "session_id": {"type": "string"},
    "project_id": {"type": "string"},
    "name": {"type": "string"},
    "owner": {"type": "string"},
    "status": {"enum": ["active", "ended"]},
    "started": {"enum": ["created", "resumed", "adopted", "forked"]},
    "namespaces": {"type": "array", "items": {"type": "string"}},
    "recovery_path": {"type": "string"},
    "handoff": NULLABLE,
    "previous_owner": NULLABLE,
    "lineage": {"type": ["object", "null"]},
    "brain_bytes": {"type": ["integer", "null"]},
}
ENTRY_OUT = {
    "path": {"type": "string"},
    "type": {"enum": ["key", "file"]},
    "content": {"type": "string"},
    "version": {"type": "string"},
    "size_bytes": {"type": "integer"},
    "written_at": NULLABLE,
    "session_id": {"type": "string"},
}
WRITE_OUT = {
    "ok": {"type": "boolean"},
    "path": {"type": "string"},
    "version": {"type": "string"},
    "size_bytes": {"type": "integer"},
    "warnings": {"type": "array", "items": {"type": "string"}},
    "session_id": {"type": "string"},
}

TOOLS = (
    Tool(
        name="session_start",
        description=(
            "Start or resume your session in a project by `name` (idempotent); `from` adopts an ended "
            "session or forks a running one. With `active_session: false` pass its `session_id` to "
            "session-bound tools (guide: Sessions)."
        ),
        input_model=SessionStart,
        output_schema=outputs(
            {
                **SESSION_OUT,
                "active_session": {
                    "type": "boolean",
                    "description": "true when this is now the connection's active session",
                },
            },
            ("session_id", "owner", "status", "started", "namespaces", "recovery_path"),
        ),
        handler=session_start,
    ),
    Tool(
        name="session_end",
        description="End your active session (or `session_id`), leaving a `handoff` note for whoever continues.",
        input_model=SessionEnd,
        output_schema=outputs(
            {"session_id": {"type": "string"}, "status": {"type": "string"}, "handoff": NULLABLE},
            ("session_id", "status"),
        ),
        handler=session_end,
    ),
    Tool(
        name="session_list",
        description="Sessions in the projects you can read, most recently active first.",
        input_model=SessionList,
        output_schema=outputs(
            {
                "sessions": {"type": "array", "items": {"type": "object", "required": ["session_id"]}},
                "truncated": {"type": "boolean"},
            },
            ("sessions", "truncated"),
        ),
        handler=session_list,
        read_only=True,
    ),
    Tool(
        name="session_brief",
        description=(
            "Before work in a project: answers for you, your previous session and handoff, new events, "
            "open comments on your artifacts, stale knowledge pages. Moves no cursor."
        ),
        input_model=SessionBrief,
        output_schema=outputs(
            {
                "project_id": {"type": "string"},
                "since": {"type": "object"},
                "answers": {"type": "object"},
                "previous_session": {"type": ["object", "null"]},
                "events": {"type": "object"},
                "comments": {"type": "object"},
                "stale_pages": {"type": "object"},
            },
            ("since", "answers", "previous_session", "events", "comments", "stale_pages"),
        ),
        handler=session_brief,
        read_only=True,
    ),
    Tool(
        name="brain_get",
        description=(
            "Read a brain entry (yours, or any `session` you can read); its `version` serves "
            "conditional writes. `store: project` reads a knowledge page."
        ),
        input_model=BrainGet,
        output_schema=outputs(ENTRY_OUT, ("path", "content", "version")),
        handler=brain_get,
        read_only=True,
    ),
    Tool(
        name="brain_list",
        description=(
            "One directory level of a brain (at most 500 entries), or with `store: project` of the knowledge base."
        ),
        input_model=BrainList,
        output_schema=outputs(
            {"path": {"type": "string"}, "entries": {"type": "array"}, "truncated": {"type": "boolean"}},
            ("path", "entries", "truncated"),
        ),
        handler=brain_list,
        read_only=True,
    ),
    Tool(
        name="brain_put",
        description=(
            "Write text (at most 4 MiB) at /fs/... or /kv/... of your session's brain; `if_version` "
            "('absent': create only) makes it conditional. `store: project` writes a knowledge page and "
            "returns lint findings."
        ),
        input_model=BrainPut,
        output_schema=outputs(WRITE_OUT, ("ok", "path", "version")),
        handler=brain_put,
    ),
    Tool(
        name="brain_delete",
        description=(
            "Delete a brain entry, or with `store: project` a knowledge page (its versions stay in brain_history)."
        ),
        input_model=BrainDelete,
        output_schema=outputs({"ok": {"type": "boolean"}, "path": {"type": "string"}}, ("ok", "path")),
        handler=brain_delete,
    ),
)
