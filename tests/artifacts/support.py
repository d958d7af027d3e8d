"""Helpers of the artifact tests: what is stored (rows, events, blobs), to check that a refusal
wrote nothing, and a valid envelope with its ciphertext."""

from __future__ import annotations

import base64
import sqlite3
from pathlib import Path
from typing import Any

from hubcore.hub import Hub

ENVELOPE: dict[str, Any] = {
    "alg": "AES-256-GCM",
    "kdf": "PBKDF2-HMAC-SHA256",
    "iterations": 600000,
    "salt": base64.b64encode(b"s" * 16).decode(),
    "iv": base64.b64encode(b"i" * 12).decode(),
}
CIPHERTEXT = base64.b64encode(b"c" * 40).decode()


def envelope(**changes: Any) -> dict[str, Any]:
    return {**ENVELOPE, **changes}


def _db(hub: Hub) -> sqlite3.Connection:
    conn = sqlite3.connect(f"file:{hub.data_dir / 'hub.db'}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    return conn


def query(hub: Hub, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    conn = _db(hub)
    try:
        return [tuple(r) for r in conn.execute(sql, params)]
    finally:
        conn.close()


def blob_files(hub: Hub) -> list[str]:
    root: Path = hub.data_dir / "blobs"
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()) if root.exists() else []


def state(hub: Hub) -> tuple[Any, ...]:
    """Everything an artifact write may touch: artifact and version rows, artifact events,
    idempotency keys, and the blob directory's files."""
    return (
        query(hub, "SELECT * FROM artifacts ORDER BY id"),
        query(hub, "SELECT * FROM artifact_versions ORDER BY artifact_id, version"),
        query(hub, "SELECT id, kind, summary, payload FROM events ORDER BY id"),
        query(hub, "SELECT * FROM idempotency_keys ORDER BY key"),
        blob_files(hub),
    )
