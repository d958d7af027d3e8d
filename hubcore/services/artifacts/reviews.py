"""Reviewing a diff artifact (issue 29): line anchors, where they go on a new version, and the
review a decided approval hands the agent.

- A line anchor is `{mode: "line", file, side: "old" | "new", line, end_line?}`: `file` is a path
  of the version's summary (`diffs.summary`: the new path, the old one for a deleted file), `line`
  (through `end_line`) numbers on that side that the diff shows. `check_anchor` refuses any other.
- When an update publishes a new version of a diff, each open line comment on the current version
  moves with its line: the same text, at the same side of the same file (a file found by its path,
  else by the path it was renamed from), the match nearest its old number; a range moves when all
  its lines follow each other there too. A comment whose line is gone or changed stays on its
  version, marked `outdated`. `moves` works this out off the writer (it reads two bodies); the
  update's command applies it (`apply_moves`) to the comments still open on that version.
- `review_of` is what a decided approval naming the diff carries: the version decided on and its
  open comments (outdated ones left out), within a byte budget the event payload limit leaves.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from typing import Any

import orjson

from hubcore.errors import invalid
from hubcore.services.artifacts import diffs
from hubcore.store.blobs import BlobStore

REVIEW_BUDGET = 200 * 1024  # the review's comments in an answer event (payloads are at most 256 KiB)
_LINE_PREFIX = '{"mode":"line"'


@dataclass
class Moves:
    """Where the open line comments of version `source` go on the next version."""

    source: int
    moved: dict[str, str] = field(default_factory=dict)  # comment id -> its new anchor (JSON)
    outdated: list[str] = field(default_factory=list)


def side_lines(diff: diffs.Diff, path: str, side: str) -> dict[int, str] | None:
    """The numbered lines the diff shows on `side` of the file at `path` (None: no such file)."""
    for f in diff.files:
        if f.path == path:
            shown: dict[int, str] = {}
            for h in f.hunks:
                for line in h.lines:
                    number = line.old if side == "old" else line.new
                    if number is not None:
                        shown[number] = line.text
            return shown
    return None


def check_anchor(diff: diffs.Diff, anchor: dict[str, Any], version: int) -> None:
    """A line anchor must name lines this version's diff shows."""
    shown = side_lines(diff, anchor["file"], anchor["side"])
    if shown is None:
        raise invalid(f"anchor: version {version}'s diff changes no file {anchor['file'][:200]!r}", field="anchor")
    end = anchor.get("end_line") or anchor["line"]
    missing = next((n for n in range(anchor["line"], end + 1) if n not in shown), None)
    if missing is not None:
        raise invalid(
            f"anchor: line {missing} ({anchor['side']} side) of {anchor['file'][:200]!r} is not shown in "
            f"version {version}'s diff",
            field="anchor",
            line=missing,
        )


def _renamed_from(diff: diffs.Diff, path: str) -> str | None:
    return next((f.path for f in diff.files if f.old_path == path and f.status in ("renamed", "copied")), None)


def relocated(old: diffs.Diff, new: diffs.Diff, anchor: dict[str, Any]) -> dict[str, Any] | None:
    """The anchor on the new version, or None when its lines are not there unchanged."""
    side, start = anchor["side"], anchor["line"]
    end = anchor.get("end_line") or start
    before = side_lines(old, anchor["file"], side)
    if before is None or any(n not in before for n in range(start, end + 1)):
        return None
    texts = [before[n] for n in range(start, end + 1)]
    path = anchor["file"]
    after = side_lines(new, path, side)
    if after is None and (renamed := _renamed_from(new, path)) is not None:
        path, after = renamed, side_lines(new, renamed, side)
    if after is None:
        return None
    found = [
        n
        for n, text in after.items()
        if text == texts[0] and all(after.get(n + k) == t for k, t in enumerate(texts[1:], 1))
    ]
    if not found:
        return None
    best = min(found, key=lambda n: (abs(n - start), n))
    moved = {**anchor, "file": path, "line": best}
    if anchor.get("end_line") is not None:
        moved["end_line"] = best + (end - start)
    return moved


