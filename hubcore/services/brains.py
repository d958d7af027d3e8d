"""Session brains: one SQLite file per session, written only by its owner while it runs.

Reads of any readable session's brain (by id or by agent and name) touch nothing of the caller's
own session and never create a file; the file comes into being on the first write (an entry, or
a tool call recorded for replay). Writes go through the brain file's own actor, opened on demand
by the pool and closed when idle.

The brain's actor is the authority on whether its session takes writes: ending a session seals
its brain through the brain's mailbox, behind every write already queued, and each entry write
checks the seal inside its own command; resume and adopt lift it the same way. The seal is a row
in the brain file, so it outlives the actor's idle close and a restart. Each seal command reads
the session's row in hub.db as it runs and seals or unseals to match, so two lifecycle changes
that race (end, then resume) leave the seal of the later one whatever order they arrive in. A new
file starts `unsynced` and its first write reads the row too, so a brain first written after its
session ended (the call log of `session_end`) is born sealed. Prune and undo touch no brain: only
ended sessions are pruned, and the call log, the one write an ended brain takes, reads the row.
"""

from __future__ import annotations

import builtins
import re
import sqlite3
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import anyio
import orjson
from pydantic import Field, PlainValidator, WithJsonSchema
from pydantic_core import PydanticCustomError

from hubcore.caller import Caller
from hubcore.clock import iso
from hubcore.errors import HubError, conflict, invalid, not_found
from hubcore.metrics import store_bytes
from hubcore.services import brain_search, callstage, entries
from hubcore.services.access import require_admin
from hubcore.services.brain_cache import EntryCache
from hubcore.services.calllog import Call, CallLog
from hubcore.services.core import Core
from hubcore.services.events import SESSION_ID_MAX
from hubcore.services.fields import PROJECT_ID_PATTERN, EntryContent, EntryPath, IfVersion, ProjectId, SessionId
from hubcore.services.intake import Intake
from hubcore.services.requests import Request
from hubcore.services.sessions import (
    NO_ACTIVE_SESSION,
    SessionRef,
    SessionsService,
    brain_seal,
    find,
    session_missing,
    touch_rows,
)
from hubcore.store import brain, brain_record
from hubcore.store.actor import StoreActor
from hubcore.store.connection import connect
from hubcore.store.pool import ActorPool
from hubcore.store.readcache import ReadCache

ARGUMENT_SUMMARY_MAX = 500
Seen = Callable[[sqlite3.Row], None]
"""Told the session row a read resolved (the MCP tools learn from it where to record the call)."""
ALL_ROWS = 1 << 30  # a limit no session's staged rows reach
ANY_SESSION = "*"  # the in-flight count of writes whose session id is not known yet
STORES = ("session", "project")


_BY_ID: dict[str, Any] = {
    "type": "object",
    "properties": {"session_id": {"type": "string", "minLength": 1, "maxLength": SESSION_ID_MAX}},
    "required": ["session_id"],
    "additionalProperties": False,
}
_BY_NAME: dict[str, Any] = {
    "type": "object",
    "properties": {
        "agent": {"type": "string"},
        "name": {"type": "string"},
        "project_id": {"type": ["string", "null"], "pattern": PROJECT_ID_PATTERN},
    },
    "required": ["agent", "name"],
    "additionalProperties": False,
}
# `session` is a reference object (spec: `{session_id}` or `{agent, name}`); a bare id goes in
# `session_id`. `null` reads as absent, as for every member (`requests.parse`), and a null
# `project_id` inside it too (the default project).
SESSION_REF: dict[str, Any] = {
    "description": "a session: {session_id}, or {agent, name, project_id} "
    "(project_id defaults to your active session's project); a bare id goes in session_id",
    "oneOf": [_BY_ID, _BY_NAME, {"type": "null"}],
}


def _session_ref(value: Any) -> dict[str, Any] | None:
    """A session reference exactly as `SESSION_REF` publishes it (what `SessionRef.parse` reads
    afterwards); anything else is refused naming `session`."""
    if value is None:
        return None
    if isinstance(value, dict):
        sid = value.get("session_id")
        if set(value) == {"session_id"} and isinstance(sid, str) and 0 < len(sid) <= SESSION_ID_MAX:
            return value
        named = {k: v for k, v in value.items() if not (k == "project_id" and v is None)}
        project = named.get("project_id", "")
        if (
            {"agent", "name"} <= set(named) <= {"agent", "name", "project_id"}
            and all(isinstance(v, str) for v in named.values())
            and ("project_id" not in named or re.fullmatch(PROJECT_ID_PATTERN, str(project)))
        ):
            return named
    raise PydanticCustomError("session_ref", "must be {session_id} or {agent, name, project_id}")


