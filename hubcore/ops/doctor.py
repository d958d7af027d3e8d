"""`hub-cli doctor`: a read-only report on a data directory, with or without a hub running on it.

Readings: the directory's identity (path, device and inode, whether a hub holds it, hub.db's store
kind), schema versions (hub.db's against this binary's, and the brain and knowledge base files'),
free space against `min_free_bytes`, the write-ahead logs' sizes, the event id high-water mark
against the newest stored id, and the blobs artifact versions reference that are missing. Any
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
from hubcore.ops.restore import RESTORED_MARK
from hubcore.ops.stores import HUB_DB, has_table, is_digest, quiet_connection, relative, store_files
from hubcore.services import ids
from hubcore.store import brain, kb
from hubcore.store.migrations import STORE_KIND, read_version

MAX_LISTED = 50  # missing blobs named one by one; past it, a count


def doctor(root: Path, *, min_free_bytes: int, now: float) -> list[Finding]:
    """Every reading and problem, in report order."""
    if not root.is_dir():
        return [not_a_directory(root)]
    findings = _identity(root)
    db = root / HUB_DB
    if not db.is_file():
        findings.append(Finding(HUB_DB, "missing: not a hub data directory, or its store is gone"))
    else:
        findings.extend(_hub_store(db, now))
    findings.extend(_file_schemas(root))
    findings.append(_free_space(root, min_free_bytes))
    findings.append(_logs(root))
    return findings


def _identity(root: Path) -> list[Finding]:
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
                "blobs and brain files hub.db does not reference",
                problem=False,
            )
        )
    return found


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")[:200]
    except OSError:
        return ""


def _hub_store(db: Path, now: float) -> list[Finding]:
    try:
        with quiet_connection(db) as conn:
            return _hub_readings(conn, db, now)
    except sqlite3.Error as exc:
        return [Finding(HUB_DB, f"cannot be read as a SQLite database ({exc})")]


def _hub_readings(conn: sqlite3.Connection, db: Path, now: float) -> list[Finding]:
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
    if has_table(conn, "artifact_versions"):
        found.extend(missing_blobs(conn, db.parent))
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


def missing_blobs(conn: sqlite3.Connection, root: Path) -> list[Finding]:
    """A problem per blob an artifact version references that is not a file under `blobs/`."""
    rows = conn.execute("""SELECT sha256, MIN(artifact_id), MIN(version), COUNT(*) FROM artifact_versions
                           GROUP BY sha256 ORDER BY sha256""").fetchall()
    # A row naming no digest (a damaged store) is missing its blob too, and never makes a path.
    missing = [r for r in rows if not is_digest(r[0]) or not (root / "blobs" / r[0][:2] / r[0]).is_file()]
    found = [
        Finding(
            _blob_name(sha),
            f"missing (artifact {aid} version {version}{f' and {count - 1} more versions' if count > 1 else ''})",
        )
        for sha, aid, version, count in missing[:MAX_LISTED]
    ]
    if len(missing) > MAX_LISTED:
        found.append(Finding("blobs", f"{len(missing) - MAX_LISTED} more referenced blobs missing"))
    if not missing:
        found.append(Finding("blobs", f"{len(rows)} referenced by artifact versions, all present", problem=False))
    return found


def _blob_name(sha: object) -> str:
    return f"blobs/{sha[:2]}/{sha}" if isinstance(sha, str) and is_digest(sha) else f"blob {str(sha)[:80]!r}"


def _file_schemas(root: Path) -> list[Finding]:
    """The brain and knowledge base files' schema versions (`user_version`) against this binary's."""
    found: list[Finding] = []
    counts: dict[str, int] = {}
    for path in store_files(root):
        if path.name == HUB_DB and path.parent == root:
            continue
        supported = brain.SCHEMA_VERSION if path.parent.name == "brains" else kb.SCHEMA_VERSION
        name = relative(root, path)
        try:
            with quiet_connection(path) as conn:
                version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        except sqlite3.Error as exc:
            found.append(Finding(name, f"cannot be read as a SQLite database ({exc})"))
            continue
        if version > supported:
            found.append(Finding(name, f"schema v{version} is newer than this binary supports (v{supported})"))
        counts[path.parent.name] = counts.get(path.parent.name, 0) + 1
    summary = ", ".join(
        f"{counts.get(d, 0)} {label}" for d, label in (("brains", "brain files"), ("kb", "knowledge base files"))
    )
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


def _logs(root: Path) -> Finding:
    hub_log, _ = _wal_bytes([root / HUB_DB])
    others, count = _wal_bytes(p for p in store_files(root) if p != root / HUB_DB)
    return Finding(
        "write-ahead logs",
        f"hub.db-wal {hub_log} bytes; {others} bytes in {count} brain and knowledge base logs",
        problem=False,
    )
