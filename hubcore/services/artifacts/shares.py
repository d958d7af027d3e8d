"""Share links and the viewer pass (`/api/v1/artifacts/:id/share`, `/viewer-pass`, `/s/:token`).

Public API (`hub.shares`, a `ShareService`):

- `create(caller, ShareRef)` -> `{token, version, url}` (admin): a link pinned to the artifact's
  current sealed version; a second create replaces the token (the old one answers 404 at once)
- `report(caller, ShareRef)` -> `{token, version, url, created_at}`, or `not_found` with no link
- `revoke(caller, ShareRef)` -> None (admin); no link is `not_found`
- `shared(token)` -> `(artifact_id, version)` of a live link, else the one `share_missing` error
  (the same bytes for a revoked and an unknown token: the message never names the token)
- `viewer_pass(caller, ShareRef)` -> `{pass}` (admin): HMAC-SHA256 keyed by the admin token over the
  artifact id and the sixty-second window; recomputed on each request, never stored
- `page_open(artifact_id, pass_)`: the public page's gate; while a link is live, `/artifacts/:id`
  and its frame answer the missing artifact's 404 unless `pass_` is the pass of this window or the
  previous one (a pass minted at a window's end still opens the frame it was put in)

Agents cannot create, revoke or report links or mint passes (`forbidden`; the REST gate already
keeps these routes to the admin). The link's `url` is `s/<token>`, absolute under HUB_PUBLIC_URL.
"""

# No `from __future__ import annotations`: pydantic reads the annotations.

import hashlib
import hmac
import secrets
import sqlite3
from typing import Any

from hubcore.caller import Caller
from hubcore.clock import iso
from hubcore.errors import HubError, not_found, unavailable
from hubcore.services.access import require_admin
from hubcore.services.artifacts import rows
from hubcore.services.artifacts.models import ArtifactId
from hubcore.services.core import Core
from hubcore.services.requests import Request

PASS_WINDOW_SECS = 60
TOKEN_BYTES = 32
TOKEN_MAX = 128  # a longer token is no token the hub minted: it is refused unread


class ShareRef(Request):
    """One artifact's share link or viewer pass."""

    artifact_id: ArtifactId


def share_missing() -> HubError:
    """The one answer for an unknown, revoked or malformed share token (no token echoed)."""
    return not_found("share link not found")


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def share_url(public_url: str | None, token: str) -> str:
    return f"{public_url.rstrip('/')}/s/{token}" if public_url else f"s/{token}"


class ShareService:
    def __init__(self, core: Core) -> None:
        self.core = core

    async def create(self, caller: Caller, req: ShareRef) -> dict[str, Any]:
        require_admin(caller, "creating a share link")
        token, now = secrets.token_urlsafe(TOKEN_BYTES), self.core.now()

        def write(conn: sqlite3.Connection) -> dict[str, Any]:
            a = rows.readable(conn, caller, req.artifact_id)
            conn.execute("DELETE FROM artifact_shares WHERE artifact_id = ?", (a["id"],))
            conn.execute(
                """INSERT INTO artifact_shares (artifact_id, token, token_hash, version, actor, created_at)
                            VALUES (?, ?, ?, ?, ?, ?)""",
                (a["id"], token, token_hash(token), a["version"], caller.actor, now),
            )
            return {"token": token, "version": a["version"], "url": share_url(self.core.settings.public_url, token)}

        found: dict[str, Any] = await self.core.store.execute(write)
        return found

    async def report(self, caller: Caller, req: ShareRef) -> dict[str, Any]:
        require_admin(caller, "reading a share link")

        def read(conn: sqlite3.Connection) -> dict[str, Any]:
            a = rows.readable(conn, caller, req.artifact_id)
            s = conn.execute(
                "SELECT token, version, created_at FROM artifact_shares WHERE artifact_id = ?", (a["id"],)
            ).fetchone()
            if s is None:
                raise not_found(f"artifact {a['id']!r} has no share link")
            return {
                "token": s["token"],
                "version": s["version"],
                "url": share_url(self.core.settings.public_url, s["token"]),
                "created_at": iso(s["created_at"]),
            }

        found: dict[str, Any] = await self.core.store.read(read)
        return found

    async def revoke(self, caller: Caller, req: ShareRef) -> None:
        require_admin(caller, "revoking a share link")

        def write(conn: sqlite3.Connection) -> None:
            a = rows.readable(conn, caller, req.artifact_id)
            if conn.execute("DELETE FROM artifact_shares WHERE artifact_id = ?", (a["id"],)).rowcount == 0:
                raise not_found(f"artifact {a['id']!r} has no share link")

        await self.core.store.execute(write)

    async def shared(self, token: str) -> tuple[str, int]:
        if not token or len(token) > TOKEN_MAX:
            raise share_missing()
        digest = token_hash(token)

        def read(conn: sqlite3.Connection) -> tuple[str, int]:
            s = conn.execute(
                "SELECT artifact_id, version FROM artifact_shares WHERE token_hash = ?", (digest,)
            ).fetchone()
            if s is None:
                raise share_missing()
            return str(s["artifact_id"]), int(s["version"])

        found: tuple[str, int] = await self.core.store.read(read)
        return found

    async def viewer_pass(self, caller: Caller, req: ShareRef) -> dict[str, Any]:
        require_admin(caller, "a viewer pass")
        found = await self.core.store.read(lambda conn: rows.readable(conn, caller, req.artifact_id))
        return {"pass": self._pass(str(found["id"]), self._window())}

    async def page_open(self, artifact_id: str, pass_: str | None) -> None:
        """Refuse the public page of an artifact while a share link is live, unless the pass is good."""
        if len(artifact_id) > 64:
            raise rows.artifact_missing(artifact_id)

        def read(conn: sqlite3.Connection) -> bool:
            return (
                conn.execute("SELECT 1 FROM artifact_shares WHERE artifact_id = ?", (artifact_id,)).fetchone()
                is not None
            )

        if not await self.core.store.read(read):
            return
        if pass_ and self.core.settings.admin_token:
            window = self._window()
            given = pass_.encode("utf-8", "surrogatepass")
            if any(hmac.compare_digest(given, self._pass(artifact_id, w).encode()) for w in (window, window - 1)):
                return
        raise rows.artifact_missing(artifact_id)

    def _window(self) -> int:
        return int(self.core.now() // PASS_WINDOW_SECS)

    def _pass(self, artifact_id: str, window: int) -> str:
        key = self.core.settings.admin_token
        if not key:
            raise unavailable("no admin token is configured, so no viewer pass can be minted")
        message = f"agent-hub viewer pass\0{artifact_id}\0{window}".encode()
        return hmac.new(key.encode(), message, hashlib.sha256).hexdigest()
