"""`hub-cli check`: everything that can be verified about a data directory or a backup, each
problem a line naming the file and what is wrong.

1. A directory holding `manifest.json` (a backup) has every file checked against it by presence,
   size and SHA-256 (`hubcore.ops.manifest.verify_manifest`).
2. SQLite's full `integrity_check` on hub.db and every part's store file (`Part.files`: the brain
   and knowledge base files).
3. and 4. The files hub.db references, each part checking its own (`Part.check_references`): artifact
   version rows against the blob store (each referenced blob present, of the recorded size, with
   the recorded digest); a project with knowledge base writes (its feed's `kb_*` signals, or its
   pages in the search index) and no `kb/<project>.db`; a session whose brain the search index
   holds and no `brains/<session>.db`.
5. The search index against its sources, in a data directory whose stores all passed: the sources'
   marks (each part's own `search_sources`) against the marks indexed. The index is derived and
   caught up lazily, so a difference is reported as a reading, not a problem; the index is then
   rebuilt from the stores, and the report says so. Where a store is damaged or missing the index is
   left as it is (it may be the last trace of what the store held); a backup is never written to
   (its manifest would stop matching); nor is a restored directory no hub has started on yet (opening
   it would run the first start's tidy).

Every step reads through `quiet_connection` except step 5, which opens the directory as a hub with
no background work. So `check` refuses while a hub holds the directory (`OpsRefused`).
"""

from __future__ import annotations

import dataclasses
import sqlite3
from pathlib import Path

import anyio

from hubcore.clock import Clock
from hubcore.config import HubSettings
from hubcore.errors import HubError, is_volume_full
from hubcore.hub import DataDirLocked, Hub, supported_version
from hubcore.metrics import free_bytes
from hubcore.ops.datadir import OpsRefused, held_by_hub
from hubcore.ops.findings import Finding, not_a_directory
from hubcore.ops.integrity import check_file
from hubcore.ops.layout import Parts, store_files
from hubcore.ops.manifest import MANIFEST_NAME, ManifestError, verify_manifest
from hubcore.ops.restore import RESTORED_MARK
from hubcore.ops.stores import HUB_DB, quiet_connection, relative
from hubcore.parts.catalog import PART_TYPES
from hubcore.parts.protocol import overrides
from hubcore.store.migrations import read_version

MAX_LINES_PER_FILE = 5
COMPARE_ROOM = 16 * 1024 * 1024  # room step 5 needs beyond hub.db's size (a rebuilt index, the logs)


class QuietHub(Hub):
    """A hub with no background work: no sweeper removes, expires or sends anything while `check`
    compares and rebuilds the search index through it."""

    async def start_background(self) -> None:
        return None


def refuse_if_held(root: Path) -> None:
    if held_by_hub(root):
        raise OpsRefused(
            f"data directory {root} is held by a running hub: stop it to check the directory "
            "(`hub-cli doctor` reads a running hub's directory; `hub-cli health` asks the hub)"
        )


async def check(
    root: Path, settings: HubSettings, *, clock: Clock | None = None, parts: Parts = PART_TYPES
) -> list[Finding]:
    """Every finding about `root` (see the module docstring); `OpsRefused` while a hub holds it.
    `parts`: whose files steps 2 and 3 check (the binary's, unless a test says otherwise)."""
    findings, compare = await anyio.to_thread.run_sync(_offline_steps, root, parts)
    if compare:
        findings.extend(await search_index(root, settings, clock))
    return findings


def _offline_steps(root: Path, parts: Parts) -> tuple[list[Finding], bool]:
    """Steps 1 to 4 and whether step 5 may run (blocking)."""
    if not root.is_dir():
        return [not_a_directory(root)], False
    refuse_if_held(root)
    is_backup = (root / MANIFEST_NAME).exists()
    findings = check_files(root, is_backup, parts)
    if is_backup:
        findings.append(
            Finding("search index", "not compared: a backup is checked without writing to it", problem=False)
        )
    elif any(f.problem for f in findings):
        findings.append(
            Finding(
                "search index",
                "not compared or rebuilt: fix the problems above first (the "
                "index may hold the last trace of a damaged store)",
                problem=False,
            )
        )
    elif (root / RESTORED_MARK).exists():
        findings.append(
            Finding(
                "search index",
                "not compared: the directory was restored and no hub has started "
                "on it yet (its first start tidies it); start the hub once and check "
                "again",
                problem=False,
            )
        )
    elif (skip := _schema_mismatch(root)) is not None or (skip := _too_full(root)) is not None:
        findings.append(skip)
    else:
        return findings, True
    return findings, False


def check_files(root: Path, is_backup: bool, parts: Parts = PART_TYPES) -> list[Finding]:
    """Steps 1 to 4 (blocking)."""
    findings: list[Finding] = []
    if is_backup:
        findings.extend(_manifest(root))
    if not (root / HUB_DB).is_file() and not any(f.subject == HUB_DB for f in findings):
        findings.append(Finding(HUB_DB, "missing"))
    damaged: list[Finding] = []
    for path in store_files(root, parts):
        lines = check_file(path)
        if lines:
            shown = "; ".join(lines[:MAX_LINES_PER_FILE])
            more = f" (and {len(lines) - MAX_LINES_PER_FILE} more)" if len(lines) > MAX_LINES_PER_FILE else ""
            damaged.append(Finding(relative(root, path), f"integrity check failed: {shown}{more}"))
    findings.extend(damaged)
    if (root / HUB_DB).is_file() and not any(f.subject == HUB_DB for f in damaged):
        findings.extend(_hub_db_references(root, parts))
    if not any(f.problem for f in findings):
        count = len(store_files(root, parts))
        findings.append(Finding("stores", f"{count} SQLite files passed the integrity check", problem=False))
    return findings