SessionReference = Annotated[Any, PlainValidator(_session_ref), WithJsonSchema(SESSION_REF)]


class BrainRead(Request):
    """What a brain read names: the path, and the session (by `session` or `session_id`; over
    MCP, default the connection's active session)."""

    # A listing's directory (default `/fs/`); `null` reads as absent, so the schema says nullable.
    path: Annotated[str, EntryPath(allow_root=True)] | None = None
    store: Annotated[
        Literal["session", "project"] | None, Field(description="session brain (default) or the project knowledge base")
    ] = None
    session: SessionReference = None
    session_id: Annotated[
        SessionId | None,
        Field(description=("the session to read (the id session_start returned); default: your active session")),
    ] = None
    project_id: Annotated[ProjectId | None, Field(description="the project of a session named by {agent, name}")] = None

    def reference(self) -> Any:
        return session_reference(self.session, self.session_id, self.project_id)


def session_reference(session: Any, session_id: str | None, project_id: str | None) -> Any:
    """`session` (or `session_id`), a top-level `project_id` filling in an {agent, name}
    reference's project; the session named twice is refused."""
    if session is None:
        return session_id
    if session_id is not None:
        raise HubError(
            "invalid_argument",
            "session_id: name the session once, by session or session_id",
            details={"field": "session_id"},
        )
    if isinstance(session, dict) and "agent" in session and "project_id" not in session and project_id:
        return {**session, "project_id": project_id}
    return session


class BrainGet(BrainRead):
    """`brain_get` and `GET /sessions/:id/brain/entry`: one entry."""

    path: Annotated[str, EntryPath(allow_root=True)]


class BrainList(BrainRead):
    """`brain_list` and `GET /sessions/:id/brain`: one directory level (default `/fs/`)."""


class BrainWrite(BrainRead):
    """What a brain write names: an entry's path (never a namespace root), the store, the
    session (over MCP, default the connection's active session) and an optional condition."""

    path: Annotated[str, EntryPath(allow_root=False)]
    store: Annotated[
        Literal["session", "project"], Field(description="required: session brain or project knowledge base")
    ]
    if_version: IfVersion | None = None


class BrainPut(Request):
    """`brain_put`: write text at a path of a running session's brain (the members of
    `BrainWrite`, the content second as the tool has always listed it)."""

    path: Annotated[str, EntryPath(allow_root=False)]
    content: Annotated[str, EntryContent(entries.CONTENT_MAX)]
    store: Annotated[
        Literal["session", "project"], Field(description="required: session brain or project knowledge base")
    ]
    session: SessionReference = None
    session_id: Annotated[
        SessionId | None,
        Field(description=("the session to write (the id session_start returned); default: your active session")),
    ] = None
    if_version: IfVersion | None = None
    project_id: Annotated[ProjectId | None, Field(description="the project of a session named by {agent, name}")] = None

    def reference(self) -> Any:
        return session_reference(self.session, self.session_id, self.project_id)


class BrainDelete(BrainWrite):
    """`brain_delete`: delete an entry of a running session's brain."""


def brain_factory(directory: Path, synchronous: str) -> Callable[[str], StoreActor]:
    def make(session_id: str) -> StoreActor:
        return StoreActor(
            directory / f"{session_id}.db",
            setup=brain.setup,
            synchronous=synchronous,
            readers=2,
            mailbox_size=256,
            name=f"brain {session_id}",
            gather=False,  # one session writes it: its next batch goes to the shared thread at once
        )

    return make


T = TypeVar("T")


def unborn_reads_none(fn: Callable[[sqlite3.Connection], T]) -> Callable[[sqlite3.Connection], T | None]:
    """`fn`, answering None on a brain file whose schema is not committed yet. The first write's
    actor creates the file before its migration commits, so a read landing between the two finds
    a file with no tables: that brain was never written, exactly as when the file is missing."""

    def run(conn: sqlite3.Connection) -> T | None:
        try:
            return fn(conn)
        except sqlite3.OperationalError:
            if conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone() is None:
                return None
            raise

    return run


