"""The knowledge base's page operations: write, read, list, delete, review, revert, promote.

Every compare-and-write (`if_version`, `absent`, review's and revert's checks) happens inside one
command of the project file's actor (`store_page`), so two writers are ordered by the mailbox and
no service takes a lock. What a page's bytes say is derived before the command (`derive`), except
for review, whose patch must apply to the bytes the command finds. The operation's signal is
appended to hub.db after the page's commit (`signals`), and the event is published by the hub
store's actor after that commit; no service publishes by hand.

Rules and where they are decided: paths (`paths`, the brains' canonicaliser), sizes and the
`if_version` condition (`hubcore.services.entries`), the file limit (checked on the write's size:
every version's bytes are kept once, in the file, so a write's bytes are the only copy it adds;
a delete adds none and is never refused for it), trust (`trust`, from the write log).
"""

from __future__ import annotations

import builtins
import sqlite3
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import anyio

from hubcore.caller import Caller
from hubcore.clock import iso
from hubcore.errors import HubError, conflict, invalid, not_found
from hubcore.services import entries
from hubcore.services.access import require_admin
from hubcore.services.core import Core
from hubcore.services.kb import frontmatter, paths, signals
from hubcore.services.kb.bundle import BundleService, page_findings
from hubcore.services.kb.derive import Written, decoded, derive
from hubcore.services.kb.facts import PageFacts
from hubcore.services.kb.files import KbFiles
from hubcore.services.kb.models import KbDelete, KbList, KbPromote, KbRead, KbRevert, KbReview, KbWrite
from hubcore.services.kb.trust import Note, brings_verification, trust
from hubcore.store import kb

INLINE_DERIVE_MAX = 16 * 1024  # larger pages are parsed on a worker thread (about 5 ms and up), off the event loop
# How a promote reads the session brain entry it copies: (caller, session id, path) -> the
# brains service's entry (`content`, and the session's `name` and `project_id`).
BrainEntry = Callable[[Caller, str, str], Awaitable[dict[str, Any]]]


@dataclass(frozen=True)
class Stored:
    page: kb.Page
    lint: list[dict[str, Any]]


@dataclass(frozen=True)
class Put:
    """One page write as the command sees it: what its bytes say (`facts`), or, for a small page,
    its text, derived inside the command on the file's own thread (so the write's caller hands
    over once, instead of parsing on the event loop and then waking the actor's thread)."""

    path: str
    data: bytes
    version: str
    facts: Written | str
    op: str
    actor: str
    at: float
    condition: str | None
    review: bool = False

    def written(self) -> Written:
        return self.facts if isinstance(self.facts, Written) else derive(self.path, self.facts)


def store_page(conn: sqlite3.Connection, put: Put) -> Stored:
    """Write `put` if its condition holds: the bytes kept once, the page row with its trust, the
    log row with its note; and the page's own lint findings as stored. Runs inside one actor
    command."""
    current = kb.page(conn, put.path)
    entries.require_version(current.version if current else None, put.condition)
    if current is None:
        require_file_place(conn, put.path)
    kb.keep(conn, put.version, put.data)
    written = put.written()
    stored = written.verified
    replaced = decoded(current.derived, put.path, None).verified if current else None
    verifies = put.review or brings_verification(stored, replaced, put.at)
    kb.append_log(
        conn,
        op=put.op,
        path=put.path,
        actor=put.actor,
        at=put.at,
        version=put.version,
        size_bytes=len(put.data),
        replaced=current.version if current else None,
        verifies=verifies,
        summary=written.summary,
    )
    notes = (Note(r.at, r.version, r.verifies) for r in kb.path_log(conn, put.path))
    page = kb.Page(
        put.path,
        put.version,
        len(put.data),
        put.at,
        put.actor,
        trust(stored, notes, put.version),
        written.stale_after,
        written.derived.to_json(),
    )
    kb.put_page(conn, page)
    facts = PageFacts(
        page.path, page.size_bytes, page.version, written.derived, page.trust, page.written_by, iso(page.written_at)
    )
    return Stored(page, page_findings(conn, facts))


