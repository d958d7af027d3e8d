"""The brain files as the ops tools see them in a data directory no hub has open
(`SessionsPart.check_references`, `sweep_restored`): hub.db's sessions against `brains/<id>.db`."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from hubcore.ops.datadir import remove_unlisted
from hubcore.ops.findings import Finding
from hubcore.ops.stores import has_table
from hubcore.services import brain_search as search

BRAINS = "brains"


def missing_brain_files(conn: sqlite3.Connection, root: Path) -> list[Finding]:
    """A problem per session whose brain the search index holds and whose file is not there."""
    if not has_table(conn, "sessions") or not has_table(conn, "search_marks"):
        return []
    sessions = {r[0] for r in conn.execute("SELECT id FROM sessions")}
    marks = sorted(str(r[0]) for r in conn.execute("SELECT source FROM search_marks"))
    found = []
    for source in marks:
        sid = source[len(search.PREFIX) :]
        if source.startswith(search.PREFIX) and sid in sessions and not (root / BRAINS / f"{sid}.db").is_file():
            found.append(
                Finding(
                    f"{BRAINS}/{sid}.db",
                    f"missing: session {sid}'s brain file is gone (the search index holds its entries)",
                )
            )
    return found


def sweep_restored(conn: sqlite3.Connection, data_dir: Path) -> int:
    """Remove the brain files no session row names (with their logs); how many went. The search
    index's brain marks go too: the backup copied the brains after hub.db, so each brain is read
    whole once (its documents compared with what the index holds) instead of followed by seq."""
    sessions = {r[0] for r in conn.execute("SELECT id FROM sessions")}
    if has_table(conn, "search_marks"):
        conn.execute("DELETE FROM search_marks WHERE substr(source, 1, ?) = ?", (len(search.PREFIX), search.PREFIX))
        conn.commit()
    return remove_unlisted(data_dir / BRAINS, "*.db", sessions, sidecars=("-wal", "-shm"))
