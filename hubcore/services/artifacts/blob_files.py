"""The blob store's files as the ops tools see them in a data directory no hub has open
(`ArtifactsPart.copied_files`, `check_references`, `doctor_references`, `sweep_restored`): the
artifact versions' rows in hub.db against `blobs/<aa>/<sha256>`."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from hubcore.ops.datadir import remove_unlisted
from hubcore.ops.findings import Finding
from hubcore.ops.manifest import file_digest
from hubcore.ops.stores import HUB_DB, has_table, is_digest

BLOBS = "blobs"
MAX_LISTED = 50  # missing blobs doctor names one by one; past it, a count


def blob_paths(data_dir: Path) -> list[Path]:
    """Every stored blob (`blobs/<aa>/<64 hex>`), temporary files left out."""
    root = data_dir / BLOBS
    return sorted(p for p in root.glob("??/*") if is_digest(p.name) and p.parent.name == p.name[:2])


def check_blobs(conn: sqlite3.Connection, root: Path) -> list[Finding]:
    """A problem per referenced blob that is missing, of another size, or of another digest."""
    if not has_table(conn, "artifact_versions"):
        return []
    rows = conn.execute("""SELECT sha256, size_bytes, artifact_id, version FROM artifact_versions
                           ORDER BY sha256, artifact_id, version""").fetchall()
    found: list[Finding] = []
    seen: set[str] = set()
    for sha, size, artifact_id, version in rows:
        if sha in seen:
            continue
        seen.add(sha)
        whose = f"artifact {artifact_id} version {version}"
        if not is_digest(sha):  # a damaged row must not send the check outside blobs/
            found.append(Finding(HUB_DB, f"{whose} names its blob by {str(sha)[:80]!r}, not a SHA-256 digest"))
            continue
        name = f"{BLOBS}/{sha[:2]}/{sha}"
        path = root / name
        if not path.is_file():
            found.append(Finding(name, f"missing ({whose})"))
            continue
        actual, digest = file_digest(path)
        if actual != size:
            found.append(Finding(name, f"size differs: {actual} bytes on disk, {size} recorded ({whose})"))
        elif digest != sha:
            found.append(Finding(name, f"content differs from its SHA-256 name ({whose})"))
    return found


def missing_blobs(conn: sqlite3.Connection, root: Path) -> list[Finding]:
    """A problem per blob an artifact version references that is not a file under `blobs/`."""
    if not has_table(conn, "artifact_versions"):
        return []
    rows = conn.execute("""SELECT sha256, MIN(artifact_id), MIN(version), COUNT(*) FROM artifact_versions
                           GROUP BY sha256 ORDER BY sha256""").fetchall()
    # A row naming no digest (a damaged store) is missing its blob too, and never makes a path.
    missing = [r for r in rows if not is_digest(r[0]) or not (root / BLOBS / r[0][:2] / r[0]).is_file()]
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
    return f"{BLOBS}/{sha[:2]}/{sha}" if isinstance(sha, str) and is_digest(sha) else f"blob {str(sha)[:80]!r}"


def sweep_restored(conn: sqlite3.Connection, data_dir: Path) -> int:
    """Remove the blobs no artifact version references; how many went."""
    referenced = {r[0] for r in conn.execute("SELECT DISTINCT sha256 FROM artifact_versions")}
    return remove_unlisted(data_dir / BLOBS, "??/*", referenced, sidecars=())
