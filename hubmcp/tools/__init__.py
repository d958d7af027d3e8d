"""Every agent tool, in the order `tools/list` names them (stable across requests)."""

from __future__ import annotations

from hubmcp.tools import artifacts, comments, feed, identity, inbox, kb, notify, search, sessions
from hubmcp.tools.base import Tool


def all_tools() -> tuple[Tool, ...]:
    return (
        *identity.TOOLS,
        *sessions.TOOLS,
        *kb.TOOLS,
        *feed.TOOLS,
        *inbox.TOOLS,
        *notify.TOOLS,
        *artifacts.TOOLS,
        *comments.TOOLS,
        *search.TOOLS,
    )