def moves(conn: sqlite3.Connection, blobs: BlobStore, artifact: sqlite3.Row, new_content: str) -> Moves:
    """Where the open line comments on the artifact's current version go in `new_content`."""
    source = int(artifact["version"])
    found = conn.execute(
        """SELECT id, anchor FROM artifact_comments WHERE artifact_id = ? AND anchor_version = ? AND done = 0
           AND outdated = 0 AND anchor LIKE ?""",
        (artifact["id"], source, _LINE_PREFIX + "%"),
    ).fetchall()
    result = Moves(source)
    if not found:
        return result
    digest = conn.execute(
        "SELECT sha256 FROM artifact_versions WHERE artifact_id = ? AND version = ?", (artifact["id"], source)
    ).fetchone()
    old = diffs.parse(blobs.read(digest[0]).decode(), files_max=1 << 30, hunks_max=1 << 30)
    new = diffs.parse(new_content)
    for row in found:
        target = relocated(old, new, orjson.loads(row["anchor"]))
        if target is None:
            result.outdated.append(row["id"])
        else:
            result.moved[row["id"]] = orjson.dumps(target).decode()
    return result


def apply_moves(conn: sqlite3.Connection, artifact_id: str, found: Moves, version: int, now: float) -> None:
    """In the update's command: move or mark the comments still open on the source version."""
    for comment_id, anchor in found.moved.items():
        conn.execute(
            """UPDATE artifact_comments SET anchor = ?, anchor_version = ?, updated_at = ?
                        WHERE id = ? AND artifact_id = ? AND anchor_version = ? AND done = 0""",
            (anchor, version, now, comment_id, artifact_id, found.source),
        )
    for comment_id in found.outdated:
        conn.execute(
            """UPDATE artifact_comments SET outdated = 1, updated_at = ?
                        WHERE id = ? AND artifact_id = ? AND anchor_version = ? AND done = 0""",
            (now, comment_id, artifact_id, found.source),
        )


def subject(conn: sqlite3.Connection, project_id: str, artifact_id: str) -> dict[str, Any]:
    """What an approval naming a diff records: the artifact (in the approval's project, a diff)
    and the version it was asked on."""
    row = conn.execute(
        "SELECT id, kind, title, version FROM artifacts WHERE id = ? AND project_id = ?", (artifact_id, project_id)
    ).fetchone()
    if row is None:
        raise invalid(f"artifact_id: no artifact {artifact_id[:64]!r} in project {project_id!r}", field="artifact_id")
    if row["kind"] != "diff":
        raise invalid(f"artifact_id: artifact {row['id']!r} is {row['kind']}, not a diff", field="artifact_id")
    return {"artifact_id": row["id"], "version": row["version"], "title": row["title"]}


def review_of(conn: sqlite3.Connection, artifact_id: str, project_id: str, verdict: str) -> dict[str, Any] | None:
    """The review a decision carries: the artifact's current version, the verdict (`approved` or
    `changes_requested`) and the open comments on that version, oldest first, as many as fit."""
    row = conn.execute(
        "SELECT id, version FROM artifacts WHERE id = ? AND project_id = ?", (artifact_id, project_id)
    ).fetchone()
    if row is None:
        return None
    found = conn.execute(
        """SELECT id, author, body, anchor FROM artifact_comments WHERE artifact_id = ? AND anchor_version = ?
           AND done = 0 AND outdated = 0 ORDER BY id""",
        (row["id"], row["version"]),
    ).fetchall()
    comments, size = [], 0
    for c in found:
        anchor = orjson.loads(c["anchor"]) if c["anchor"] else None
        line = anchor if anchor and anchor.get("mode") == "line" else {}
        item = {
            "id": c["id"],
            "file": line.get("file"),
            "side": line.get("side"),
            "line": line.get("line"),
            "end_line": line.get("end_line"),
            "body": c["body"],
            "author": c["author"],
        }
        size += len(orjson.dumps(item))
        if size > REVIEW_BUDGET:
            break
        comments.append(item)
    return {
        "artifact_id": row["id"],
        "version": row["version"],
        "verdict": verdict,
        "comments": comments,
        "open_comments": len(found),
        "truncated": len(comments) < len(found),
    }