def not_utf8(path: str) -> HubError:
    return HubError("invalid_argument", f"brain entry {path} holds bytes that are not UTF-8 text", status=422)


def check_store(value: Any, *, required: bool) -> str:
    if value is None and not required:
        return "session"
    if value not in STORES:
        raise invalid("store must be 'session' or 'project'", field="store")
    if value == "project":
        raise invalid("store 'project' (the knowledge base) is not available on this hub yet", field="store")
    return str(value)


def summarize(arguments: dict[str, Any]) -> str:
    """A tool call's arguments for replay: long strings cut, the whole kept under 500 characters."""
    short = {
        k: (v if not isinstance(v, str) or len(v) <= 80 else v[:80] + f"... ({len(v)} chars)")
        for k, v in arguments.items()
    }
    try:
        text = orjson.dumps(short, default=str).decode()
    except orjson.JSONEncodeError:
        # orjson refuses integers beyond 64 bits and nesting deeper than 254 levels, which any
        # caller may send; the summary is only read by people, so Python's repr stands in.
        text = repr(short)
    return text if len(text) <= ARGUMENT_SUMMARY_MAX else text[: ARGUMENT_SUMMARY_MAX - 3] + "..."


class BrainsService:
    def __init__(self, core: Core, pool: ActorPool, directory: Path) -> None:
        self.core = core
        self.pool = pool
        self.directory = directory
        self.sessions: SessionsService | None = None  # tied by `SessionsPart`, which builds both
        self.writes = 0  # bumped by every brain write; storage memoisation keys on it
        self.touched: set[str] = set()  # sessions whose entries changed, for the search index
        self.pushes = brain_search.Pushes()  # and what changed in them, handed to the index directly
        # Entry writes between their hub.db check and their reply, by session: a seal must go
        # through the mailbox even when no file exists yet, or such a write would create one.
        self._writing: dict[str, int] = {}
        # Replay rows and last-activity touches, written behind (`run_background` writes them):
        # staged in hub.db, then moved into each brain in bulk (`hubcore.services.callstage`).
        self.mover = callstage.Mover(core.store.read, core.store.execute, self._move_rows)
        self.calls = CallLog(self._stage, self.mover.move, self._unstage)
        # Reads go to read-only connections kept apart from the writers' pool: a read never opens
        # (or evicts) a writer actor.
        self.readers = ReadCache(core.settings.open_readers_max)
        # Entries gets read and puts wrote, answered on the loop with no thread (`brain_cache`).
        self.entries = EntryCache()
        self.intake = Intake()  # where a get from memory pauses

    # -- the agent-facing operations (brain_get, brain_list, brain_put, brain_delete) ---------------

    def _target(self, session: Any, active: tuple[str, str] | None) -> SessionRef:
        """The session a read names, defaulting to the connection's active one (id, project)."""
        default_project = active[1] if active else None
        if session is not None:
            return SessionRef.parse(session, default_project=default_project)
        if active is None:
            raise conflict(NO_ACTIVE_SESSION)
        return SessionRef(session_id=active[0])

    async def read_entry(
        self, caller: Caller, req: BrainGet, active: tuple[str, str] | None = None, seen: Seen | None = None
    ) -> dict[str, Any]:
        check_store(req.store, required=False)
        return await self.get(caller, self._target(req.reference(), active), req.path or "", seen)

    async def list_entries(
        self, caller: Caller, req: BrainList, active: tuple[str, str] | None = None, seen: Seen | None = None
    ) -> dict[str, Any]:
        check_store(req.store, required=False)
        return await self.list(caller, self._target(req.reference(), active), req.path or "/fs/", seen)

    async def write_entry(self, caller: Caller, req: BrainPut, active: tuple[str, str] | None = None) -> dict[str, Any]:
        """Write an entry (the MCP tool records its call behind, as every call's)."""
        check_store(req.store, required=True)
        async with self._writer(caller, req.reference(), active) as session:
            return await self._put(caller, session, req.path, req.content, req.if_version)

    async def delete_entry(
        self, caller: Caller, req: BrainDelete, active: tuple[str, str] | None = None
    ) -> dict[str, Any]:
        check_store(req.store, required=True)
        async with self._writer(caller, req.reference(), active) as session:
            return await self._delete(session, req.path, req.if_version)

    @asynccontextmanager
    async def _writer(self, caller: Caller, session: Any, active: tuple[str, str] | None) -> AsyncIterator[sqlite3.Row]:
        """The running session the caller owns (its row), counted as written to until the block ends.

        The count starts before hub.db is asked, so a session end that commits after the answer
        sees the write in flight and seals through the mailbox (see `seal`). A session named by
        agent and name has no id yet: it is counted as a write to any session.
        """
        assert self.sessions is not None
        ref = SessionRef.parse(session, default_project=active[1] if active else None) if session else None
        key = ref.session_id if ref is not None else active[0] if active else None
        key = key or ANY_SESSION
        self._writing[key] = self._writing.get(key, 0) + 1
        try:
            yield await self.sessions.writable(caller, ref, active[0] if active else None)
        finally:
            self._writing[key] -= 1
            if not self._writing[key]:
                del self._writing[key]

    def path_of(self, session_id: str) -> Path:
        return self.directory / f"{session_id}.db"

    def bytes_of(self, session_id: str) -> int | None:
        return store_bytes(self.path_of(session_id))

    async def _session(self, caller: Caller, ref: SessionRef) -> sqlite3.Row:
        return await self.core.store.read(lambda conn: find(conn, caller, ref))

    async def read_file(self, session_id: str, fn: Callable[[sqlite3.Connection], Any]) -> Any:
        """`fn` on the session's brain file (None when never written): what the search index reads."""
        return await self._read(session_id, fn)

    async def _read(self, session_id: str, fn: Callable[[sqlite3.Connection], Any]) -> Any:
        """Run `fn` on the brain file, or return None when the file was never written."""
        path = self.path_of(session_id)
        if not path.exists():
            return None
        return await self.readers.read(session_id, path, unborn_reads_none(fn))

    async def _session_and_read(
        self,
        caller: Caller,
        ref: SessionRef,
        fn: Callable[[sqlite3.Connection], Any] | None,
        seen: Seen | None,
        *,
        keep: bool = False,
    ) -> Any:
        """The session the caller may read (told to `seen`), then `fn` on its brain (None when
        the file was never written, or with no `fn`): hub.db's read and the brain's in one
        worker-thread hop, or the brain's alone when the session's row is remembered (a session
        named by id). A refusal of the brain read still tells `seen` its session. With `keep`,
        an entry found is kept in the entry cache."""
        assert self.sessions is not None
        sid = ref.session_id
        known = self.sessions.remembered(caller, sid) if sid is not None else None
        moment = self.sessions.moment()
        held = self.entries.moment(sid) if keep and sid is not None else None
        row: sqlite3.Row
        if known is not None:
            row = known
            if seen is not None:
                seen(row)
            found = None if fn is None else await self._read(row["id"], fn)
        else:
            row, found = await self.core.store.read_then(
                lambda conn: find(conn, caller, ref), self._then(fn), limiter=self.readers.limiter
            )
            if sid is not None and row["id"] == sid:
                self.sessions.remember(moment, caller, row)
            if seen is not None:
                seen(row)
            if isinstance(found, HubError):
                raise found
        if keep and isinstance(found, brain.Entry) and sid is not None and row["id"] == sid:
            self.entries.fill(sid, found, held)
        return row, found

    def _then(self, fn: Callable[[sqlite3.Connection], Any] | None) -> Callable[[sqlite3.Row], tuple[sqlite3.Row, Any]]:
        """After the session's row, on the same worker thread: `fn` on its brain (a refusal is
        returned, so that `seen` learns the session before it is raised)."""

        def then(row: sqlite3.Row) -> tuple[sqlite3.Row, Any]:
            path = self.path_of(row["id"])
            try:
                if fn is None or not path.exists():
                    return row, None
                return row, self.readers.run(row["id"], path, unborn_reads_none(fn))
            except HubError as err:
                return row, err

        return then

    # -- reads ---------------------------------------------------------------------------------------

    async def get(self, caller: Caller, session: SessionRef, path: Any, seen: Seen | None = None) -> dict[str, Any]:
        where = entries.canonical(path, allow_root=True)
        root = entries.is_root(where)  # `/kv`, `/fs/`: a namespace root is a directory, never an entry
        # Every get pauses, as a read on a thread does; one answered from memory would otherwise
        # run its whole path before the loop took in the next request (`hubcore.services.intake`).
        await self.intake.pause()
        entry = None if root else self._held(caller, session, where, seen)
        if entry is not None:
            sid = session.session_id
        else:
            row, entry = await self._session_and_read(
                caller, session, None if root else (lambda conn: _entry_at(conn, where)), seen, keep=True
            )
            sid = row["id"]
        if root:
            raise conflict(f"{where} is a directory, not an entry; list it instead")
        if entry is None:
            raise not_found(f"no brain entry at {where}")
        try:
            content = entry.value.decode("utf-8")
        except UnicodeDecodeError:
            raise not_utf8(where) from None
        return {
            "path": where,
            "type": entry.kind,
            "content": content,
            "version": entry.version,
            "size_bytes": len(entry.value),
            "written_at": iso(entry.written_at) if entry.written_at is not None else None,
            "session_id": sid,
        }

    def _held(self, caller: Caller, session: SessionRef, where: str, seen: Seen | None) -> brain.Entry | None:
        """The entry from memory alone (the session's row remembered, the entry cached), told
        to `seen` as a read would be; None when either is not held."""
        assert self.sessions is not None
        sid = session.session_id
        if sid is None:
            return None
        row = self.sessions.remembered(caller, sid)
        entry = self.entries.get(sid, where) if row is not None else None
        if row is not None and entry is not None and seen is not None:
            seen(row)
        return entry

    async def list(
        self, caller: Caller, session: SessionRef, path: Any = "/fs/", seen: Seen | None = None
    ) -> builtins.dict[str, Any]:
        where = entries.canonical(path, allow_root=True)
        row, found = await self._session_and_read(caller, session, lambda conn: _level_or_entry(conn, where), seen)
        listed, truncated = found if found is not None else ([], False)
        return {"path": where, "entries": listed, "truncated": truncated, "session_id": row["id"]}

    # -- writes --------------------------------------------------------------------------------------

    async def _put(
        self,
        caller: Caller,
        session: sqlite3.Row,
        where: str,
        value: str,
        condition: str | None = None,
    ) -> dict[str, Any]:
        """Write an entry to a session the caller owns (`_writer` checked that; the seal decides).
        `BrainPut` held the path, the content's size and the condition to their rules."""
        session_id = str(session["id"])
        data = value.encode("utf-8")
        # A refusal creates no file (opening the actor would). An open actor's file exists, so
        # the loop makes no syscall for a busy brain (nor does its writer: see `write`).
        if not self.pool.is_open(session_id) and not self.path_of(session_id).exists():
            entries.require_version(None, condition)
        now, actor_label, version = self.core.now(), caller.actor, entries.version_of(data)

        def write(conn: sqlite3.Connection) -> tuple[brain.Counter, list[str]]:
            # One statement takes the seq and reads every check and the file's size (its pages):
            # each statement or syscall lets go of the GIL, which the busy loop then holds.
            before = brain.before_put(conn, where)
            warnings = entries.file_growth(f"session brain {session_id}", before.size_bytes, len(data))
            self._refuse_sealed(conn, session_id, now, before.seal)
            entries.require_version(before.version, condition)
            if before.directory:
                raise conflict(f"{where} is a directory; an entry cannot replace it")
            brain.store(
                conn,
                where,
                data,
                version=version,
                now=now,
                actor=actor_label,
                seq=before.counter[1],
                tombstone=before.tombstone,
            )
            return before.counter, warnings

        with self.entries.writing(session_id) as done:
            async with self.pool.use(session_id) as actor:
                with anyio.CancelScope(shield=True):  # queued, it runs: the cache waits for its outcome
                    counter, warnings = await actor.execute(write)
            done.entry = brain.Entry(where, data, version, now)
        self.writes += 1
        self.pushes.note(session_id, str(session["project_id"]), counter, where, data)
        self.touched.add(session_id)
        return {
            "ok": True,
            "path": where,
            "version": version,
            "size_bytes": len(data),
            "warnings": warnings,
            "session_id": session_id,
        }

    async def _delete(self, session: sqlite3.Row, where: str, condition: str | None = None) -> dict[str, Any]:
        session_id = str(session["id"])
        if not self.path_of(session_id).exists():
            entries.require_version(None, condition)
            raise not_found(f"no brain entry at {where}")
        now = self.core.now()

        def write(conn: sqlite3.Connection) -> brain.Counter:
            self._require_unsealed(conn, session_id, now)
            entries.require_version(brain.held_version(conn, where), condition)
            counter = brain.delete(conn, where)
            if counter is None:
                raise not_found(f"no brain entry at {where}")
            return counter

        with self.entries.writing(session_id) as done:
            async with self.pool.use(session_id) as actor:
                with anyio.CancelScope(shield=True):  # queued, it runs: the cache waits for its outcome
                    counter = await actor.execute(write)
            done.removed = where
        self.writes += 1
        self.pushes.note(session_id, str(session["project_id"]), counter, where, None)
        self.touched.add(session_id)
        return {"ok": True, "path": where, "session_id": session_id}

    # -- the seal ------------------------------------------------------------------------------------

    async def seal(self, session_id: str) -> None:
        """Bring the brain's seal in line with its session's row, behind every write already queued.

        Called after each hub.db change of whether the session runs (end, resume, adopt). With no
        file and no entry write in flight nothing is sent: every later entry write is refused by
        hub.db's check before it could create the file.
        """
        if not self.path_of(session_id).exists() and not self._in_flight(session_id):
            return
        now = self.core.now()
        async with self.pool.use(session_id) as actor:
            await actor.execute(lambda conn: self._sync_seal(conn, session_id, now))
        self.writes += 1

    def _in_flight(self, session_id: str) -> bool:
        return bool(self._writing.get(session_id) or self._writing.get(ANY_SESSION))

    def _sync_seal(self, conn: sqlite3.Connection, session_id: str, now: float) -> str | None:
        """Seal or unseal as the session's row says now (read in hub.db from the brain's thread)."""
        hub_db = connect(self.core.store.path, readonly=True)
        try:
            state = brain_seal(hub_db, session_id)
        finally:
            hub_db.close()
        brain.set_seal(conn, state, now=now)
        return state

    def _require_unsealed(self, conn: sqlite3.Connection, session_id: str, now: float) -> None:
        """Refuse an entry write to a sealed brain: the same answers as hub.db's check gives."""
        self._refuse_sealed(conn, session_id, now, brain.seal_state(conn))

    def _refuse_sealed(self, conn: sqlite3.Connection, session_id: str, now: float, state: str | None) -> None:
        """`_require_unsealed` with the seal's state already read (`state`)."""
        if state == brain.UNSYNCED:  # a new file, or one from before seals: learn the session's state
            state = self._sync_seal(conn, session_id, now)
        if state == brain.PRUNED:
            raise session_missing(session_id)
        if state is not None:
            raise conflict(f"session {session_id} has ended; its brain is read-only")

    # -- replay ----------------------------------------------------------------------------------------

    def note_call(self, session_id: str, tool: str, arguments: dict[str, Any], outcome: str) -> None:
        """Record a tool call made in a session, written behind (see `hubcore.services.calllog`):
        nothing is written on the caller's path."""
        self.calls.note(session_id, Call(self.core.now(), tool, summarize(arguments), outcome))

    async def record_call(self, session_id: str, tool: str, arguments: dict[str, Any], outcome: str) -> None:
        """Record a tool call now, after what is noted for the session; raises the refusal
        (`not_found` for a pruned session) instead of dropping the row."""
        self.calls.note(session_id, Call(self.core.now(), tool, summarize(arguments), outcome))
        async with self.calls.exclusive():  # nothing of the session's is staged or moved meanwhile
            await self.calls.stage_held(session_id)
            rows = await self.core.store.read(lambda conn: [r for _, r in callstage.staged(conn, session_id, ALL_ROWS)])
            if not rows:
                return
            try:
                await self._move_rows(session_id, rows)
            finally:  # moved, or refused with its session: either way not to be moved again
                await self.core.store.execute(lambda conn: callstage.unstage(conn, {session_id: rows[-1].id}))

    async def _stage(self, calls: dict[str, builtins.list[Call]], touches: dict[str, float]) -> None:
        """The call log's rows and touches, in one hub.db command batched with the hub's writes."""

        def write(conn: sqlite3.Connection) -> None:
            callstage.stage(conn, calls)
            touch_rows(conn, touches)

        await self.core.store.execute(write)

    async def _unstage(self, session_id: str) -> None:
        await self.core.store.execute(lambda conn: callstage.drop(conn, [session_id]))

    async def _move_rows(self, session_id: str, rows: builtins.list[callstage.Staged]) -> None:
        now = self.core.now()
        async with self.pool.use(session_id) as actor:
            await actor.execute(lambda conn: self._log_rows(conn, session_id, now, rows))
        self.writes += 1

    def _log_rows(
        self, conn: sqlite3.Connection, session_id: str, now: float, rows: builtins.list[callstage.Staged]
    ) -> None:
        """Append staged replay rows past the brain's mark. An ended session still logs the call
        that ended it; a pruned one's file is going away. Only a sealed brain pays for the look at
        hub.db (only ended sessions are sealed)."""
        seal, held = brain_record.before_append(conn)
        if seal is not None and self._sync_seal(conn, session_id, now) == brain.PRUNED:
            raise session_missing(session_id)
        brain_record.append(conn, rows, held)

    async def run_background(self) -> None:
        """Write the replay rows and touches behind (all of them when cancelled), close idle reader
        connections and forget idle sessions' cached entries, until cancelled; then close the
        readers."""
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self.calls.run)
                tg.start_soon(self._sweep_idle)
        finally:
            self.readers.close()

    async def _sweep_idle(self) -> None:
        """Close idle reader connections and forget idle sessions' cached entries, until cancelled."""
        idle = self.core.settings.store_idle_secs
        while True:
            await anyio.sleep(idle / 4)
            await anyio.to_thread.run_sync(self.readers.sweep, idle)
            self.entries.sweep(idle)

    async def replay(self, caller: Caller, session_id: str) -> dict[str, Any]:
        require_admin(caller, "reading a session's replay")
        row = await self._session(caller, SessionRef(session_id=session_id))
        await self.calls.flush(row["id"])  # every call noted so far, oldest first
        rows = await self._read(row["id"], brain.calls) or []
        events = [
            {"at": iso(r["at"]), "tool": r["tool"], "arguments": r["arguments"], "outcome": r["outcome"]} for r in rows
        ]
        return {"session_id": session_id, "events": events}

    # -- files -----------------------------------------------------------------------------------------

    async def copy(self, source_id: str, target_id: str) -> None:
        """Copy a brain for a fork: a consistent snapshot of the source, read without its actor."""
        await self.calls.flush(source_id)  # the fork's copy holds the record up to now
        source = self.path_of(source_id)
        if not source.exists():
            return
        target = self.path_of(target_id)
        self.pushes.forget(target_id)  # a new file: the index reads it whole
        self.entries.forget(target_id)
        await anyio.to_thread.run_sync(_snapshot, source, target)
        self.touched.add(target_id)

    async def remove(self, session_id: str) -> None:
        await self.calls.discard(session_id)
        self.pushes.forget(session_id)
        self.entries.forget(session_id)
        await self.pool.close(session_id)
        self.readers.forget(session_id)
        # In a thread: an unlink can block on a slow disk, and this loop serves every caller.
        await anyio.to_thread.run_sync(_unlink_brain, self.path_of(session_id))
        self.writes += 1
        self.touched.add(session_id)