def _manifest(root: Path) -> list[Finding]:
    try:
        found = verify_manifest(root)
    except ManifestError as exc:
        return [Finding(MANIFEST_NAME, str(exc))]
    if not found:
        return [Finding(MANIFEST_NAME, "every listed file is present with its size and digest", problem=False)]
    return [Finding(p.path, p.detail) for p in found]


def _hub_db_references(root: Path, parts: Parts) -> list[Finding]:
    """Step 3: what hub.db references that must exist beside it, each part checking its own."""
    try:
        with quiet_connection(root / HUB_DB) as conn:
            if read_version(conn) == 0:
                return [Finding(HUB_DB, "holds no hub schema")]
            return [finding for part in parts for finding in part.check_references(conn, root)]
    except sqlite3.Error as exc:
        return [Finding(HUB_DB, f"cannot be read ({exc})")]


def _schema_mismatch(root: Path) -> Finding | None:
    """Why the search index cannot be compared by this binary, if it cannot."""
    with quiet_connection(root / HUB_DB) as conn:
        version = read_version(conn)
    binary = supported_version()
    if version == binary:
        return None
    if version > binary:
        return Finding(
            "schema", f"hub.db is at v{version}, newer than this binary supports (v{binary}): run a newer agent-hub"
        )
    return Finding(
        "search index",
        f"not compared: hub.db is at v{version} and this binary at v{binary}; start "
        "the hub once (it migrates the store) and check again",
        problem=False,
    )


def _too_full(root: Path) -> Finding | None:
    """Step 5 opens the directory as a hub (it may migrate nothing, but it writes: a lock, the
    logs' index files, the rebuilt index), so on a volume without room for that it is skipped and
    the verdict rests on steps 1 to 4, which only read."""
    free = free_bytes(root)
    try:
        needed = (root / HUB_DB).stat().st_size + COMPARE_ROOM
    except OSError:
        needed = COMPARE_ROOM
    if free is None or free >= needed:
        return None
    return Finding(
        "search index",
        f"not compared: the volume has {free} bytes free and comparing may rebuild "
        f"the index (it needs about {needed}); free space and check again",
        problem=False,
    )


async def search_index(root: Path, settings: HubSettings, clock: Clock | None) -> list[Finding]:
    """Step 5, guarded: a volume that fills up while it runs ends the step with a reading, not a
    traceback (the stores were found sound by then, and the index is derived data)."""
    try:
        return await _compare_index(root, settings, clock)
    except OpsRefused:
        raise
    except (HubError, OSError, sqlite3.Error, ExceptionGroup) as exc:
        if not _full_or_io(exc):
            raise
        return [
            Finding(
                "search index",
                f"not compared: the volume could not take the comparison's writes "
                f"({_first_cause(exc)}); free space and check again",
                problem=False,
            )
        ]


def _full_or_io(exc: BaseException) -> bool:
    """Whether `exc` (or every exception in its group) is the volume refusing a write."""
    if isinstance(exc, BaseExceptionGroup):
        return all(_full_or_io(e) for e in exc.exceptions)
    if is_volume_full(exc):
        return True
    return isinstance(exc, sqlite3.OperationalError) and "disk I/O error" in str(exc)


def _first_cause(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup):
        exc = exc.exceptions[0]
    return str(exc)[:200]


async def _compare_index(root: Path, settings: HubSettings, clock: Clock | None) -> list[Finding]:
    """Compare the index with its sources through the parts; rebuild it on any difference."""
    quiet = dataclasses.replace(settings, data_dir=str(root), notify_url=None, integrity_sample_secs=0)
    try:
        async with QuietHub.open(quiet, clock=clock) as hub:
            indexed = dict(
                await hub.core.store.read(
                    lambda conn: [(str(s), str(m)) for s, m in conn.execute("SELECT source, mark FROM search_marks")]
                )
            )
            listed: dict[str, str] = {}
            for part in hub.parts:
                if overrides(part, "search_documents"):
                    listed.update(await part.search_sources())
            behind = sorted(s for s, mark in listed.items() if indexed.get(s) != mark)
            gone = sorted(set(indexed) - set(listed))
            if not behind and not gone:
                return [Finding("search index", f"matches its {len(listed)} sources", problem=False)]
            await hub.search_index.rebuild()
    except DataDirLocked:
        raise OpsRefused(f"data directory {root} was taken by a hub while it was being checked") from None
    return [
        Finding(
            "search index",
            f"differed from its sources ({_drift(behind, gone)}); rebuilt from "
            f"the {len(listed)} sources (the index is derived data)",
            problem=False,
        )
    ]


def _drift(behind: list[str], gone: list[str]) -> str:
    parts = []
    if behind:
        parts.append(
            f"{len(behind)} behind or never indexed: {', '.join(behind[:5])}" + (" ..." if len(behind) > 5 else "")
        )
    if gone:
        parts.append(f"{len(gone)} indexed but gone: {', '.join(gone[:5])}" + (" ..." if len(gone) > 5 else ""))
    return "; ".join(parts)
