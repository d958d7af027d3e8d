"""The brain files as the ops tools see them in a data directory no hub has open
(`SessionsPart.check_references`, `doctor_references`, `sweep_restored`): hub.db's sessions against
`brains/<id>.db`, and the replay rows staged in hub.db on their way to the brains
(`hubcore.services.callstage`)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from hubcore.ops.datadir import remove_unlisted
from hubcore.ops.findings import Finding
from hubcore.ops.stores import has_table
from hubcore.services import brain_search as search
from hubcore.services import callstage
from hubcore.store import brain_record

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


def orphan_staged_calls(conn: sqlite3.Connection) -> list[Finding]:
    """`hub-cli check`: a problem per session with replay rows staged and no session row (its
    brain was removed; the rows can never land)."""
    if not has_table(conn, callstage.TABLE):
        return []
    return [
        Finding(f"hub.db {callstage.TABLE}", f"{n} replay rows staged for session {sid}, which hub.db does not hold")
        for sid, n in callstage.orphans(conn)
    ]


def staged_calls(conn: sqlite3.Connection) -> list[Finding]:
    """`hub-cli doctor`: how many replay rows wait in hub.db for their brains (a reading; the
    hub's next start moves them), when any do."""
    if not has_table(conn, callstage.TABLE) or not (n := callstage.count(conn)):
        return []
    return [Finding("replay rows staged", f"{n} in hub.db, not yet moved into their brains", problem=False)]


def sweep_restored(conn: sqlite3.Connection, data_dir: Path) -> int:
    """Remove the brain files no session row names (with their logs); how many went. The search
    index's brain marks go too: the backup copied the brains after hub.db, so each brain is read
    whole once (its documents compared with what the index holds) instead of followed by seq.
    For the same reason a brain may have taken staged replay rows hub.db's copy never saw: the
    staging counter is raised past every brain's mark, so no row staged from now on is skipped."""
    sessions = {r[0] for r in conn.execute("SELECT id FROM sessions")}
    if has_table(conn, "search_marks"):
        conn.execute("DELETE FROM search_marks WHERE substr(source, 1, ?) = ?", (len(search.PREFIX), search.PREFIX))
        conn.commit()
    removed = remove_unlisted(data_dir / BRAINS, "*.db", sessions, sidecars=("-wal", "-shm"))
    if has_table(conn, callstage.TABLE):
        callstage.raise_counter(conn, max((_record_mark(p) for p in (data_dir / BRAINS).glob("*.db")), default=0))
        conn.commit()
    return removed


def _record_mark(path: Path) -> int:
    """A brain file's replay mark, read without writing (0 when it cannot be read)."""
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error:
        return 0
    try:
        return brain_record.mark(conn)
    except sqlite3.Error:
        return 0
    finally:
        conn.close()
