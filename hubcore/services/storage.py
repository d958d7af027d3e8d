"""The storage report, and pruning ended sessions with an undo window.

Arithmetic the report keeps (spec: Storage row arithmetic): each row's `session_bytes` and the
columns of the parts' storage kinds (`Part.storage_kinds`: `artifact_bytes`, `kb_bytes`) sum
exactly to `by_kind.sessions` and `by_kind.<kind>` (`.artifacts`, `.knowledge`); rows'
`events_bytes` plus `events_shared_bytes` equal `by_kind.events` (the hub store's file and its
write-ahead log); `total_bytes` is the sum of every row kind (the hub store is shared and counted in
`used_bytes`, the whole data directory). Numbers that cost a syscall
are memoised for ten seconds behind a write counter; counts are always read fresh. A number that
cannot be measured is null, and then so is every sum it belongs to. The volume numbers and the node
are the hub's own (`hubcore.services.volume`), the same in Home and whichever parts the hub has.

The feed's weight comes from the per-project tallies the event store keeps as it appends
(`feed_stats`), so it is weighed incrementally from the first event; project deletion removes the
project's tally with its events, and prune touches no event.
"""

from __future__ import annotations

import secrets
import sqlite3
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager, nullcontext
from typing import Annotated, Any

import anyio
from pydantic import Field, StringConstraints

from hubcore.caller import Caller
from hubcore.clock import iso
from hubcore.errors import conflict, not_found
from hubcore.metrics import store_bytes
from hubcore.services.access import project_missing, require_admin
from hubcore.services.core import Core
from hubcore.services.fields import ProjectId, SessionId
from hubcore.services.requests import Request
from hubcore.services.sessions import session_missing
from hubcore.services.volume import Memo
from hubcore.tokens import token_hash

SWEEP_EVERY_SECS = 5.0
UNDO_TOKEN_BYTES = 24  # minted by `secrets.token_urlsafe`: 32 URL-safe characters
UNDO_TOKEN_PATTERN = f"^[A-Za-z0-9_-]{{{(UNDO_TOKEN_BYTES * 4 + 2) // 3}}}$"


# The prune and undo routes take nothing but their path: any other member (a query parameter or a
# body member) is refused naming it, so `DELETE /storage/sessions?project_id=web` cannot prune
# every project's sessions while its caller believes it pruned one project's.
class PruneAll(Request):
    """`DELETE /storage/sessions`: every ended session."""


class PruneProject(Request):
    """`DELETE /storage/projects/:id/sessions`: one project's ended sessions."""

    project_id: ProjectId


class PruneSession(Request):
    """`DELETE /storage/sessions/:id`: one ended session."""

    session_id: Annotated[SessionId, Field(description="the ended session to prune")]


class PruneUndo(Request):
    """`POST /prune/undo/:token`: restore a pruned session within its undo window."""

    token: Annotated[
        str, StringConstraints(pattern=UNDO_TOKEN_PATTERN), Field(description="the undo token a prune returned")
    ]


Prune = PruneAll | PruneProject | PruneSession


def add(*values: int | None) -> int | None:
    """A sum that is unknown when any part is unknown."""
    return None if any(v is None for v in values) else sum(v for v in values if v is not None)


