"""The connection's active session, as the session tools set it and the brain and kb tools read it.

Its own module so that the session tools (which hand `store: "project"` calls to the kb tools) and
the kb tools (which default a project to the active session's) both import it and not each other.
"""

from __future__ import annotations

from hubmcp.context import CallContext


def active_id(call: CallContext) -> str | None:
    """The connection's active session id as remembered (unchecked); none for a request with no
    connection identity."""
    return call.sessions.get(call.connection) if call.connection is not None else None


async def active(call: CallContext) -> tuple[str, str] | None:
    """The connection's active session as (id, project) while it runs and is the caller's, else
    None (and forgotten). Free while no session changed since it was last known to run (the
    sessions service's `generation`); otherwise one indexed read, which refreshes the memory."""
    key = call.connection
    bound = call.sessions.binding(key) if key is not None else None
    if key is None or bound is None:
        return None
    sessions = call.hub.sessions
    generation = sessions.generation  # read before the check: a change during it is not trusted
    if bound.generation == generation:
        return bound.session_id, bound.project_id
    row = await sessions.running(call.caller, bound.session_id)
    if row is None:
        call.sessions.clear(key)
        return None
    call.sessions.set(key, bound.session_id, str(row["project_id"]), generation)
    return bound.session_id, str(row["project_id"])
