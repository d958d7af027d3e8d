"""Many rows in one statement: rows handed to SQLite as one JSON array, read with `json_each`.

`executemany` runs its statement once per row, and every step of a statement lets go of the GIL:
on a store's thread, with the event loop waiting for the GIL, each row can cost a hand-over of
the GIL to the loop and back (`tools/bench/profile_calls.py` counts them as switches). The
write-behind bookkeeping (replay rows, touches) and the search index write hundreds of rows a
command; as one statement over `json_each` they cost one step.

Values must be JSON's: text, integers, floats and None (a float read by `json_extract` is the
same float: orjson writes the shortest text that gives it back, SQLite parses it exactly). Text
holding a NUL cannot pass: SQLite's JSON functions end text at one. `insert` then falls back to
`executemany`; `payload` refuses it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import orjson


def insert(conn: sqlite3.Connection, into: str, rows: Sequence[Sequence[Any]]) -> None:
    """`INSERT INTO {into}` each row (`into` names the table and its columns), in the order given."""
    if not rows:
        return
    if _holds_nul(rows):  # rare (an agent's text); row by row keeps it whole
        conn.executemany(f"INSERT INTO {into} VALUES ({', '.join('?' * len(rows[0]))})", rows)
        return
    conn.execute(
        f"INSERT INTO {into} SELECT {columns(len(rows[0]))} FROM json_each(?) ORDER BY key",
        (orjson.dumps(rows).decode(),),
    )


def payload(rows: Sequence[Any] | Mapping[str, Any]) -> str:
    """The rows (each a sequence, or one value), or a mapping read as `key` and `value`, as the
    one parameter of `json_each(?)`. Raises ValueError for text holding a NUL."""
    if _holds_nul(rows):
        raise ValueError("text holding NUL cannot pass through SQLite's JSON functions whole")
    return orjson.dumps(rows).decode()


def columns(n: int) -> str:
    """The first `n` members of each row of `json_each(?)`, as a select list (in `ORDER BY key`
    order, the rows' own)."""
    return ", ".join(f"json_extract(value, '$[{i}]')" for i in range(n))


def _holds_nul(rows: Sequence[Any] | Mapping[str, Any]) -> bool:
    return any(isinstance(v, str) and "\0" in v for v in _values(rows))


def _values(rows: Sequence[Any] | Mapping[str, Any]) -> Iterator[Any]:
    for row in rows.items() if isinstance(rows, Mapping) else rows:
        yield from row if isinstance(row, tuple | list) else (row,)