class StorageService:
    def __init__(
        self,
        core: Core,
        *,
        brain_bytes: Callable[[str], int | None],
        remove_brain: Callable[[str], Awaitable[None]],
        writes: Callable[[], int],
        changing: Callable[[str | None], AbstractAsyncContextManager[None]] | None = None,
    ) -> None:
        self.core = core
        self._brain_bytes = brain_bytes
        self._remove_brain = remove_brain
        # The sessions service's `changing`: the replay written first, remembered sessions doubted.
        self._changing = changing or (lambda _: nullcontext())
        self.memo = Memo(writes)

    # -- the report ------------------------------------------------------------------------------

    async def report(self, caller: Caller) -> dict[str, Any]:
        require_admin(caller, "the storage report")
        projects, sessions, feed = await self.core.store.read(_report_rows)
        data = self.core.settings.data_path
        volume = await self.core.datadir.volume()
        hub_db = await self.memo.get("hub_db", lambda: store_bytes(data / "hub.db"))
        session_sizes = await self.memo.get("brains", lambda: {s["id"]: self._brain_bytes(s["id"]) for s in sessions})
        columns = self._columns()
        held = await self._held_by_parts(columns)
        rows = [self._row(p, sessions, feed, session_sizes, held, columns) for p in projects]
        by_kind = {
            "events": hub_db,
            "sessions": add(*(r["session_bytes"] for r in rows)),
            **{kind: add(*(r[column] for r in rows)) for kind, column in columns.items()},
        }
        events_rows = sum(r["events_bytes"] for r in rows)
        return {
            "total_bytes": add(by_kind["sessions"], *(by_kind[kind] for kind in columns)),
            "used_bytes": volume["used_bytes"],
            "capacity_bytes": volume["capacity_bytes"],
            "free_bytes": volume["free_bytes"],
            "data_path": str(data),
            "node": self.core.datadir.node(),
            "by_kind": by_kind,
            "events_shared_bytes": None if hub_db is None else hub_db - events_rows,
            "prunable": _prunable(sessions, session_sizes),
            "projects": rows,
        }

    def _row(
        self,
        project: sqlite3.Row,
        sessions: list[sqlite3.Row],
        feed: dict[str, sqlite3.Row],
        session_sizes: dict[str, int | None],
        held: dict[str, dict[str, int | None]],
        columns: dict[str, str],
    ) -> dict[str, Any]:
        pid = project["id"]
        own = [s for s in sessions if s["project_id"] == pid]
        tally = feed.get(pid)
        row: dict[str, Any] = {
            "project_id": pid,
            "project_display_name": project["display_name"],
            "events_bytes": int(tally["bytes"]) if tally is not None else 0,
            "session_bytes": add(*(session_sizes.get(s["id"], 0) for s in own)),
            **{column: held[kind].get(pid, 0) for kind, column in columns.items()},
            "prunable": _prunable(own, session_sizes),
        }
        last = max(
            [s["last_activity_at"] for s in own] + ([tally["newest_at"]] if tally is not None else []), default=None
        )
        if last is not None:
            row["last_write"] = iso(last)
        return row

    def _columns(self) -> dict[str, str]:
        """The other parts' storage kinds with their row columns, from the binary's part types (a
        part this hub lacks still has its column: zero bytes held)."""
        return {kind: column for part in self.core.part_types for kind, column in part.storage_kinds.items()}

    async def _held_by_parts(self, columns: dict[str, str]) -> dict[str, dict[str, int | None]]:
        """Each project's bytes in the other parts' stores, by kind. A kind no part in the hub
        holds is zero for every project: an absent store holds nothing."""
        held: dict[str, dict[str, int | None]] = {kind: {} for kind in columns}
        for part in self.core.parts:
            for kind, per_project in (await part.project_bytes()).items():
                held.setdefault(kind, {}).update(per_project)
        return held

    async def project_stats(self, project_id: str) -> dict[str, int | None]:
        """A project's sessions for its stats: how many (pruned ones are gone) and their brain bytes."""
        ids = await self.core.store.read(
            lambda conn: [
                r[0]
                for r in conn.execute(
                    "SELECT id FROM sessions WHERE project_id = ? AND pruned_at IS NULL", (project_id,)
                )
            ]
        )
        return {"sessions": len(ids), "disk_bytes": add(*(self._brain_bytes(sid) for sid in ids))}

    async def prunable(self) -> dict[str, int | None]:
        _, sessions, _ = await self.core.store.read(_report_rows)
        sizes = {s["id"]: self._brain_bytes(s["id"]) for s in sessions if _is_prunable(s)}
        return _prunable(sessions, sizes)

    # -- prune and undo --------------------------------------------------------------------------

    async def prune(self, caller: Caller, req: Prune) -> dict[str, Any]:
        """Mark ended sessions deleted: one, one project's, or all. Each gets its own undo token."""
        require_admin(caller, "pruning sessions")
        session_id = req.session_id if isinstance(req, PruneSession) else None
        project_id = req.project_id if isinstance(req, PruneProject) else None
        now = self.core.now()
        window = self.core.settings.prune_undo_secs

        def write(conn: sqlite3.Connection) -> list[dict[str, Any]]:
            targets = _prune_targets(conn, session_id, project_id)
            pruned = []
            for row in targets:
                token = secrets.token_urlsafe(UNDO_TOKEN_BYTES)
                conn.execute(
                    "UPDATE sessions SET pruned_at = ?, undo_token_hash = ? WHERE id = ?",
                    (now, token_hash(token), row["id"]),
                )
                pruned.append(
                    {
                        "session_id": row["id"],
                        "project_id": row["project_id"],
                        "name": row["name"],
                        "undo_token": token,
                        "undo_until": iso(now + window),
                    }
                )
            return pruned

        # No brain file is touched: each has been sealed since its session ended (the only state
        # prune takes), and the one thing an ended brain still takes, its call log, reads the row.
        async with self._changing(None):  # the calls noted before the prune land first
            pruned = await self.core.store.execute(write)
        for item in pruned:
            item["bytes"] = self._brain_bytes(item["session_id"])
        return {"pruned": pruned, "count": len(pruned), "bytes": add(*(p["bytes"] for p in pruned))}

    async def undo(self, caller: Caller, req: PruneUndo) -> dict[str, Any]:
        require_admin(caller, "undoing a prune")
        token = req.token
        now, window = self.core.now(), self.core.settings.prune_undo_secs

        def write(conn: sqlite3.Connection) -> dict[str, Any]:
            row = conn.execute(
                "SELECT id, project_id, name, pruned_at FROM sessions WHERE undo_token_hash = ?", (token_hash(token),)
            ).fetchone()
            if row is None or now - row["pruned_at"] >= window:
                raise not_found("no prune to undo for this token (unknown, used, or its window has passed)")
            conn.execute("UPDATE sessions SET pruned_at = NULL, undo_token_hash = NULL WHERE id = ?", (row["id"],))
            return {"session_id": row["id"], "project_id": row["project_id"], "name": row["name"], "restored": True}

        return await self.core.store.execute(write)  # restored ended, so its brain stays sealed

    async def sweep(self) -> list[str]:
        """Remove sessions whose undo window has passed: their rows, then their brain files."""
        cutoff = self.core.now() - self.core.settings.prune_undo_secs

        def write(conn: sqlite3.Connection) -> list[str]:
            gone = [
                r[0]
                for r in conn.execute(
                    "SELECT id FROM sessions WHERE pruned_at IS NOT NULL AND pruned_at <= ?", (cutoff,)
                )
            ]
            conn.executemany("DELETE FROM sessions WHERE id = ?", [(sid,) for sid in gone])
            return gone

        gone = await self.core.store.execute(write)
        for sid in gone:
            await self._remove_brain(sid)
        return gone

    async def run_sweeper(self) -> None:
        while True:
            await anyio.sleep(SWEEP_EVERY_SECS)
            await self.sweep()


