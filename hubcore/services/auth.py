"""Turning a bearer token into a `Caller`.

The admin token (from settings) acts as the human. An agent token resolves through its SHA-256
digest to an active agent. A pending agent's token and an unknown token get the same answer.

Every request resolves its token, so resolved digests are remembered in memory (`TokenCache`):
this process is the only writer of hub.db, and every write that changes which token names which
active agent calls `forget_tokens` after its commit. Unknown tokens are never remembered.
"""

from __future__ import annotations

import hmac
import sqlite3

from hubcore.caller import Caller
from hubcore.errors import HubError
from hubcore.services.core import Core
from hubcore.tokens import token_hash

LAST_SEEN_RESOLUTION_SECS = 60.0
TOKEN_CACHE_SIZE = 4096
ADMIN = Caller.admin()


def bearer(authorization: str | None) -> str | None:
    if not authorization:
        return None
    scheme, _, value = authorization.partition(" ")
    value = value.strip()
    if scheme.lower() != "bearer" or not value:
        return None
    return value


class TokenCache:
    """Digests of active agents' tokens already looked up, and the agent each names.

    `forget` empties it and starts a new generation; a lookup that began in an older generation
    (it may have read the store before the change committed) answers its own request but is not
    remembered. Bounded: past `size` entries the oldest is dropped.
    """

    def __init__(self, size: int = TOKEN_CACHE_SIZE) -> None:
        self._size = size
        self._agents: dict[str, str] = {}
        self.generation = 0

    def get(self, digest: str) -> str | None:
        return self._agents.get(digest)

    def put(self, digest: str, agent_id: str, generation: int) -> None:
        if generation != self.generation:
            return
        if len(self._agents) >= self._size:
            del self._agents[next(iter(self._agents))]
        self._agents[digest] = agent_id

    def forget(self) -> None:
        self._agents.clear()
        self.generation += 1


class AuthService:
    def __init__(self, core: Core) -> None:
        self.core = core
        self._seen_written: dict[str, float] = {}
        self._tokens = TokenCache()
        self._admin: tuple[str, str] = ("", "")  # the admin token and its digest, worked out once

    def forget_tokens(self) -> None:
        """Called after any commit that issues or revokes a token or changes an agent's status."""
        self._tokens.forget()

    def _admin_digest(self) -> str | None:
        admin = self.core.settings.admin_token
        if not admin:
            return None
        if self._admin[0] != admin:
            self._admin = (admin, token_hash(admin))
        return self._admin[1]

    def _is_admin_digest(self, digest: str) -> bool:
        """Digests compared in constant time: hides the admin token's length and content."""
        expected = self._admin_digest()
        return expected is not None and hmac.compare_digest(digest, expected)

    async def resolve(self, authorization: str | None) -> Caller | None:
        """The caller a header names, or None when it names nobody usable."""
        token = bearer(authorization)
        if token is None:
            return None
        # One digest per request: compared with the admin token's, then looked up by dict and by
        # index (equality on a 256-bit hash leaks nothing useful).
        digest = token_hash(token)
        if self._is_admin_digest(digest):
            return ADMIN
        agent_id = self._tokens.get(digest)
        if agent_id is None:
            agent_id = await self._lookup(digest)
            if agent_id is None:
                return None
        await self._touch(agent_id)
        return Caller.agent(agent_id)

    async def _lookup(self, digest: str) -> str | None:
        generation = self._tokens.generation
        row = await self.core.store.read(
            lambda conn: conn.execute(
                "SELECT id FROM agents WHERE token_hash = ? AND status = 'active'", (digest,)
            ).fetchone()
        )
        if row is None:
            return None
        self._tokens.put(digest, row["id"], generation)
        return str(row["id"])

    async def _touch(self, agent_id: str) -> None:
        """Record `last_seen_at`, at most once a minute per agent so reads stay reads."""
        now = self.core.now()
        if now - self._seen_written.get(agent_id, 0.0) < LAST_SEEN_RESOLUTION_SECS:
            return
        self._seen_written[agent_id] = now

        def write(conn: sqlite3.Connection) -> None:
            conn.execute("UPDATE agents SET last_seen_at = ? WHERE id = ?", (now, agent_id))

        try:
            await self.core.store.execute(write)
        except HubError as err:
            if err.code != "unavailable":
                raise
            # A full volume (or a busy store) must not turn an agent's reads away: the stamp is a
            # reading, so it is skipped now and written by the next call that can.
            self._seen_written.pop(agent_id, None)