def _entry_at(conn: sqlite3.Connection, where: str) -> brain.Entry:
    entry = brain.read_entry(conn, where)
    if entry is None:
        if brain.is_directory(conn, where):
            raise conflict(f"{where} is a directory, not an entry")
        raise not_found(f"no brain entry at {where}")
    return entry


def _level_or_entry(conn: sqlite3.Connection, where: str) -> tuple[list[dict[str, Any]], bool]:
    if brain.read_entry(conn, where) is not None:
        raise conflict(f"{where} is an entry, not a directory; read it with the entry route")
    return brain.level(conn, where, entries.LISTING_MAX)


def _unlink_brain(path: Path) -> None:
    """Remove a brain file and its WAL companions, whichever exist."""
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)


def _snapshot(source: Path, target: Path) -> None:
    """Copy `source` to `target`, unsealed: the copy belongs to a new, running session."""
    target.parent.mkdir(parents=True, exist_ok=True)
    src = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    try:
        dst = sqlite3.connect(target, isolation_level=None)
        try:
            src.backup(dst)
            dst.execute("PRAGMA journal_mode=WAL")
            brain.setup(dst)  # a source from before seals gets the table (and `unsynced`) first
            brain.set_seal(dst, None, now=0.0)  # the source may have ended while it was copied
        finally:
            dst.close()
    finally:
        src.close()
