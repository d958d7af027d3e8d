"""`hub-cli doctor`: a read-only report on a data directory, with or without a hub running on it.

Readings: the directory's identity (path, device and inode, whether a hub holds it, hub.db's store
kind), schema versions (hub.db's against this binary's, and the parts' store files' against what
each part declares: `Part.file_stores`, the brain and knowledge base files), free space against
`min_free_bytes`, the write-ahead logs' sizes, the event id high-water mark against the newest
stored id, and each part's readings of the files hub.db references (`Part.doctor_references`: the
blobs artifact versions reference that are missing). The features are the parts' to name. Any
problem among them fails the command. Nothing is written: every store is read through
`quiet_connection`, and the lock probe only asks.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable
from pathlib import Path

from hubcore.clock import iso
from hubcore.metrics import free_bytes
from hubcore.ops.datadir import LOCK_NAME, held_by_hub
from hubcore.ops.findings import Finding, not_a_directory
from hubcore.ops.layout import Parts, file_stores, spoken, store_files, store_of
from hubcore.ops.restore import RESTORED_MARK, restore_sweeps
from hubcore.ops.stores import HUB_DB, has_table, quiet_connection, relative
from hubcore.parts.catalog import PART_TYPES
from hubcore.services import ids
from hubcore.store.migrations import STORE_KIND, read_version


def doctor(root: Path, *, min_free_bytes: int, now: float, parts: Parts = PART_TYPES) -> list[Finding]:
    """Every reading and problem, in report order. `parts`: whose files are read (the binary's,
    unless a test says otherwise)."""
    if not root.is_dir():
        return [not_a_directory(root)]
    findings = _identity(root, parts)
    db = root / HUB_DB
    if not db.is_file():
        findings.append(Finding(HUB_DB, "missing: not a hub data directory, or its store is gone"))
    else:
        findings.extend(_hub_store(db, now, parts))
    findings.extend(_file_schemas(root, parts))
    findings.append(_free_space(root, min_free_bytes))
    findings.append(_logs(root, parts))
    return findings


def _identity(root: Path, parts: Parts) -> list[Finding]:
    st = os.stat(root)
    found = [Finding("directory", f"{root} (device {st.st_dev}, inode {st.st_ino})", problem=False)]
    if held_by_hub(root):
        holder = _read_text(root / LOCK_NAME).strip() or "pid unknown"
        found.append(Finding("hub", f"a running hub holds the directory ({holder})", problem=False))
    else:
        found.append(Finding("hub", "no hub holds the directory", problem=False))
    if (root / RESTORED_MARK).exists():
        found.append(
            Finding(
                "restored",
                "a restore put this directory in place; the next start removes the "
                f"{restore_sweeps(parts)} hub.db does not reference",
                problem=False,
            )
        )
    return found


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")[:200]
    except OSError:
        return ""


def _hub_store(db: Path, now: float, parts: Parts) -> list[Finding]:
    try:
        with quiet_connection(db) as conn:
            return _hub_readings(conn, db, now, parts)
    except sqlite3.Error as exc:
        return [Finding(HUB_DB, f"cannot be read as a SQLite database ({exc})")]


def _hub_readings(conn: sqlite3.Connection, db: Path, now: float, parts: Parts) -> list[Finding]:
    from hubcore.hub import supported_version  # the parts' steps (a hub's whole import: only here)

    st = os.stat(db)
    found = [Finding(HUB_DB, f"device {st.st_dev}, inode {st.st_ino}, {st.st_size} bytes", problem=False)]
    version, binary = read_version(conn), supported_version()
    if version > binary:
        found.append(
            Finding(
                "schema", f"hub.db is at v{version}, newer than this binary supports (v{binary}): run a newer agent-hub"
            )
        )
        return found
    if version < binary:
        found.append(
            Finding(
                "schema",
                f"hub.db v{version}, this binary v{binary}: the next start migrates it (after copying it to backups/)",
                problem=False,
            )
        )
    else:
        found.append(Finding("schema", f"hub.db v{version}, this binary v{binary}", problem=False))
    if version == 0:
        return [*found, Finding(HUB_DB, "holds no hub schema")]
    kind = conn.execute("SELECT value FROM hub_meta WHERE key = 'store_kind'").fetchone()
    if kind is None or kind[0] != STORE_KIND:
        return [*found, Finding(HUB_DB, "does not hold a hub store (store kind differs)")]
    if has_table(conn, "events"):
        found.append(_high_water(conn, now))
    found.extend(finding for part in parts for finding in part.doctor_references(conn, db.parent))
    return found


def _high_water(conn: sqlite3.Connection, now: float) -> Finding:
    mark = ids.high_water(conn)
    newest = conn.execute("SELECT MAX(id) FROM events").fetchone()[0]
    reading = f"{mark} ms ({iso(mark / 1000)})" if mark else "none yet"
    if newest is None:
        return Finding("id high-water mark", f"{reading}; no events stored", problem=False)
    newest_ms = ids.timestamp_ms(str(newest))
    if newest_ms > mark:
        return Finding(
            "id high-water mark",
            f"{reading} is behind the newest event id {newest} "
            f"({iso(newest_ms / 1000)}): new ids could sort before stored ones",
        )
    ahead = mark - int(now * 1000)
    note = f"; {ahead / 1000:.1f} s ahead of this machine's clock (ids are minted past it)" if ahead >= 1000 else ""
    return Finding("id high-water mark", f"{reading}; newest event {newest}{note}", problem=False)


def _file_schemas(root: Path, parts: Parts) -> list[Finding]:
    """The parts' store files' schema versions (`user_version`) against what each part declares
    this binary makes (`FileStore.schema_version`), and how many of each there are."""
    found: list[Finding] = []
    counts: dict[str, int] = {}
    for path in store_files(root, parts):
        store = store_of(root, path, parts)
        if store is None:  # hub.db, or a part's file outside its declared directories
            continue
        name = relative(root, path)
        try:
            with quiet_connection(path) as conn:
                version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        except sqlite3.Error as exc:
            found.append(Finding(name, f"cannot be read as a SQLite database ({exc})"))
            continue
        if version > store.schema_version:
            found.append(
                Finding(name, f"schema v{version} is newer than this binary supports (v{store.schema_version})")
            )
        counts[store.directory] = counts.get(store.directory, 0) + 1
    summary = ", ".join(f"{counts.get(s.directory, 0)} {s.noun} files" for s in file_stores(parts))
    return [Finding("store files", summary, problem=False), *found]


def _free_space(root: Path, margin: int) -> Finding:
    free = free_bytes(root)
    if free is None:
        return Finding("free space", "cannot be measured on the data volume")
    if free <= margin:
        return Finding("free space", f"{free} bytes free, at or below the {margin}-byte margin (min_free_bytes)")
    return Finding("free space", f"{free} bytes free (margin {margin})", problem=False)


def _wal_bytes(paths: Iterable[Path]) -> tuple[int, int]:
    total = count = 0
    for path in paths:
        try:
            total += Path(f"{path}-wal").stat().st_size
            count += 1
        except FileNotFoundError:
            continue
    return total, count


def _logs(root: Path, parts: Parts) -> Finding:
    hub_log, _ = _wal_bytes([root / HUB_DB])
    others, count = _wal_bytes(p for p in store_files(root, parts) if p != root / HUB_DB)
    nouns = spoken([s.noun for s in file_stores(parts)])
    return Finding(
        "write-ahead logs",
        f"hub.db-wal {hub_log} bytes; {others} bytes in {count} {nouns} logs",
        problem=False,
    )
