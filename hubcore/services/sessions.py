"""Sessions: start (register, resume, adopt, fork), end, list, read, reassign.

A session belongs to one project and one owner; its name is unique per owner inside the project,
pruned-but-undoable sessions included (their name is a conflict naming them). Lifecycle events are
`session` events with an `action`, exempt from the feed ceiling. The brain file is handled by
`hubcore.services.brains`; a fork copies it after the new row commits.
"""

from __future__ import annotations

import secrets
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import Field, GetCoreSchemaHandler, GetJsonSchemaHandler, WithJsonSchema
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import core_schema

from hubcore.caller import Caller
from hubcore.clock import iso
from hubcore.errors import HubError, conflict, forbidden, invalid, not_found, quoted
from hubcore.services import ids, validate
from hubcore.services.access import readable_project, require_admin, visibility
from hubcore.services.changes import Effects
from hubcore.services.core import Core
from hubcore.services.events import NewEvent, insert_event
from hubcore.services.fields import AgentId, ProjectId, SessionId, Trimmed
from hubcore.services.requests import Request
from hubcore.store import jsonrows

NAME_MAX = 100
HANDOFF_MAX = 4096
HANDOFF_LISTED = 200
LISTING_MAX = 200
NAMESPACES = ["/fs/", "/kv/"]
RECOVERY_PATH = "/fs/recovery.md"

SESSION_COLUMNS = """s.id, s.project_id, s.name, s.owner, s.status, s.handoff, s.from_session, s.from_owner,
    s.lineage, s.created_at, s.ended_at, s.last_activity_at, s.pruned_at"""


# What a session-bound call with no session says: how to name one first, since an agent told only
# "call session_start first" loops when its client opens a new MCP session per call (issue 27).
NO_ACTIVE_SESSION = (
    "no active session: pass session_id (the id session_start returned) on this call; a client "
    "that opens a new MCP session per call keeps no active session between calls"
)


def new_session_id(now: float) -> str:
    return "ses_" + ids.encode(int(now * 1000), secrets.randbits(80))


def session_missing(ref: str) -> HubError:
    """The one answer for a session that is missing, pruned, or not readable by the caller."""
    return not_found(f"session {quoted(ref)} not found")


def check_name(value: Any) -> str:
    return validate.label(value, field="name", max_chars=NAME_MAX)


# The handoff is stored trimmed and the limit applies to the stored note; it is content, so over
# the limit is 413 on both surfaces.
Handoff = Annotated[
    str,
    Trimmed(HANDOFF_MAX, lines=True),
    Field(description=f"a note for whoever continues, at most {HANDOFF_MAX} characters once trimmed; blank means none"),
]


class SessionEnd(Request):
    """`session_end` and `POST /sessions/:id/end`. Over MCP a missing `session_id` means the
    connection's active session (the tool fills it in before the service sees the request)."""

    session_id: Annotated[
        SessionId | None, Field(description="the session to end (over MCP, default: your active session)")
    ] = None
    handoff: Handoff | None = None


class SessionReassign(Request):
    """`POST /sessions/:id/reassign` (the human's): give a running session to another agent."""

    session_id: SessionId
    agent: Annotated[AgentId, Field(description="the agent that owns the session from now on")]


_BY_ID: dict[str, Any] = {
    "type": "object",
    "properties": {"session_id": {"type": "string", "minLength": 1}},
    "required": ["session_id"],
    "additionalProperties": False,
}
_BY_NAME: dict[str, Any] = {
    "type": "object",
    "properties": {"agent": {"type": "string"}, "name": {"type": "string"}, "project_id": {"type": "string"}},
    "required": ["agent", "name"],
    "additionalProperties": False,
}
# `from` (spec: "session id, or agent and name") takes the bare id too; `SessionRef.parse` reads it
# and names its faults.
FROM_REF: dict[str, Any] = {
    "description": "the session to continue: its id, or {session_id}, or {agent, name, project_id}",
    "oneOf": [{"type": "string", "minLength": 1}, _BY_ID, _BY_NAME, {"type": "null"}],  # null: absent
}


