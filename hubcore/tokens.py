"""Bearer tokens: 256 bits of randomness, shown once, stored only as SHA-256 digests."""

from __future__ import annotations

import hashlib
import hmac
import secrets

TOKEN_PREFIX = "hub_"


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def same_secret(given: str, expected: str) -> bool:
    """Constant-time comparison that also hides the expected secret's length."""
    return hmac.compare_digest(token_hash(given), token_hash(expected))
