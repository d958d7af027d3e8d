"""The knowledge base files as `hub-cli check` sees them (`KbPart.check_references`): a project
hub.db says has knowledge base writes (its feed's `kb_*` signals, or its pages in the search index)
must have its `kb/<project>.db`."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from hubcore.ops.findings import Finding
from hubcore.ops.stores import has_table
from hubcore.services.kb import search, signals

KB_DIR = "kb"
KB_ACTIONS = tuple(signals.VERBS)  # the actions of the signals every knowledge base write appends


def missing_kb_files(conn: sqlite3.Connection, root: Path) -> list[Finding]:
    """A problem per project whose knowledge base file hub.db says exists and is not there."""
    projects = {r[0] for r in conn.execute("SELECT id FROM projects")}
    why: dict[str, str] = {}
    placeholders = ", ".join("?" * len(KB_ACTIONS))
    # json_valid first: one damaged payload must not stop the whole step.
    for (pid,) in conn.execute(
        f"""SELECT DISTINCT project_id FROM events WHERE kind = 'signal' AND CASE
                                   WHEN json_valid(payload) THEN json_extract(payload, '$.action') END
                                   IN ({placeholders})""",
        KB_ACTIONS,
    ):
        why[pid] = "its feed records knowledge base writes"
    if has_table(conn, "search_marks"):
        for (source,) in conn.execute("SELECT source FROM search_marks"):
            if str(source).startswith(search.PREFIX):
                why.setdefault(str(source)[len(search.PREFIX) :], "the search index holds its pages")
    return [
        Finding(f"{KB_DIR}/{pid}.db", f"missing: project {pid}'s knowledge base file is gone ({reason})")
        for pid, reason in sorted(why.items())
        if pid in projects and not (root / KB_DIR / f"{pid}.db").is_file()
    ]