class SessionName:
    """A session's name: one line, trimmed, 1 to NAME_MAX characters (`check_name`'s rule)."""

    def __call__(self, value: Any) -> str:
        return check_name(value)

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return core_schema.no_info_plain_validator_function(self)

    def __get_pydantic_json_schema__(
        self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return {
            "type": "string",
            "minLength": 1,
            "x-max-chars-trimmed": NAME_MAX,
            "description": f"one line, at most {NAME_MAX} characters once trimmed; unique per owner in the project",
        }


class SessionStart(Request):
    """`session_start`: register, resume, adopt (`from` an ended session) or fork (`from` a
    running one)."""

    project_id: ProjectId
    name: Annotated[str, SessionName()]
    source: Annotated[Any, Field(alias="from"), WithJsonSchema(FROM_REF)] = None


Listing = Annotated[int, Field(ge=1, le=LISTING_MAX, description=f"at most this many sessions, 1 to {LISTING_MAX}")]


class SessionList(Request):
    """`session_list`: the sessions the caller can read, optionally of one project."""

    project_id: Annotated[ProjectId | None, Field(description="only this project's sessions")] = None
    limit: Listing = LISTING_MAX


class SessionPage(Request):
    """`GET /sessions?project=&limit=`: the same list, with the spec's query name for the project."""

    project: Annotated[ProjectId | None, Field(description="only this project's sessions")] = None
    limit: Listing = LISTING_MAX

    def listing(self) -> SessionList:
        return SessionList(project_id=self.project, limit=self.limit)


@dataclass(frozen=True)
class SessionRef:
    """How a caller names a session: by id, or by owner and name inside a project."""

    session_id: str | None = None
    agent: str | None = None
    name: str | None = None
    project_id: str | None = None

    @classmethod
    def parse(cls, value: Any, *, default_project: str | None) -> SessionRef:
        if isinstance(value, str):
            return cls(session_id=value)
        if not isinstance(value, dict):
            raise invalid("session must be a session id or {session_id} or {agent, name, project_id}", field="session")
        if value.get("session_id") is not None:
            if not isinstance(value["session_id"], str):
                raise invalid("session.session_id must be a string", field="session")
            return cls(session_id=value["session_id"])
        agent, name = value.get("agent"), value.get("name")
        project = default_project if value.get("project_id") is None else value["project_id"]  # null: absent
        if not isinstance(agent, str) or not isinstance(name, str) or not isinstance(project, str):
            raise invalid(
                "session needs session_id, or agent and name (project_id defaults to the active session's project)",
                field="session",
            )
        return cls(agent=agent, name=name, project_id=project)

    def label(self) -> str:
        return self.session_id or f"{self.agent}/{self.name}"


def find(conn: sqlite3.Connection, caller: Caller, ref: SessionRef) -> sqlite3.Row:
    """The session row the caller may read; pruned sessions are answered as never existing."""
    cond, params = visibility(caller)
    args: dict[str, str | None]
    if ref.session_id is not None:
        where, args = "s.id = :sid", {"sid": ref.session_id}
    else:
        where = "s.project_id = :pid AND s.owner = :owner AND s.name = :name"
        args = {"pid": ref.project_id, "owner": ref.agent, "name": ref.name}
    row: sqlite3.Row | None = conn.execute(
        f"""SELECT {SESSION_COLUMNS} FROM sessions s JOIN projects p ON p.id = s.project_id
            WHERE {where} AND s.pruned_at IS NULL AND {cond}""",
        {**args, **params},
    ).fetchone()
    if row is None:
        raise session_missing(ref.label())
    return row


def brain_seal(conn: sqlite3.Connection, session_id: str) -> str | None:
    """The seal a session's brain should carry given its row: None while it runs, else why not."""
    row = conn.execute("SELECT status, pruned_at FROM sessions WHERE id = ?", (session_id,)).fetchone()
    if row is None or row["pruned_at"] is not None:
        return "pruned"  # a row gone after its undo window counts as pruned: its file is going too
    return None if row["status"] == "active" else "ended"


def touch_rows(conn: sqlite3.Connection, touches: dict[str, float]) -> None:
    """Move running sessions' last activity forward to the times given."""
    if touches:  # one statement, not one per session (`hubcore.store.jsonrows` says why)
        conn.execute(
            """UPDATE sessions SET last_activity_at = t.value FROM json_each(?) AS t
               WHERE sessions.id = t.key AND sessions.status = 'active' AND sessions.last_activity_at < t.value""",
            (jsonrows.payload(touches),),
        )


def lineage(row: sqlite3.Row) -> dict[str, Any] | None:
    """Where the session came from: adopted from an owner, or forked from a session."""
    if not row["lineage"]:
        return None
    return {"kind": row["lineage"], "from_session_id": row["from_session"], "from_owner": row["from_owner"]}


def render(row: sqlite3.Row, *, brain_bytes: int | None, full_handoff: bool = False) -> dict[str, Any]:
    handoff = row["handoff"]
    out: dict[str, Any] = {
        "session_id": row["id"],  # the one name for a session's id on every route and tool
        "project_id": row["project_id"],
        "name": row["name"],
        "owner": row["owner"],
        "status": row["status"],
        "handoff": handoff,
        "lineage": lineage(row),
        "created_at": iso(row["created_at"]),
        "ended_at": iso(row["ended_at"]) if row["ended_at"] is not None else None,
        "last_activity_at": iso(row["last_activity_at"]),
        "brain_bytes": brain_bytes,
    }
    if not full_handoff and handoff is not None and len(handoff) > HANDOFF_LISTED:
        out["handoff"] = handoff[:HANDOFF_LISTED]
        out["handoff_truncated"] = True
    return out


class SessionsService:
    """Session rows and lifecycle. `brain_bytes(session_id)` measures a brain file (None: unmeasurable);
    `seal_brain(session_id)` brings the brain's seal in line with the row, through the brain's own
    mailbox, after every change of whether the session runs (end, resume, adopt)."""

    def __init__(
        self,
        core: Core,
        brain_bytes: Callable[[str], int | None],
        copy_brain: Callable[[str, str], Any],
        seal_brain: Callable[[str], Awaitable[None]],
        flush_calls: Callable[[str | None], Awaitable[None]] | None = None,
    ) -> None:
        self.core = core
        self._brain_bytes = brain_bytes
        self._copy_brain = copy_brain
        self._seal_brain = seal_brain
        self._flush_calls = flush_calls
        # Moves before and after every change that can stop a running session from being its
        # owner's (end, reassign, prune, project deletion): whoever remembers a running session
        # (an MCP connection's active one) trusts its memory only while this has not moved.
        self.generation = 0
        self._writable = RowMemory()  # sessions a caller may write (`writable`)
        self._readable = RowMemory()  # sessions a caller may read (`remembered`, by the brains' reads)

    @asynccontextmanager
    async def changing(self, session_id: str | None) -> AsyncIterator[None]:
        """Around a change of whether sessions run or whose they are: the session's replay rows
        (every session's with None) are written first, so the record the change acts on is
        complete, and `generation` moves before the change and again after it, so a memory
        filled while it ran is not trusted."""
        if self._flush_calls is not None:
            await self._flush_calls(session_id)
        self.generation += 1
        try:
            yield
        finally:
            self.generation += 1

    # -- events ----------------------------------------------------------------------------------

    def _event(
        self,
        conn: sqlite3.Connection,
        row: sqlite3.Row | dict[str, Any],
        action: str,
        actor: str,
        effects: Effects,
        now: float,
        **extra: Any,
    ) -> None:
        summary = f"session {row['name']} {action}"
        insert_event(
            conn,
            NewEvent(
                project_id=row["project_id"],
                kind="session",
                actor=actor,
                summary=summary,
                payload={"action": action, "session_id": row["id"], "name": row["name"], **extra},
                session_id=row["id"],
                exempt=True,
            ),
            now=now,
            cap=self.core.settings.events_per_project,
            effects=effects,
        )

    # -- start -------------------------------------------------------------------------------------

    async def start(self, caller: Caller, req: SessionStart) -> dict[str, Any]:
        """Register, resume, adopt or fork; the result says which in `started`."""
        if caller.kind not in ("admin", "agent"):
            raise forbidden("starting a session needs a token")
        pid, session_name = req.project_id, req.name
        ref = SessionRef.parse(req.source, default_project=pid) if req.source is not None else None
        now = self.core.now()

        def write(conn: sqlite3.Connection) -> tuple[tuple[dict[str, Any], str | None], Effects]:
            readable_project(conn, caller, pid)
            effects = Effects()
            if ref is None:
                return (self._start_own(conn, caller, pid, session_name, now, effects), None), effects
            return self._start_from(conn, caller, pid, session_name, ref, now, effects), effects

        result, fork_from = await self.core.store.execute_effects(write)
        if fork_from is not None:
            await self._copy_brain(fork_from, result["session_id"])  # the copy comes unsealed
        elif result["started"] in ("resumed", "adopted"):
            # The session runs again, perhaps for another owner: memories of its row (`RowMemory`)
            # are not trusted (one filled before the commit is dropped; none is filled between
            # the commit and here with anything but the new row).
            self.generation += 1
            await self._seal_brain(result["session_id"])  # running (again): lift the end's seal
        result["brain_bytes"] = self._brain_bytes(result["session_id"])
        return result

    def _holder(self, conn: sqlite3.Connection, pid: str, owner: str, name: str) -> sqlite3.Row | None:
        row: sqlite3.Row | None = conn.execute(
            f"SELECT {SESSION_COLUMNS} FROM sessions s WHERE s.project_id = ? AND s.owner = ? AND s.name = ?",
            (pid, owner, name),
        ).fetchone()
        return row

    def _name_free(self, conn: sqlite3.Connection, pid: str, owner: str, name: str) -> None:
        held = self._holder(conn, pid, owner, name)
        if held is None:
            return
        if held["pruned_at"] is not None:
            raise conflict(
                f"name {name!r} is held by pruned session {held['id']} until its undo window passes",
                session_id=held["id"],
            )
        raise conflict(f"{owner} already has a session named {name!r} in {pid}: {held['id']}", session_id=held["id"])

    def _start_own(
        self, conn: sqlite3.Connection, caller: Caller, pid: str, name: str, now: float, effects: Effects
    ) -> dict[str, Any]:
        owner = caller.actor
        held = self._holder(conn, pid, owner, name)
        if held is not None and held["pruned_at"] is not None:
            self._name_free(conn, pid, owner, name)
        if held is not None and held["status"] == "active":
            return self._started(conn, held["id"], "resumed", previous_handoff=held["handoff"])
        if held is not None:
            conn.execute(
                "UPDATE sessions SET status = 'active', ended_at = NULL, last_activity_at = ? WHERE id = ?",
                (now, held["id"]),
            )
            self._event(conn, held, "started", owner, effects, now, resumed=True)
            return self._started(conn, held["id"], "resumed", previous_handoff=held["handoff"])
        sid = new_session_id(now)
        conn.execute(
            """INSERT INTO sessions (id, project_id, name, owner, status, created_at, last_activity_at)
               VALUES (?, ?, ?, ?, 'active', ?, ?)""",
            (sid, pid, name, owner, now, now),
        )
        self._event(conn, {"id": sid, "project_id": pid, "name": name}, "started", owner, effects, now)
        return self._started(conn, sid, "created", previous_handoff=None)

    def _start_from(
        self,
        conn: sqlite3.Connection,
        caller: Caller,
        pid: str,
        name: str,
        ref: SessionRef,
        now: float,
        effects: Effects,
    ) -> tuple[dict[str, Any], str | None]:
        src = find(conn, caller, ref)
        owner = caller.actor
        if src["status"] == "ended":
            if not (src["owner"] == owner and src["name"] == name):
                self._name_free(conn, src["project_id"], owner, name)
            conn.execute(
                """UPDATE sessions SET owner = ?, name = ?, status = 'active', ended_at = NULL,
                   last_activity_at = ?, lineage = 'adopted', from_session = NULL, from_owner = ?
                   WHERE id = ?""",
                (owner, name, now, src["owner"], src["id"]),
            )
            self._event(conn, {**dict(src), "name": name}, "adopted", owner, effects, now, previous_owner=src["owner"])
            return self._started(
                conn, src["id"], "adopted", previous_handoff=src["handoff"], previous_owner=src["owner"]
            ), None
        self._name_free(conn, src["project_id"], owner, name)
        sid = new_session_id(now)
        conn.execute(
            """INSERT INTO sessions (id, project_id, name, owner, status, created_at, last_activity_at,
               lineage, from_session, from_owner) VALUES (?, ?, ?, ?, 'active', ?, ?, 'forked', ?, ?)""",
            (sid, src["project_id"], name, owner, now, now, src["id"], src["owner"]),
        )
        self._event(
            conn,
            {"id": sid, "project_id": src["project_id"], "name": name},
            "forked",
            owner,
            effects,
            now,
            from_session_id=src["id"],
        )
        return self._started(conn, sid, "forked", previous_handoff=src["handoff"], previous_owner=src["owner"]), src[
            "id"
        ]

    def _started(
        self,
        conn: sqlite3.Connection,
        sid: str,
        how: str,
        *,
        previous_handoff: str | None,
        previous_owner: str | None = None,
    ) -> dict[str, Any]:
        row = conn.execute(f"SELECT {SESSION_COLUMNS} FROM sessions s WHERE s.id = ?", (sid,)).fetchone()
        return {
            "session_id": sid,
            "project_id": row["project_id"],
            "name": row["name"],
            "owner": row["owner"],
            "status": row["status"],
            "started": how,
            "namespaces": NAMESPACES,
            "recovery_path": RECOVERY_PATH,
            "handoff": previous_handoff,
            "previous_owner": previous_owner,
            "lineage": lineage(row),
        }

    # -- end, reassign -----------------------------------------------------------------------------

    async def end(self, caller: Caller, req: SessionEnd) -> dict[str, Any]:
        if req.session_id is None:
            raise invalid("session_id: missing (required)", field="session_id")
        session_id, note = req.session_id, req.handoff or None  # blank means none
        now = self.core.now()

        def write(conn: sqlite3.Connection) -> tuple[dict[str, Any], Effects]:
            effects = Effects()
            row = find(conn, caller, SessionRef(session_id=session_id))
            if not caller.is_admin and row["owner"] != caller.actor:
                raise forbidden(f"only the session's owner or the admin may end it; owner={row['owner']}")
            if row["status"] != "active":
                raise conflict(f"session {session_id} has already ended")
            conn.execute(
                "UPDATE sessions SET status = 'ended', ended_at = ?, handoff = ?, last_activity_at = ? WHERE id = ?",
                (now, note, now, session_id),
            )
            self._event(conn, row, "ended", caller.actor, effects, now, handoff=note is not None)
            fresh = find(conn, caller, SessionRef(session_id=session_id))
            return render(fresh, brain_bytes=None, full_handoff=True), effects

        # hub.db says ended first, then the seal is queued behind every brain write already sent;
        # returning only after it commits means no write acknowledged from here on can land.
        async with self.changing(session_id):
            result = await self.core.store.execute_effects(write)
        await self._seal_brain(session_id)
        result["brain_bytes"] = self._brain_bytes(session_id)
        return result

    async def reassign(self, caller: Caller, req: SessionReassign) -> dict[str, Any]:
        require_admin(caller, "reassigning a session")
        session_id, agent = req.session_id, req.agent
        now = self.core.now()

        def write(conn: sqlite3.Connection) -> tuple[dict[str, Any], Effects]:
            effects = Effects()
            row = find(conn, caller, SessionRef(session_id=session_id))
            if row["status"] != "active":
                raise conflict(f"session {session_id} has ended; only a running session is reassigned")
            target = conn.execute("SELECT status FROM agents WHERE id = ?", (agent,)).fetchone()
            if target is None:
                raise not_found(f"agent {agent!r} not found")
            if agent == row["owner"]:
                raise conflict(f"session {session_id} is already owned by {agent}")
            self._name_free(conn, row["project_id"], agent, row["name"])
            conn.execute("UPDATE sessions SET owner = ?, last_activity_at = ? WHERE id = ?", (agent, now, session_id))
            self._event(conn, row, "reassigned", caller.actor, effects, now, previous_owner=row["owner"], owner=agent)
            return render(find(conn, caller, SessionRef(session_id=session_id)), brain_bytes=None), effects

        async with self.changing(session_id):
            result = await self.core.store.execute_effects(write)
        result["brain_bytes"] = self._brain_bytes(session_id)
        return result

    # -- reads -------------------------------------------------------------------------------------

    async def get(self, caller: Caller, session_id: str) -> dict[str, Any]:
        def read(conn: sqlite3.Connection) -> dict[str, Any]:
            row = find(conn, caller, SessionRef(session_id=session_id))
            count = conn.execute(
                "SELECT COUNT(*) FROM events WHERE project_id = ? AND session_id = ?", (row["project_id"], session_id)
            ).fetchone()[0]
            last = conn.execute(
                "SELECT id, kind, summary, created_at FROM events WHERE project_id = ? AND session_id = ? "
                "ORDER BY id DESC LIMIT 1",
                (row["project_id"], session_id),
            ).fetchone()
            out = render(row, brain_bytes=None, full_handoff=True)
            out["events"] = int(count)
            out["last_event"] = (
                f"{iso(last['created_at'])} {last['kind']}: {last['summary']}" if last is not None else None
            )
            return out

        result = await self.core.store.read(read)
        result["brain_bytes"] = self._brain_bytes(session_id)
        return result

    async def list(self, caller: Caller, req: SessionList) -> dict[str, Any]:
        project_id, limit = req.project_id, req.limit

        def read(conn: sqlite3.Connection) -> tuple[list[sqlite3.Row], bool]:
            cond, params = visibility(caller)
            where = "s.pruned_at IS NULL AND " + cond
            if project_id is not None:
                readable_project(conn, caller, project_id)
                where += " AND s.project_id = :only"
                params = {**params, "only": project_id}
            rows = conn.execute(
                f"""SELECT {SESSION_COLUMNS} FROM sessions s JOIN projects p ON p.id = s.project_id
                    WHERE {where} ORDER BY s.last_activity_at DESC, s.id DESC LIMIT {limit + 1}""",
                params,
            ).fetchall()
            return rows[:limit], len(rows) > limit

        rows, truncated = await self.core.store.read(read)
        sessions = [render(r, brain_bytes=self._brain_bytes(r["id"])) for r in rows]
        return {"sessions": sessions, "truncated": truncated}

    async def touch(self, session_id: str) -> None:
        """Record activity on a session now."""
        await self.touch_many({session_id: self.core.now()})

    async def touch_many(self, touches: dict[str, float]) -> None:
        """Move running sessions' last activity forward to the times given, in one command (the
        replay's write-behind batches the touches of the tool calls made in them)."""
        await self.core.store.execute(lambda conn: touch_rows(conn, touches))

    async def running(self, caller: Caller, session_id: str) -> sqlite3.Row | None:
        """The session's row when it runs and the caller owns it (and may still read it), else
        None: one indexed read."""

        def read(conn: sqlite3.Connection) -> sqlite3.Row | None:
            try:
                row = find(conn, caller, SessionRef(session_id=session_id))
            except HubError:
                return None
            return row if row["status"] == "active" and row["owner"] == caller.actor else None

        return await self.core.store.read(read)

    def moment(self) -> tuple[int, int]:
        """What a memory of session rows is filled at: taken before the read it remembers."""
        return self.generation, self.core.access_changes

    def remembered(self, caller: Caller, session_id: str) -> sqlite3.Row | None:
        """The session's row as `find` gave it to this caller, while nothing since could change
        that answer (the session's status and owner included: an end, reassign, prune, project
        deletion, resume or adoption moves `generation`); None when not remembered."""
        return self._readable.get(self.moment(), session_id, caller)

    def remember(self, before: tuple[int, int], caller: Caller, row: sqlite3.Row) -> None:
        """Remember the row `find` gave the caller, read after `before` (`moment`)."""
        self._readable.put(before, self.moment(), str(row["id"]), caller, row)

    async def writable(self, caller: Caller, ref: SessionRef | None, active: str | None) -> sqlite3.Row:
        """The running session the caller owns that a brain write goes to.

        A session named by id that hub.db said runs and is the caller's is remembered
        (`RowMemory`) until anything that could change that answer begins: the next write
        to it costs no read. The brain's seal stays the authority on whether it still runs."""
        if ref is None and active is None:
            raise conflict(NO_ACTIVE_SESSION)
        sid = ref.session_id if ref is not None else active
        moment = self.moment()  # before the read: a change during it is not trusted
        if sid is not None:
            known = self._writable.get(moment, sid, caller)
            if known is not None:
                return known

        def read(conn: sqlite3.Connection) -> sqlite3.Row:
            row = find(conn, caller, ref or SessionRef(session_id=active))
            if row["owner"] != caller.actor:
                raise forbidden(f"brain writes go only to sessions the caller owns; owner={row['owner']}")
            if row["status"] != "active":
                raise conflict(f"session {row['id']} has ended; its brain is read-only")
            return row

        # A point read, like a brain get's: it shares their worker-thread hops (`read_then`).
        row = await self.core.store.read_then(read, _same)
        if sid is not None and row["id"] == sid:
            self._writable.put(moment, self.moment(), sid, caller, row)
        return row


ROWS_MAX = 4096  # session rows one memory holds; past it the memory starts again


class RowMemory:
    """Session rows hub.db gave a caller (running sessions it may write, or sessions it may
    read), by (session id, caller), as of one moment: the sessions service's `generation` (moved
    around every end, reassign, prune and project deletion, and after a resume or adoption) and
    `Core.access_changes` (moved around every change that can hide a project from an agent).
    While neither has moved since the read, the read would answer the same row: the owner, the
    status, the project and the caller's sight of it are those facts. For a write, whether the
    session still runs is left to the brain's seal besides (an end moves the generation before it
    commits and seals behind every write in flight). A lookup at another moment forgets
    everything."""

    def __init__(self) -> None:
        self._moment: tuple[int, int] = (-1, -1)
        self._rows: dict[tuple[str, str, str, bool], sqlite3.Row] = {}

    @staticmethod
    def _key(session_id: str, caller: Caller) -> tuple[str, str, str, bool]:
        return session_id, caller.actor, caller.kind, caller.is_admin

    def get(self, moment: tuple[int, int], session_id: str, caller: Caller) -> sqlite3.Row | None:
        if moment != self._moment:
            self._rows.clear()
            self._moment = moment
            return None
        return self._rows.get(self._key(session_id, caller))

    def put(
        self, before: tuple[int, int], after: tuple[int, int], session_id: str, caller: Caller, row: sqlite3.Row
    ) -> None:
        """Remember `row`, read between the moments `before` and `after`, when nothing moved."""
        if before != after or before != self._moment:
            return
        if len(self._rows) >= ROWS_MAX:
            self._rows.clear()
        self._rows[self._key(session_id, caller)] = row


def _same(row: sqlite3.Row) -> sqlite3.Row:
    return row
