"""Event ids: ULIDs from one monotonic generator, clamped forward across a wall-clock step.

An id is 26 Crockford base32 characters: a 48-bit millisecond timestamp, then 80 random bits, so
ids compare as text in the order they were minted. Every id takes its own millisecond: when the
clock is at or behind the high-water mark (the millisecond of the last id minted), the next id is
minted 1 ms past it. The mark lives in `hub_meta` and is written in the same savepoint as the
event, so a rolled-back command leaves no gap in the mark and a restart after a clock step still
mints ids above every stored one. Only the hub store's actor mints, so no lock is needed.
"""

from __future__ import annotations

import re
import secrets
import sqlite3

ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
ID_LENGTH = 26
ID_RE = re.compile(r"^[0-7][0-9A-HJKMNP-TV-Z]{25}$")
MARK_KEY = "event_id_high_water_ms"


def encode(ms: int, randomness: int) -> str:
    """The 26-character ULID text of a timestamp and 80 random bits."""
    value = (ms << 80) | randomness
    chars = []
    for _ in range(ID_LENGTH):
        chars.append(ALPHABET[value & 31])
        value >>= 5
    return "".join(reversed(chars))


def timestamp_ms(event_id: str) -> int:
    """The millisecond an id carries (after any forward clamp)."""
    value = 0
    for ch in event_id[:10]:
        value = value * 32 + ALPHABET.index(ch)
    return value


def is_event_id(value: object) -> bool:
    return isinstance(value, str) and ID_RE.fullmatch(value) is not None  # `$` would allow a final newline


def high_water(conn: sqlite3.Connection) -> int:
    row = conn.execute("SELECT value FROM hub_meta WHERE key = ?", (MARK_KEY,)).fetchone()
    return int(row[0]) if row else 0


def mint(conn: sqlite3.Connection, now: float) -> str:
    """A new id above every id minted before; advances the persisted mark in this transaction."""
    ms = int(now * 1000)
    mark = high_water(conn)
    if ms <= mark:
        ms = mark + 1
    conn.execute(
        "INSERT INTO hub_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (MARK_KEY, str(ms)),
    )
    return encode(ms, secrets.randbits(80))
