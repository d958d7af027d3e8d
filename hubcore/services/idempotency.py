"""Idempotency keys: a retried write answers what the first one did, and writes nothing more.

A key is scoped by actor and operation-and-kind scope (`event:signal`, `event:question`, `answer`,
`decision`, ...) and bound to one target entity. `replayed` and `remember` run inside the write's
own command, so a retry racing the original sees it committed or not at all.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from typing import Any

import orjson

from hubcore.errors import conflict

IDEMPOTENCY_KEY_MAX = 200


def replayed(conn: sqlite3.Connection, actor: str, scope: str, key: str | None, target: str) -> dict[str, Any] | None:
    """The original result of a retried write, or None for a fresh key.

    A key reused for another target entity is refused: it names a different write.
    """
    if key is None:
        return None
    row = conn.execute(
        "SELECT target, result FROM idempotency_keys WHERE actor = ? AND scope = ? AND key = ?",
        (actor, scope, key),
    ).fetchone()
    if row is None:
        return None
    if row["target"] != target:
        raise conflict(f"idempotency_key {key!r} was already used for another {scope} target", scope=scope)
    result: dict[str, Any] = orjson.loads(row["result"])
    return result


def remember(
    conn: sqlite3.Connection,
    actor: str,
    scope: str,
    key: str | None,
    target: str,
    project_id: str,
    result: Mapping[str, Any],
    now: float,
) -> None:
    if key is None:
        return
    conn.execute(
        """INSERT INTO idempotency_keys (actor, scope, key, target, project_id, result, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?)""",
        (actor, scope, key, target, project_id, orjson.dumps(dict(result)).decode(), now),
    )