def require_file_place(conn: sqlite3.Connection, path: str) -> None:
    """A new page may not sit where a directory is, nor beneath another page."""
    if kb.is_directory(conn, path):
        raise conflict(f"{path} is a directory; a page cannot replace it")
    above = kb.page_above(conn, path)
    if above is not None:
        raise conflict(f"{above} is a page, so it cannot be a directory holding {path}")


async def derived(path: str, content: str) -> Written | str:
    """What a write hands its command: a small page's text, checked here (a frontmatter control
    character is refused before anything is sent) and derived in the command; a large page's
    facts, derived on a worker thread so the file's actor is not held up by the parse."""
    if len(content) <= INLINE_DERIVE_MAX:
        frontmatter.require_writable(content)
        return content
    return await anyio.to_thread.run_sync(derive, path, content)


def page_row(page: kb.Page, content: bytes) -> dict[str, Any]:
    return {
        "path": page.path,
        "content": content.decode("utf-8"),
        "version": page.version,
        "size_bytes": page.size_bytes,
        "last_write": {"actor": page.written_by, "at": iso(page.written_at)},
    }


class PagesService(BundleService):
    """Pages of every project's knowledge base. `brain_entry` reads a session brain entry for
    promote (the sessions part's read, handed in by the hub, which composes the parts)."""

    def __init__(self, core: Core, files: KbFiles, brain_entry: BrainEntry | None = None) -> None:
        super().__init__(core, files)
        self.brain_entry = brain_entry

    # -- reads -------------------------------------------------------------------------------------

    async def read(self, caller: Caller, req: KbRead) -> dict[str, Any]:
        """A page as it stands, or with `version` one version its history names while kept."""
        await signals.require_project(self.core, caller, req.project_id)
        path, version = req.path, req.version
        if version is None:
            found = await self.files.read(req.project_id, lambda conn: _current(conn, path), None)
            if found is None:
                raise not_found(f"no page at {path}")
            return page_row(*found)
        row = await self.files.read(req.project_id, lambda conn: _version(conn, path, version), None)
        if row is None:
            raise _no_version(path, version)
        return row

    async def list(self, caller: Caller, req: KbList) -> dict[str, Any]:
        """One directory level (`meta`: every page beneath with its row fields), at most `limit`."""
        await signals.require_project(self.core, caller, req.project_id)
        if req.meta:
            return await self.meta_listing(req.project_id, req.prefix, req.limit)
        empty: builtins.list[dict[str, Any]] = []
        listed = await self.files.read(req.project_id, lambda conn: _level(conn, req.prefix), empty)
        return {"entries": listed[: req.limit], "truncated": len(listed) > req.limit}

    # -- writes ------------------------------------------------------------------------------------

    async def write(self, caller: Caller, req: KbWrite) -> dict[str, Any]:
        """Write a page (conditionally with `if_version`); the write signal is best effort."""
        paths.require_writable(req.path)
        epoch = self.files.epoch(req.project_id)
        await signals.require_project(self.core, caller, req.project_id)
        data = entries.encode(req.content, limit=entries.PAGE_MAX)
        facts = await derived(req.path, req.content)
        warnings = self._growth(req.project_id, len(data), req.if_version)
        put = Put(
            req.path, data, entries.version_of(data), facts, "kb.put", caller.actor, self.core.now(), req.if_version
        )
        stored = await self.files.execute(req.project_id, lambda conn: store_page(conn, put), epoch=epoch)
        page = stored.page
        await signals.signal(self.core, caller, req.project_id, "kb_written", page.path)
        return {
            "ok": True,
            "path": page.path,
            "version": page.version,
            "size_bytes": page.size_bytes,
            "lint": stored.lint,
            "warnings": warnings,
        }

    def _growth(self, project_id: str, incoming: int, condition: str | None) -> builtins.list[str]:
        """The file limit's warnings, or its refusal; a refused condition on a project without a
        file is refused here, so that it creates no file."""
        if not self.files.exists(project_id):
            entries.require_version(None, condition)
        return entries.file_growth(f"knowledge base {project_id}", self.files.bytes_of(project_id) or 0, incoming)

    async def delete(self, caller: Caller, req: KbDelete) -> dict[str, Any]:
        """Delete a page; its bytes stay kept. A directory holding pages is refused (400); a
        missing page is 404 with nothing logged or signalled."""
        epoch = self.files.epoch(req.project_id)
        await signals.require_project(self.core, caller, req.project_id, room=True)
        path, condition, now, actor = req.path, req.if_version, self.core.now(), caller.actor

        def write(conn: sqlite3.Connection) -> None:
            current = kb.page(conn, path)
            if current is None:
                if kb.is_directory(conn, path):
                    raise invalid(f"{path} is a directory holding pages; delete its pages first", field="path")
                raise not_found(f"no page at {path}")
            entries.require_version(current.version, condition)
            kb.remove_page(conn, path)
            kb.append_log(
                conn,
                op="kb.delete",
                path=path,
                actor=actor,
                at=now,
                version=None,
                size_bytes=None,
                replaced=current.version,
                verifies=False,
                summary=None,
            )

        if not self.files.exists(req.project_id):
            raise not_found(f"no page at {path}")
        await self.files.execute(req.project_id, write, epoch=epoch)
        await signals.signal(self.core, caller, req.project_id, "kb_deleted", path)
        return {"ok": True, "path": path}

    async def review(self, caller: Caller, req: KbReview) -> dict[str, Any]:
        """The human vouches for the page: `{by: human, at: now}` appended to `verified`, no other
        byte changed; with `if_version`, a page changed since is 409."""
        require_admin(caller, "reviewing a page")
        epoch = self.files.epoch(req.project_id)
        await signals.require_project(self.core, caller, req.project_id, room=True)
        now, path = self.core.now(), req.path

        def write(conn: sqlite3.Connection) -> Stored:
            current = kb.page(conn, path)
            if current is None:
                raise not_found(f"no page at {path}")
            entries.require_version(current.version, req.if_version)
            content = kb.blob(conn, current.version) or b""
            patched = frontmatter.append_verified(content.decode("utf-8"), "human", iso(now))
            data = entries.encode(patched, limit=entries.PAGE_MAX)
            put = Put(
                path,
                data,
                entries.version_of(data),
                derive(path, patched),
                "kb.review",
                caller.actor,
                now,
                None,
                review=True,
            )
            return store_page(conn, put)

        if not self.files.exists(req.project_id):
            raise not_found(f"no page at {path}")
        stored = await self.files.execute(req.project_id, write, epoch=epoch)
        await signals.signal(self.core, caller, req.project_id, "kb_reviewed", path, {"verified_by": "human"})
        return {"ok": True, "path": path, "version": stored.page.version}

    async def revert(self, caller: Caller, req: KbRevert) -> dict[str, Any]:
        """Write a kept version back (logged `kb.revert`); nothing at all when it is the held one
        (`changed: false`). `if_version: absent` restores a deleted page only while still gone."""
        paths.require_writable(req.path)
        epoch = self.files.epoch(req.project_id)
        await signals.require_project(self.core, caller, req.project_id, room=True)
        path, version = req.path, req.version
        content = await self.files.read(req.project_id, lambda conn: _kept_bytes(conn, path, version), None)
        if content is None:
            raise _no_version(path, version)
        warnings = self._growth(req.project_id, len(content), None)
        facts = await derived(path, content.decode("utf-8"))
        put = Put(path, content, version, facts, "kb.revert", caller.actor, self.core.now(), req.if_version)

        def write(conn: sqlite3.Connection) -> Stored | None:
            current = kb.page(conn, path)
            if current is not None and current.version == version:
                entries.require_version(current.version, put.condition)
                return None  # already held: nothing is written, logged or signalled
            if _kept_bytes(conn, path, version) is None:  # forgotten since it was read
                raise _no_version(path, version)
            return store_page(conn, put)

        stored = await self.files.execute(req.project_id, write, epoch=epoch)
        if stored is not None:
            await signals.signal(self.core, caller, req.project_id, "kb_reverted", path, {"version": version})
        return {
            "ok": True,
            "path": path,
            "store": "project",
            "version": version,
            "size_bytes": len(content),
            "lint": stored.lint if stored else [],
            "warnings": warnings,
            "changed": stored is not None,
        }

    async def promote(self, caller: Caller, req: KbPromote) -> dict[str, Any]:
        """Copy a session brain entry into a page: its frontmatter patched with the keys given and
        a `sources` entry citing the session (title: session name and path; resource: the entry's
        session-brain URI)."""
        paths.require_writable(req.to_path, field="to_path")
        epoch = self.files.epoch(req.project_id)
        await signals.require_project(self.core, caller, req.project_id, room=True)
        if self.brain_entry is None:
            raise HubError("unavailable", "this hub keeps no session brains to promote from")
        entry = await self.brain_entry(caller, req.from_session_id, req.from_path)
        source = frontmatter.Source(
            f"{entry['name']}: {entry['path']}", f"hub://brain/{entry['session_id']}{entry['path']}"
        )
        patched = frontmatter.promote_patch(
            entry["content"], source, type=req.type, title=req.title, description=req.description, tags=req.tags
        )
        data = entries.encode(patched, limit=entries.PAGE_MAX)
        facts = await derived(req.to_path, patched)
        self._growth(req.project_id, len(data), req.if_version)  # its warnings are not in promote's reply
        put = Put(
            req.to_path,
            data,
            entries.version_of(data),
            facts,
            "kb.promote",
            caller.actor,
            self.core.now(),
            req.if_version,
        )
        stored = await self.files.execute(req.project_id, lambda conn: store_page(conn, put), epoch=epoch)
        await signals.signal(
            self.core,
            caller,
            req.project_id,
            "kb_promoted",
            stored.page.path,
            {"from_session_id": entry["session_id"], "from_path": entry["path"]},
        )
        return {"ok": True, "path": stored.page.path, "version": stored.page.version, "lint": stored.lint}


