"""Scripts in HTML artifacts: off unless the human turns them on, per artifact
(`/api/v1/artifacts/:id/scripts`).

The artifact frame's CSP and sandbox keep fetch, WebSocket, beacons, storage and the parent away
from a script, but no CSP directive this Chromium honours keeps WebRTC from sending datagrams (ICE
and STUN are not `connect-src`; `webrtc 'block'` is an unrecognised directive: measured, see
docs/decisions.md, "Artifacts"). So a script in an artifact runs only once the human says
so: the frame is served with `script-src 'none'` and the CSP `sandbox` without `allow-scripts`
until then, and a protected artifact's decrypted document is put in a frame sandboxed without
scripts. Markdown artifacts are unaffected: the hub renders them with raw HTML escaped, so no
script of the agent's reaches their frame.

Public API (`hub.scripts`, a `ScriptsService`):

- `report(caller, ScriptsRef)` -> `{artifact_id, scripts}` (admin)
- `set(caller, ScriptsSet)` -> `{artifact_id, scripts}` (admin; setting what is set changes nothing)
- `allowed(artifact_id)` -> bool: what the frame is served with (no caller: the page is public)

Agents can neither read nor change the setting (`forbidden`; the REST gate keeps the routes to the
admin too): an agent that could turn its own scripts on would have the channel back.
"""

# No `from __future__ import annotations`: pydantic reads the annotations.

import sqlite3
from typing import Any

from pydantic import Field, StrictBool

from hubcore.caller import Caller
from hubcore.services.access import require_admin
from hubcore.services.artifacts import rows
from hubcore.services.artifacts.models import ArtifactId
from hubcore.services.core import Core
from hubcore.services.requests import Request


class ScriptsRef(Request):
    """One artifact's script setting."""

    artifact_id: ArtifactId


class ScriptsSet(ScriptsRef):
    """Turn an HTML artifact's scripts on or off (the human only)."""

    scripts: StrictBool = Field(
        description="true: the artifact's scripts run in its frame (they can then "
        "reach the network over WebRTC); false: they never run"
    )


def allowed_in(conn: sqlite3.Connection, artifact_id: str) -> bool:
    return conn.execute("SELECT 1 FROM artifact_scripts WHERE artifact_id = ?", (artifact_id,)).fetchone() is not None


class ScriptsService:
    def __init__(self, core: Core) -> None:
        self.core = core

    async def report(self, caller: Caller, req: ScriptsRef) -> dict[str, Any]:
        require_admin(caller, "reading an artifact's script setting")

        def read(conn: sqlite3.Connection) -> dict[str, Any]:
            a = rows.readable(conn, caller, req.artifact_id)
            return {"artifact_id": a["id"], "scripts": allowed_in(conn, a["id"])}

        found: dict[str, Any] = await self.core.store.read(read)
        return found

    async def set(self, caller: Caller, req: ScriptsSet) -> dict[str, Any]:
        require_admin(caller, "changing an artifact's script setting")
        now = self.core.now()

        def write(conn: sqlite3.Connection) -> dict[str, Any]:
            a = rows.readable(conn, caller, req.artifact_id)
            if req.scripts:
                conn.execute(
                    """INSERT INTO artifact_scripts (artifact_id, actor, created_at) VALUES (?, ?, ?)
                                ON CONFLICT (artifact_id) DO NOTHING""",
                    (a["id"], caller.actor, now),
                )
            else:
                conn.execute("DELETE FROM artifact_scripts WHERE artifact_id = ?", (a["id"],))
            return {"artifact_id": a["id"], "scripts": req.scripts}

        found: dict[str, Any] = await self.core.store.execute(write)
        return found

    async def allowed(self, artifact_id: str) -> bool:
        found: bool = await self.core.store.read(lambda conn: allowed_in(conn, artifact_id))
        return found