def _is_prunable(row: sqlite3.Row) -> bool:
    return bool(row["status"] == "ended" and row["pruned_at"] is None)


def _prunable(sessions: list[sqlite3.Row], sizes: dict[str, int | None]) -> dict[str, int | None]:
    candidates = [s for s in sessions if _is_prunable(s)]
    return {"sessions": len(candidates), "bytes": add(*(sizes.get(s["id"], 0) for s in candidates))}


def _report_rows(conn: sqlite3.Connection) -> tuple[list[sqlite3.Row], list[sqlite3.Row], dict[str, sqlite3.Row]]:
    projects = conn.execute("SELECT id, display_name FROM projects ORDER BY id").fetchall()
    sessions = conn.execute(
        "SELECT id, project_id, status, pruned_at, last_activity_at FROM sessions ORDER BY id"
    ).fetchall()
    feed = {r["project_id"]: r for r in conn.execute("SELECT project_id, bytes, newest_at FROM feed_stats")}
    return projects, sessions, feed


def _prune_targets(conn: sqlite3.Connection, session_id: str | None, project_id: str | None) -> list[sqlite3.Row]:
    if session_id is not None:
        row = conn.execute(
            "SELECT id, project_id, name, status FROM sessions WHERE id = ? AND pruned_at IS NULL", (session_id,)
        ).fetchone()
        if row is None:
            raise session_missing(session_id)
        if row["status"] != "ended":
            raise conflict(f"session {session_id} is running; only ended sessions are pruned")
        return [row]
    if project_id is not None:
        if not conn.execute("SELECT 1 FROM projects WHERE id = ?", (project_id,)).fetchone():
            raise project_missing(project_id)
        return conn.execute(
            "SELECT id, project_id, name FROM sessions WHERE project_id = ? AND status = 'ended' "
            "AND pruned_at IS NULL ORDER BY id",
            (project_id,),
        ).fetchall()
    return conn.execute(
        "SELECT id, project_id, name FROM sessions WHERE status = 'ended' AND pruned_at IS NULL ORDER BY id"
    ).fetchall()