def _current(conn: sqlite3.Connection, path: str) -> tuple[kb.Page, bytes] | None:
    page = kb.page(conn, path)
    if page is None:
        return None
    return page, kb.blob(conn, page.version) or b""


def _no_version(path: str, version: str) -> HubError:
    return not_found(f"no kept version {version} of {path}")


def _kept_bytes(conn: sqlite3.Connection, path: str, version: str) -> bytes | None:
    """The bytes of `version` when the page's history names it and they are still kept."""
    return kb.blob(conn, version) if kb.kept_row(conn, path, version) is not None else None


def _version(conn: sqlite3.Connection, path: str, version: str) -> dict[str, Any]:
    row = kb.kept_row(conn, path, version)
    content = kb.blob(conn, version) if row is not None else None
    if row is None or content is None:
        raise _no_version(path, version)
    held = kb.page(conn, path)
    return {
        "path": path,
        "content": content.decode("utf-8"),
        "version": version,
        "size_bytes": len(content),
        "current": held is not None and held.version == version,
        "at": iso(row.at),
        "actor": row.actor,
    }


def _level(conn: sqlite3.Connection, prefix: str) -> list[dict[str, Any]]:
    if kb.page(conn, prefix) is not None:
        raise conflict(f"{prefix} is a page, not a directory; read it instead")
    return kb.level(conn, prefix)
