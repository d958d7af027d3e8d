"""A human's comment reaches the artifact's author agent (issue 25 part 7).

When the human (the admin) comments on an artifact an agent published, the same write appends a
feed event in the artifact's project: kind `artifact`, actor the human, summary `commented on
<title>: <the comment's first line>`, payload `{action: "commented", artifact_id, comment_id,
artifact_author, body, version, quote?}`. It is exempt from the feed's ceiling (a comment is never
refused because the feed is full). Its change names the author as `owner`, so the author's
attention queue holds it (the `notifications` trailer, `notify_wait`) without any subscription;
`session_brief` lists the human's open comments on the caller's artifacts (`comments`).

Only comments by the actor `human` count (an embedded stdio admin under another label notifies
nobody), and the drain reads only events by that actor, which no agent can write. Agents' own
comments notify nobody: they are the agents' conversation with each other, read with
`comment_list`.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from hubcore.caller import HUMAN, Caller
from hubcore.services import events as ev
from hubcore.services.changes import Effects

ACTION = "commented"
SUMMARY_CHARS = 200  # the comment's first line, cut, after the artifact's title


def notify_author(
    conn: sqlite3.Connection,
    caller: Caller,
    artifact: sqlite3.Row,
    comment: dict[str, Any],
    now: float,
    effects: Effects,
) -> None:
    """Append the event that tells the author of `artifact` about the human's `comment`."""
    author = artifact["actor"]
    # Only the human's own comments (the actor agents cannot take: an agent's artifact event is
    # never read as one), on an artifact an agent published.
    if not caller.is_admin or caller.actor != HUMAN or not author or author == HUMAN:
        return
    body = str(comment["body"])
    first = body.splitlines()[0] if body else ""
    summary = f"commented on {artifact['title']}: {first}"
    if len(summary) > SUMMARY_CHARS:
        summary = summary[: SUMMARY_CHARS - 1] + "…"
    payload: dict[str, Any] = {
        "action": ACTION,
        "artifact_id": artifact["id"],
        "comment_id": comment["id"],
        "artifact_author": author,
        "body": body,
        "version": comment["anchor_version"],
    }
    anchor = comment.get("anchor")
    if isinstance(anchor, dict) and anchor.get("mode") == "text":
        payload["quote"] = anchor.get("quote")
    rendered = ev.insert_event(
        conn,
        ev.NewEvent(artifact["project_id"], "artifact", caller.actor, summary, payload, exempt=True),
        now=now,
        cap=0,
    )
    effects.event(rendered, owner=author)
