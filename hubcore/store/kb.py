"""A project's knowledge base file (`kb/<project_id>.db`): pages, the write log, kept versions.

Storage only: rows in, rows out. Every page's bytes live once in `blobs`, keyed by their version
(the content hash), whatever page or how many log rows name them; `pages` holds the pages that
exist now (a delete removes the row, the log keeps it); `log` holds every write, delete, review,
revert and promote with the version it stored, the version it replaced, whether that write's bytes
are still kept, and the trust note (whether the write brought in the page's newest verification;
NULL on a row written by a hub that kept no note). The rules (paths, limits, `if_version`, trust)
are the services'; the functions here run on a connection the file's actor (writes) or its reader
pool (reads) hands them, so a service's compare-and-write happens inside one actor command.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from hubcore.store.schema import setup_file

SCHEMA_VERSION = 1
"""The file's `PRAGMA user_version`."""

OPS = ("kb.put", "kb.delete", "kb.review", "kb.promote", "kb.revert")
TOP = "\U0010ffff"  # sorts after every character a path may hold: `prefix < path < prefix + TOP`


def setup(conn: sqlite3.Connection) -> None:
    """Create the tables, in one transaction so a crash leaves the file redoable."""
    setup_file(conn, SCHEMA_VERSION, _create_tables)


def _create_tables(conn: sqlite3.Connection, _version: int) -> None:
    # Rowid tables: a page's bytes (up to 1 MiB) and its derived JSON are large rows, which a
    # WITHOUT ROWID b-tree would carry in its interior pages.
    conn.execute("""CREATE TABLE IF NOT EXISTS blobs (
        id INTEGER PRIMARY KEY,
        version TEXT NOT NULL UNIQUE,
        content BLOB NOT NULL
    )""")
    # `derived` is what the page's bytes say, derived once at write time (frontmatter fields,
    # links, the parse state), as JSON: no read ever re-parses a page.
    conn.execute("""CREATE TABLE IF NOT EXISTS pages (
        id INTEGER PRIMARY KEY,
        path TEXT NOT NULL UNIQUE,
        version TEXT NOT NULL,
        size_bytes INTEGER NOT NULL,
        written_at REAL NOT NULL,
        written_by TEXT NOT NULL,
        trust TEXT NOT NULL,
        stale_after TEXT,
        derived TEXT NOT NULL
    )""")
    conn.execute("CREATE INDEX IF NOT EXISTS pages_stale ON pages (stale_after) WHERE stale_after IS NOT NULL")
    conn.execute("""CREATE TABLE IF NOT EXISTS log (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        op TEXT NOT NULL,
        path TEXT NOT NULL,
        actor TEXT NOT NULL,
        at REAL NOT NULL,
        version TEXT,
        size_bytes INTEGER,
        replaced TEXT,
        kept INTEGER NOT NULL DEFAULT 1,
        verifies INTEGER,
        summary TEXT
    )""")
    conn.execute("CREATE INDEX IF NOT EXISTS log_path ON log (path, id)")
    conn.execute("CREATE INDEX IF NOT EXISTS log_version ON log (version) WHERE version IS NOT NULL")


@dataclass(frozen=True)
class Page:
    """A page that exists now, without its bytes."""

    path: str
    version: str
    size_bytes: int
    written_at: float
    written_by: str
    trust: str
    stale_after: str | None
    derived: str  # JSON, as the service derived it


@dataclass(frozen=True)
class LogRow:
    id: int
    op: str
    path: str
    actor: str
    at: float
    version: str | None
    size_bytes: int | None
    replaced: str | None
    kept: bool
    verifies: bool | None
    summary: str | None


PAGE_COLUMNS = "path, version, size_bytes, written_at, written_by, trust, stale_after, derived"
LOG_COLUMNS = "id, op, path, actor, at, version, size_bytes, replaced, kept, verifies, summary"


def _page(row: sqlite3.Row) -> Page:
    return Page(row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7])


def _log(row: sqlite3.Row) -> LogRow:
    verifies = None if row[9] is None else bool(row[9])
    return LogRow(row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7], bool(row[8]), verifies, row[10])


