"""`hub-cli review`: publish a diff from stdin, ask the human to review it, and maybe wait.

`git diff | hub-cli review --project P --title T [--wait]` publishes the text as a `diff`
artifact (`artifact_publish`), asks an approval naming it (`signal_append` kind approval with
`artifact_id`) and prints `artifact <id>` and `approval <id>`. With `--wait` it then waits
(`inbox_wait`, 55 s a call, until `--timeout`) for the decision: exit 0 approved; 1 changes
requested, the open comments of the reviewed version on stdout as `file:line: body`, one a line;
an approval the hub resolved at its deadline exits as its `on_expiry` outcome (0 approved, 1
declined) and prints the open comments too; 75 (EX_TEMPFAIL) still waiting when the timeout
passes (wait again with `--approval ID`). Other
exits as `hub-cli call`: 1 the hub refused, 2 usage (no diff on stdin), 69, 77, 78.
"""

from __future__ import annotations

import sys
import time
from typing import Any

import anyio

from hubcli import exits
from hubcli.client import CliFailure, request
from hubcore.config import Settings

STILL_WAITING = 75  # EX_TEMPFAIL: try again later
WAIT_CALL_SECS = 55  # under the hub's 60 s cap on one wait


class ToolRefused(Exception):
    def __init__(self, line: str) -> None:
        super().__init__(line)
        self.line = line


def _err(message: str) -> None:
    sys.stderr.write(f"hub-cli review: {message}\n")


async def _tool(url: str, token: str | None, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await request(url, token, "tools/call", {"name": name, "arguments": arguments}, timeout=90.0)
    if result.get("isError"):
        text = next((b.get("text", "") for b in result.get("content", []) if b.get("type") == "text"), "")
        raise ToolRefused(f"{name}: {str(text).splitlines()[0] if text else 'refused'}")
    structured = result.get("structuredContent")
    return dict(structured) if isinstance(structured, dict) else {}


def comment_lines(review: dict[str, Any] | None) -> list[str]:
    """The open comments as `file:line: body` (a range as `file:line-end`), one a line."""
    lines = []
    for c in (review or {}).get("comments", []):
        body = " ".join(str(c.get("body", "")).split())
        if c.get("file"):
            where = f"{c['file']}:{c['line']}" + (f"-{c['end_line']}" if c.get("end_line") else "")
        else:
            where = "(general)"
        lines.append(f"{where}: {body}")
    return lines


async def _decision(url: str, token: str | None, approval_id: str, deadline: float) -> dict[str, Any] | None:
    """The decided item, or None when `deadline` (monotonic) passed first. Resolutions of the
    agent's other items are passed over (their ids are older or newer than ours; none is lost to
    a later `inbox_read`)."""
    since = approval_id
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        waited = await _tool(
            url, token, "inbox_wait", {"since": since, "wait_seconds": int(max(0, min(WAIT_CALL_SECS, left)))}
        )
        for item in waited.get("items", []):
            if item.get("event_id") == approval_id and item.get("decision"):
                return dict(item)
        if waited.get("items") and waited.get("next_since"):
            since = str(waited["next_since"])
        elif left <= WAIT_CALL_SECS:
            return None


async def _run(
    url: str,
    token: str | None,
    project: str,
    title: str,
    diff: str | None,
    approval: str | None,
    wait: bool,
    timeout: float,
) -> int:
    if approval is None:
        assert diff is not None
        made = await _tool(
            url, token, "artifact_publish", {"project_id": project, "title": title, "kind": "diff", "content": diff}
        )
        asked = await _tool(
            url,
            token,
            "signal_append",
            {
                "project_id": project,
                "kind": "approval",
                "summary": f"Review: {title}"[:1024],
                "artifact_id": made["artifact_id"],
            },
        )
        approval = str(asked["event_id"])
        sys.stdout.write(f"artifact {made['artifact_id']}\napproval {approval}\n")
        sys.stdout.flush()
    if not wait:
        return exits.OK
    item = await _decision(url, token, approval, time.monotonic() + timeout)
    if item is None:
        _err(f"still waiting on approval {approval} (wait again: --approval {approval} --wait)")
        return STILL_WAITING
    decision = item["decision"]
    approved = decision.get("decision") == "approved"
    note = f": {decision['note']}" if decision.get("note") else ""
    if item.get("expired"):  # the hub's outcome at the deadline; the comments left before it still count
        _err(f"expired: {'approved' if approved else 'declined'} by its deadline, with no verdict from the human")
    elif approved:
        _err(f"approved{note}")
        return exits.OK
    else:
        _err(f"changes requested{note}")
    for line in comment_lines(decision.get("review")):
        sys.stdout.write(line + "\n")
    return exits.OK if approved else exits.REFUSED


def run_review(
    settings: Settings, *, project: str | None, title: str | None, wait: bool, timeout: float, approval: str | None
) -> int:
    url, token = settings.client.url, settings.client.token
    if not url:
        _err("no hub named: set HUB_URL or [client] url in the config file")
        return exits.NOT_CONFIGURED
    diff = None
    if approval is None:
        if not project or not title:
            _err("--project and --title are needed to publish (or --approval ID --wait to wait again)")
            return exits.USAGE
        diff = sys.stdin.read()
        if not diff.strip():
            _err("no diff on stdin: pipe one in, e.g. git diff | hub-cli review --project P --title T")
            return exits.USAGE
    if timeout <= 0:
        _err("--timeout must be positive")
        return exits.USAGE
    try:
        return anyio.run(lambda: _run(url, token, project or "", title or "", diff, approval, wait, timeout))
    except ToolRefused as refused:
        _err(refused.line)
        return exits.REFUSED
    except CliFailure as failure:
        _err(failure.message)
        return failure.code
