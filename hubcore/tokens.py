"""Bearer tokens: 256 bits of randomness, shown once, stored only as SHA-256 digests."""

from __future__ import annotations

import hashlib
import secrets

TOKEN_PREFIX = "hub_"


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()