# -- pages -----------------------------------------------------------------------------------------


def page(conn: sqlite3.Connection, path: str) -> Page | None:
    row = conn.execute(f"SELECT {PAGE_COLUMNS} FROM pages WHERE path = ?", (path,)).fetchone()
    return None if row is None else _page(row)


def pages(conn: sqlite3.Connection, directory: str = "/fs/") -> list[Page]:
    """Every page under `directory` (a canonical directory path), in path order."""
    prefix = directory.rstrip("/") + "/"
    rows = conn.execute(
        f"SELECT {PAGE_COLUMNS} FROM pages WHERE path > ? AND path < ? ORDER BY path", (prefix, prefix + TOP)
    )
    return [_page(r) for r in rows]


def page_count(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT COUNT(*) FROM pages").fetchone()[0])


def is_directory(conn: sqlite3.Connection, path: str) -> bool:
    """Whether pages exist beneath `path`."""
    prefix = path.rstrip("/") + "/"
    return (
        conn.execute("SELECT 1 FROM pages WHERE path > ? AND path < ? LIMIT 1", (prefix, prefix + TOP)).fetchone()
        is not None
    )


def page_above(conn: sqlite3.Connection, path: str) -> str | None:
    """A page at one of `path`'s ancestors (which would have to be a directory), or None."""
    parts = path.strip("/").split("/")
    ancestors = ["/" + "/".join(parts[:i]) for i in range(2, len(parts))]
    if not ancestors:
        return None
    marks = ",".join("?" * len(ancestors))
    row = conn.execute(f"SELECT path FROM pages WHERE path IN ({marks}) LIMIT 1", ancestors).fetchone()
    return None if row is None else str(row[0])


def level(conn: sqlite3.Connection, directory: str) -> list[dict[str, Any]]:
    """One directory level: its pages, and its subdirectories with the bytes of the files directly
    inside each (`size_bytes`) and how many entries each holds directly (`children`)."""
    prefix = directory.rstrip("/") + "/"
    rows = conn.execute(
        "SELECT path, size_bytes FROM pages WHERE path > ? AND path < ? ORDER BY path", (prefix, prefix + TOP)
    )
    found: dict[str, dict[str, Any]] = {}
    below: dict[str, set[str]] = {}
    for path, size in rows:
        head, sep, rest = path[len(prefix) :].partition("/")
        child = prefix + head
        if not sep:
            found[child] = {"path": child, "type": "file", "size_bytes": size, "children": None}
            continue
        node = found.setdefault(child, {"path": child, "type": "dir", "size_bytes": 0, "children": 0})
        inner, deeper, _ = rest.partition("/")
        if not deeper:
            node["size_bytes"] += size
        below.setdefault(child, set()).add(inner)
    for child, names in below.items():
        found[child]["children"] = len(names)
    return list(found.values())


def put_page(conn: sqlite3.Connection, p: Page) -> None:
    conn.execute(
        f"""INSERT INTO pages ({PAGE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (path) DO UPDATE SET version = excluded.version, size_bytes = excluded.size_bytes,
           written_at = excluded.written_at, written_by = excluded.written_by, trust = excluded.trust,
           stale_after = excluded.stale_after, derived = excluded.derived""",
        (p.path, p.version, p.size_bytes, p.written_at, p.written_by, p.trust, p.stale_after, p.derived),
    )


def remove_page(conn: sqlite3.Connection, path: str) -> bool:
    return conn.execute("DELETE FROM pages WHERE path = ?", (path,)).rowcount > 0


def stale_pages(conn: sqlite3.Connection, today: str, limit: int) -> tuple[list[Page], int]:
    """Pages whose `stale_after` date is before `today` (`YYYY-MM-DD`), longest overdue first,
    and how many there are in all."""
    total = conn.execute(
        "SELECT COUNT(*) FROM pages WHERE stale_after IS NOT NULL AND stale_after < ?", (today,)
    ).fetchone()[0]
    rows = conn.execute(
        f"""SELECT {PAGE_COLUMNS} FROM pages WHERE stale_after IS NOT NULL AND stale_after < ?
                            ORDER BY stale_after, path LIMIT ?""",
        (today, limit),
    )
    return [_page(r) for r in rows], int(total)


# -- kept bytes ------------------------------------------------------------------------------------


def blob(conn: sqlite3.Connection, version: str) -> bytes | None:
    row = conn.execute("SELECT content FROM blobs WHERE version = ?", (version,)).fetchone()
    return None if row is None else bytes(row[0])


def keep(conn: sqlite3.Connection, version: str, content: bytes) -> bool:
    """Store `content` under its version unless the file holds it already; True when it was new."""
    return conn.execute("INSERT OR IGNORE INTO blobs (version, content) VALUES (?, ?)", (version, content)).rowcount > 0


def drop_unreferenced(conn: sqlite3.Connection, versions: Iterable[str]) -> int:
    """Remove the blobs of `versions` that no page holds and no kept log row names; how many."""
    removed = 0
    for version in set(versions):
        removed += conn.execute(
            """DELETE FROM blobs WHERE version = ?
               AND NOT EXISTS (SELECT 1 FROM pages WHERE version = ?)
               AND NOT EXISTS (SELECT 1 FROM log WHERE version = ? AND kept = 1)""",
            (version, version, version),
        ).rowcount
    return removed


# -- the write log ---------------------------------------------------------------------------------


def append_log(
    conn: sqlite3.Connection,
    *,
    op: str,
    path: str,
    actor: str,
    at: float,
    version: str | None,
    size_bytes: int | None,
    replaced: str | None,
    verifies: bool | None,
    summary: str | None,
) -> int:
    cur = conn.execute(
        """INSERT INTO log (op, path, actor, at, version, size_bytes, replaced, kept, verifies, summary)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
        (
            op,
            path,
            actor,
            at,
            version,
            size_bytes,
            replaced,
            1 if version is not None else 0,
            None if verifies is None else int(verifies),
            summary,
        ),
    )
    return int(cur.lastrowid or 0)


def path_log(conn: sqlite3.Connection, path: str) -> Iterator[LogRow]:
    """The log rows of `path`, newest first, read as they are consumed (trust stops at the newest
    verifying write, however long the page's history)."""
    for row in conn.execute(f"SELECT {LOG_COLUMNS} FROM log WHERE path = ? ORDER BY id DESC", (path,)):
        yield _log(row)


def logged(conn: sqlite3.Connection, path: str) -> bool:
    return conn.execute("SELECT 1 FROM log WHERE path = ? LIMIT 1", (path,)).fetchone() is not None


def kept_row(conn: sqlite3.Connection, path: str, version: str) -> LogRow | None:
    """The newest log row of `path` that stored `version` while its bytes are still kept."""
    row = conn.execute(
        f"""SELECT {LOG_COLUMNS} FROM log WHERE path = ? AND version = ? AND kept = 1
                           ORDER BY id DESC LIMIT 1""",
        (path, version),
    ).fetchone()
    return None if row is None else _log(row)


def query_log(
    conn: sqlite3.Connection, where: str, args: list[Any], *, before: int | None, limit: int
) -> tuple[list[LogRow], int]:
    """Rows matching `where` (SQL on `log`), newest first, below `before`; and how many match
    `where` in all."""
    total = int(conn.execute(f"SELECT COUNT(*) FROM log WHERE {where}", args).fetchone()[0])
    if limit <= 0:
        return [], total
    page_where, page_args = (f"{where} AND id < ?", [*args, before]) if before is not None else (where, args)
    rows = conn.execute(
        f"SELECT {LOG_COLUMNS} FROM log WHERE {page_where} ORDER BY id DESC LIMIT ?", [*page_args, limit]
    )
    return [_log(r) for r in rows], total


def forget_rows(conn: sqlite3.Connection, row_ids: Iterable[int]) -> None:
    conn.executemany("UPDATE log SET kept = 0 WHERE id = ?", [(i,) for i in row_ids])
