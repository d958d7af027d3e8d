"""The active session of each agent connection: the seam the session tools fill.

"The active session is tracked per connection" (spec, Agent protocol endpoint). What a connection
is depends on how the client reached the hub:

- handshake era over HTTP (revisions up to 2025-11-25): one `Mcp-Session-Id`;
- 2026-07-28 over HTTP: there is no connection, so the key is the token's actor plus the
  `Hub-Connection` request header, which a client (and the stdio bridge, one value per process)
  sets to say which of its requests belong together. Without the header a request has no connection
  identity and therefore no implicit active session: two processes on one token must never write
  into, or end, each other's session. Such calls name their session by `session_id`;
- handshake era with no `Mcp-Session-Id` (only `initialize` itself): the same rule as 2026-07-28;
- stdio: the process's one pipe.

The registry lives in memory for the life of the serving process; it is bounded, and keys idle for
longer than `idle_secs` are forgotten. Beside each session id it remembers the session's project
and the sessions service's `generation` when the session was last known to run and be the
caller's: while the generation has not moved (no session ended, was reassigned, pruned or deleted
since), the session tools trust it without reading hub.db (`hubmcp.tools.current.active`).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

CONNECTION_HEADER = "hub-connection"
MAX_HINT = 128


@dataclass(frozen=True)
class ConnectionKey:
    era: str  # "legacy", "modern" or "stdio"
    value: str

    def __str__(self) -> str:
        return f"{self.era}:{self.value}"


def legacy_key(mcp_session_id: str) -> ConnectionKey:
    return ConnectionKey("legacy", mcp_session_id)


def modern_key(actor: str, hint: str | None) -> ConnectionKey | None:
    """The connection a 2026-07-28 request names, or None when it names none."""
    hint = (hint or "").strip()[:MAX_HINT]
    return ConnectionKey("modern", f"{actor}/{hint}") if hint else None


@dataclass(frozen=True)
class Binding:
    """A connection's active session as last known: its id, its project, and the sessions
    service's generation at the time it was known to run (-1: never checked)."""

    session_id: str
    project_id: str = ""
    generation: int = -1


class ActiveSessions:
    """Connection key -> the session that connection is working in."""

    def __init__(
        self,
        *,
        max_keys: int = 100_000,
        idle_secs: float = 7 * 24 * 3600,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._entries: OrderedDict[ConnectionKey, tuple[Binding, float]] = OrderedDict()
        self._max_keys = max_keys
        self._idle_secs = idle_secs
        self._monotonic = monotonic

    def binding(self, key: ConnectionKey) -> Binding | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        bound, used = entry
        now = self._monotonic()
        if now - used > self._idle_secs:
            del self._entries[key]
            return None
        self._entries[key] = (bound, now)
        self._entries.move_to_end(key)
        return bound

    def get(self, key: ConnectionKey) -> str | None:
        bound = self.binding(key)
        return bound.session_id if bound is not None else None

    def set(self, key: ConnectionKey, session_id: str, project_id: str = "", generation: int = -1) -> None:
        self._entries[key] = (Binding(session_id, project_id, generation), self._monotonic())
        self._entries.move_to_end(key)
        while len(self._entries) > self._max_keys:
            self._entries.popitem(last=False)

    def clear(self, key: ConnectionKey) -> None:
        self._entries.pop(key, None)

    def forget_session(self, session_id: str) -> None:
        """Drop every connection's pointer at `session_id` (it ended, moved or was pruned)."""
        for key in [k for k, (bound, _) in self._entries.items() if bound.session_id == session_id]:
            del self._entries[key]

    def __len__(self) -> int:
        return len(self._entries)
