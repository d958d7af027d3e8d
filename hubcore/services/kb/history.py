"""A knowledge base's history: the write log, a page's versions, and forgetting kept bytes.

History is keyed by path; a deleted page's history stays readable. Every version a write stored
is kept (once, however many rows name it) until the admin forgets it: forgetting marks the page's
log rows `kept: false` for every version but the held one (all of them for a deleted page) and
removes the bytes no page holds and no kept row names. The forget's `system` event, with its
counts, is appended before anything is removed; if the removal then fails (or finds the page
changed since it was counted), a rollback event follows and nothing is removed.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from hubcore.caller import Caller
from hubcore.clock import iso
from hubcore.errors import HubError, not_found
from hubcore.services.access import require_admin
from hubcore.services.core import Core
from hubcore.services.kb import signals
from hubcore.services.kb.files import KbFiles
from hubcore.services.kb.models import KbForget, KbHistory, KbVersions
from hubcore.store import kb
from hubcore.store.kb import TOP, LogRow


def history_row(row: LogRow) -> dict[str, Any]:
    return {"op": row.op, "path": row.path, "actor": row.actor, "at": iso(row.at), "version": row.version}


def version_row(row: LogRow, held: str | None) -> dict[str, Any]:
    return {
        "id": row.id,
        "op": row.op,
        "actor": row.actor,
        "at": iso(row.at),
        "version": row.version,
        "size_bytes": row.size_bytes,
        "summary": row.summary,
        "kept": row.kept,
        "current": held is not None and row.version == held,
    }


def _filters(req: KbHistory) -> tuple[str, list[Any]]:
    conds, args = ["1"], list[Any]()
    if req.path is not None:
        conds.append("path = ?")
        args.append(req.path)
    if req.prefix is not None:
        root = req.prefix.rstrip("/") + "/"
        conds.append("path > ? AND path < ?")
        args += [root, root + TOP]
    if req.actor is not None:
        conds.append("actor = ?")
        args.append(req.actor)
    if req.op is not None:
        conds.append("op = ?")
        args.append(req.op)
    return " AND ".join(conds), args


def _paged(rows: list[LogRow], limit: int) -> tuple[list[LogRow], int | None, bool]:
    """The page (rows were read one past `limit`), its `next_before` and `truncated`."""
    truncated = len(rows) > limit
    shown = rows[:limit]
    return shown, shown[-1].id if truncated and shown else None, truncated


@dataclass(frozen=True)
class ForgetPlan:
    """What a forget removes: the log rows whose bytes stop being kept, the distinct versions
    and their bytes, and how many of those versions nothing else keeps (their bytes go)."""

    rows: tuple[int, ...]
    versions: tuple[str, ...]
    bytes: int
    unreferenced: int

    def counts(self) -> dict[str, int]:
        return {
            "versions_forgotten": len(self.versions),
            "bytes_forgotten": self.bytes,
            "unreferenced_forgotten": self.unreferenced,
        }


def plan_forget(conn: sqlite3.Connection, path: str) -> ForgetPlan | None:
    """The forget of `path` as the file stands; None when its history names no write."""
    log = list(kb.path_log(conn, path))
    if not log:
        return None
    page = kb.page(conn, path)
    held = page.version if page is not None else None
    doomed = [r for r in log if r.kept and r.version is not None and r.version != held]
    sizes = {r.version: r.size_bytes or 0 for r in doomed if r.version is not None}
    ids = {r.id for r in doomed}
    unreferenced = sum(1 for v in sizes if _only_here(conn, v, ids))
    return ForgetPlan(tuple(sorted(ids)), tuple(sorted(sizes)), sum(sizes.values()), unreferenced)


def _only_here(conn: sqlite3.Connection, version: str, forgotten: set[int]) -> bool:
    """Whether nothing but the rows being forgotten keeps `version` (no page holds it)."""
    if conn.execute("SELECT 1 FROM pages WHERE version = ? LIMIT 1", (version,)).fetchone():
        return False
    kept = [r[0] for r in conn.execute("SELECT id FROM log WHERE version = ? AND kept = 1", (version,))]
    return all(i in forgotten for i in kept)


class HistoryService:
    def __init__(self, core: Core, files: KbFiles) -> None:
        self.core = core
        self.files = files

    async def history(self, caller: Caller, req: KbHistory) -> dict[str, Any]:
        """`{rows, total, next_before, truncated}` newest first; `limit` 0 gives the count only.
        A `path` the log never named is 404."""
        await signals.require_project(self.core, caller, req.project_id)
        where, args = _filters(req)

        def read(conn: sqlite3.Connection) -> tuple[list[LogRow], int]:
            if req.path is not None and not kb.logged(conn, req.path):
                raise not_found(f"no history of {req.path}")
            return kb.query_log(conn, where, args, before=req.before, limit=req.limit + 1 if req.limit else 0)

        found = await self.files.read(req.project_id, read, None)
        if found is None:
            if req.path is not None:
                raise not_found(f"no history of {req.path}")
            found = ([], 0)
        rows, total = found
        shown, next_before, truncated = _paged(rows, req.limit)
        return {
            "rows": [history_row(r) for r in shown],
            "total": total,
            "next_before": next_before,
            "truncated": truncated,
        }

    async def versions(self, caller: Caller, req: KbVersions) -> dict[str, Any]:
        """`{path, current_version, versions, total, next_before, truncated}`, newest first."""
        await signals.require_project(self.core, caller, req.project_id)
        path = req.path

        def read(conn: sqlite3.Connection) -> tuple[list[LogRow], int, str | None]:
            if not kb.logged(conn, path):
                raise not_found(f"no history of {path}")
            rows, total = kb.query_log(conn, "path = ?", [path], before=req.before, limit=req.limit + 1)
            page = kb.page(conn, path)
            return rows, total, page.version if page is not None else None

        found = await self.files.read(req.project_id, read, None)
        if found is None:
            raise not_found(f"no history of {path}")
        rows, total, held = found
        shown, next_before, truncated = _paged(rows, req.limit)
        return {
            "path": path,
            "current_version": held,
            "versions": [version_row(r, held) for r in shown],
            "total": total,
            "next_before": next_before,
            "truncated": truncated,
        }

    async def forget(self, caller: Caller, req: KbForget) -> dict[str, Any]:
        """Forget the kept bytes of every version of `path` but the held one (all for a deleted
        page). The system event with the counts comes first; a failed removal is rolled back and
        recorded."""
        require_admin(caller, "forgetting a page's history")
        epoch = self.files.epoch(req.project_id)
        await signals.require_project(self.core, caller, req.project_id)
        pid, path = req.project_id, req.path
        plan = await self.files.read(pid, lambda conn: plan_forget(conn, path), None)
        if plan is None:
            raise not_found(f"no history of {path}")
        counts = plan.counts()
        await signals.system(
            self.core,
            caller,
            pid,
            "kb_history_forgotten",
            f"forgot {plan.bytes} bytes of {len(plan.versions)} versions of {path}",
            {"path": path, **counts},
        )

        def write(conn: sqlite3.Connection) -> None:
            if plan_forget(conn, path) != plan:
                raise HubError(
                    "conflict",
                    f"{path} changed while its history was being forgotten; nothing was forgotten",
                    retryable=True,
                )
            kb.forget_rows(conn, plan.rows)
            kb.drop_unreferenced(conn, plan.versions)

        try:
            await self.files.execute(pid, write, epoch=epoch)
        except Exception:
            await signals.system(
                self.core,
                caller,
                pid,
                "kb_history_forget_rolled_back",
                f"forgetting the history of {path} was rolled back",
                {"path": path},
            )
            raise
        return {"ok": True, "path": path, **counts}
