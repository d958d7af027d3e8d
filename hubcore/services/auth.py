"""Turning a bearer token into a `Caller`.

The admin token (from settings) acts as the human. An agent token resolves through its SHA-256
digest to an active agent. A pending agent's token and an unknown token get the same answer.
"""

from __future__ import annotations

import sqlite3

from hubcore.caller import Caller
from hubcore.services.core import Core
from hubcore.tokens import same_secret, token_hash

LAST_SEEN_RESOLUTION_SECS = 60.0


def bearer(authorization: str | None) -> str | None:
    if not authorization:
        return None
    scheme, _, value = authorization.partition(" ")
    value = value.strip()
    if scheme.lower() != "bearer" or not value:
        return None
    return value


class AuthService:
    def __init__(self, core: Core) -> None:
        self.core = core
        self._seen_written: dict[str, float] = {}

    def is_admin_token(self, token: str | None) -> bool:
        admin = self.core.settings.admin_token
        return bool(token and admin and same_secret(token, admin))

    async def resolve(self, authorization: str | None) -> Caller | None:
        """The caller a header names, or None when it names nobody usable."""
        token = bearer(authorization)
        if token is None:
            return None
        if self.is_admin_token(token):
            return Caller.admin()
        digest = token_hash(token)
        # The digest is looked up by index; equality on a 256-bit hash leaks nothing useful.
        row = await self.core.store.read(
            lambda conn: conn.execute(
                "SELECT id FROM agents WHERE token_hash = ? AND status = 'active'", (digest,)
            ).fetchone()
        )
        if row is None:
            return None
        await self._touch(row["id"])
        return Caller.agent(row["id"])

    async def _touch(self, agent_id: str) -> None:
        """Record `last_seen_at`, at most once a minute per agent so reads stay reads."""
        now = self.core.now()
        if now - self._seen_written.get(agent_id, 0.0) < LAST_SEEN_RESOLUTION_SECS:
            return
        self._seen_written[agent_id] = now

        def write(conn: sqlite3.Connection) -> None:
            conn.execute("UPDATE agents SET last_seen_at = ? WHERE id = ?", (now, agent_id))

        await self.core.store.execute(write)
