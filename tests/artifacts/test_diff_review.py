"""Reviewing a diff end to end on a live hub (issue 29), over MCP (the SDK's client) and REST:
publishing and updating `kind: "diff"` (the summary on both reads, refusals and the file and hunk
limits at their edges with nothing written), line comments
(posted by an agent and by the human, refused off the diff's lines, moved or outdated by an
update), and an approval naming the diff whose decision reaches `inbox_wait`, `inbox_read` and
`notify_wait` with the verdict and the open comments of the reviewed version."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from mcp.client import Client

from hubcore.clock import FakeClock
from hubcore.config import HubSettings
from hubcore.services.artifacts import diffs
from tests.artifacts.support import CIPHERTEXT, ENVELOPE, query, state
from tests.harness import ADMIN
from tests.mcp.live import LiveHub, call, live_hub, refuser, tool_error

pytestmark = pytest.mark.anyio
API = "/api/v1"

V1 = """diff --git a/src/app.py b/src/app.py
index 1111111..2222222 100644
--- a/src/app.py
+++ b/src/app.py
@@ -1,5 +1,5 @@
 import os
-def greet():
+def greet(name):
     print("hello")
     return 1
 # end
diff --git a/docs/<b>notes</b>.md b/docs/<b>notes</b>.md
new file mode 100644
--- /dev/null
+++ b/docs/<b>notes</b>.md
@@ -0,0 +1,2 @@
+<script>alert(1)</script>
+second line
"""


def v2_text() -> str:
    return V1.replace("@@ -1,5 +1,5 @@\n import os\n", "@@ -1,5 +1,7 @@\n import os\n+import sys\n").replace(
        '     print("hello")\n', '-    print("hello")\n+    print("hi")\n+    print("x")\n'
    )


@pytest.fixture
async def live(settings: HubSettings) -> AsyncIterator[LiveHub]:
    async with live_hub(settings) as hub:
        await hub.make_project("web")
        await hub.make_project("other")
        yield hub


def everything(live: LiveHub) -> tuple[Any, ...]:
    hub = live.app.hub
    return (
        *state(hub),
        query(hub, "SELECT * FROM artifact_comments ORDER BY id"),
        query(hub, "SELECT event_id, status FROM inbox ORDER BY event_id"),
    )


refused = refuser(everything)


def line(number: int, side: str = "new", file: str = "src/app.py") -> dict[str, Any]:
    """A line comment's anchor on V1."""
    return {"mode": "line", "file": file, "side": side, "line": number}


async def publish(bot: Client, title: str = "G", kind: str = "diff", content: str = V1) -> str:
    """The agent publishes an artifact in project web: its id."""
    made = await call(bot, "artifact_publish", project_id="web", title=title, kind=kind, content=content)
    return str(made["artifact_id"])


async def human_comment(live: LiveHub, aid: str, body: str, anchor: dict[str, Any]) -> dict[str, Any]:
    """The human comments on the diff over REST: the comment as created."""
    r = await live.http.post(f"{API}/artifacts/{aid}/comments", headers=ADMIN, json={"body": body, "anchor": anchor})
    assert r.status_code == 201, r.text
    return dict(r.json())


async def test_publish_read_and_refusals(live: LiveHub) -> None:
    token = await live.make_agent("bot")
    async with live.client(token) as bot:
        made = await call(bot, "artifact_publish", project_id="web", title="Greeting", kind="diff", content=V1)
        aid = made["artifact_id"]
        got = await call(bot, "artifact_get", artifact_id=aid)
        assert got["kind"] == "diff" and got["content"] == V1
        assert got["diff"] == {
            "files": [
                {
                    "path": "src/app.py",
                    "old_path": None,
                    "status": "modified",
                    "added": 1,
                    "removed": 1,
                    "hunks": 1,
                    "binary": False,
                },
                {
                    "path": "docs/<b>notes</b>.md",
                    "old_path": None,
                    "status": "added",
                    "added": 2,
                    "removed": 0,
                    "hunks": 1,
                    "binary": False,
                    "new_mode": "100644",
                    "old_mode": None,
                },
            ],
            "added": 3,
            "removed": 1,
            "hunks": 2,
        }
        rest = (await live.http.get(f"{API}/artifacts/{aid}", headers=ADMIN)).json()
        assert rest["diff"] == got["diff"] and rest["kind"] == "diff"
        listed = (await live.http.get(f"{API}/artifacts", headers=ADMIN)).json()["artifacts"]
        assert listed[0]["kind"] == "diff"

        error = await refused(
            live,
            bot,
            "invalid_argument",
            "artifact_publish",
            project_id="web",
            title="T",
            kind="diff",
            content="just some text\n--- nope\n",
        )
        assert error["details"]["line"] == 1 and "line 1" in error["message"]
        error = await refused(
            live, bot, "invalid_argument", "artifact_update", artifact_id=aid, content=V1 + "garbage after the diff\n"
        )
        assert error["details"]["line"] == V1.count("\n") + 1
        await refused(
            live,
            bot,
            "invalid_argument",
            "artifact_publish",
            project_id="web",
            title="T",
            kind="diff",
            content=CIPHERTEXT,
            envelope=ENVELOPE,
        )
        await refused(live, bot, "invalid_argument", "artifact_draft", artifact_id=aid, content="not a diff")


def many_files(n: int) -> str:
    return "".join(f"--- a/f{i}\n+++ b/f{i}\n@@ -1 +1 @@\n-a\n+b\n" for i in range(n))


def many_hunks(n: int) -> str:
    return "--- a/f\n+++ b/f\n" + "".join(f"@@ -{k * 10 + 1} +{k * 10 + 1} @@\n-a\n+b\n" for k in range(n))


async def test_limits_at_their_edges_over_mcp(live: LiveHub) -> None:
    token = await live.make_agent("bot")
    async with live.client(token) as bot:
        made = await call(
            bot, "artifact_publish", project_id="web", title="Big", kind="diff", content=many_files(diffs.FILES_MAX)
        )
        error = await refused(
            live,
            bot,
            "payload_too_large",
            "artifact_publish",
            project_id="web",
            title="Big",
            kind="diff",
            content=many_files(diffs.FILES_MAX + 1),
        )
        assert error["details"] == {"field": "content", "limit": diffs.FILES_MAX}
        await call(bot, "artifact_update", artifact_id=made["artifact_id"], content=many_hunks(diffs.HUNKS_MAX))
        error = await refused(
            live,
            bot,
            "payload_too_large",
            "artifact_update",
            artifact_id=made["artifact_id"],
            content=many_hunks(diffs.HUNKS_MAX + 1),
        )
        assert error["details"] == {"field": "content", "limit": diffs.HUNKS_MAX}
        got = await call(bot, "artifact_get", artifact_id=made["artifact_id"])
        assert got["version"] == 2 and got["diff"]["hunks"] == diffs.HUNKS_MAX
    r = await live.http.get(f"{API}/artifacts/{made['artifact_id']}?version=1", headers=ADMIN)
    assert len(r.json()["diff"]["files"]) == diffs.FILES_MAX


SIZE = 400_000  # the 50 MiB body limit, lowered to a size a test can afford (above the count edges' sizes)


def sized(n: int) -> str:
    """A one-file diff of exactly `n` bytes (its added line padded)."""
    head = "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+"
    return head + "b" * (n - len(head) - 1) + "\n"


# Each limit: a diff at it (taken), one past it (refused), and the `details.limit` the refusal names.
EDGES = {
    "files": (many_files(diffs.FILES_MAX), many_files(diffs.FILES_MAX + 1), diffs.FILES_MAX),
    "hunks": (many_hunks(diffs.HUNKS_MAX), many_hunks(diffs.HUNKS_MAX + 1), diffs.HUNKS_MAX),
    "size": (sized(SIZE), sized(SIZE + 1), None),
}


@pytest.mark.parametrize("tool", ["artifact_publish", "artifact_update", "artifact_draft"])
async def test_every_tool_that_takes_a_diff_at_each_limit(live: LiveHub, tool: str) -> None:
    """The spec has no REST artifact write (REST reads, shares, deletes and comments only), so these
    three MCP tools are every surface a diff is written through (`hub-cli review` and the stdio
    bridge call artifact_publish): each limit at its edge on each, nothing written past it."""
    assert len(EDGES["hunks"][1].encode()) < SIZE and len(sized(SIZE).encode()) == SIZE
    live.app.hub.blobs.max_bytes = SIZE
    token = await live.make_agent("bot")
    async with live.client(token) as bot:
        aid = await publish(bot, "Edges", content=sized(100))

        def arguments(content: str) -> dict[str, Any]:
            if tool == "artifact_publish":
                return {"project_id": "web", "title": "Edges", "kind": "diff", "content": content}
            return {"artifact_id": aid, "content": content}

        for limit, (at, over, count) in EDGES.items():
            taken = await call(bot, tool, **arguments(at))
            read = {"live": True} if tool == "artifact_draft" else {"version": taken["version"]}
            got = await call(bot, "artifact_get", artifact_id=taken.get("artifact_id", aid), **read)
            assert got["content"] == at, limit
            error = await refused(live, bot, "payload_too_large", tool, **arguments(over))
            if count is not None:
                assert error["details"] == {"field": "content", "limit": count}, limit


async def test_line_comments_move_or_go_outdated(live: LiveHub) -> None:
    token = await live.make_agent("bot")
    async with live.client(token) as bot:
        aid = await publish(bot)
        # the agent on the new side of `def greet(name):` (line 2), the human on the `print` line (3)
        mine = await call(bot, "comment_post", artifact_id=aid, body="name it who", anchor=line(2))
        assert mine["anchor"] == {"mode": "line", "file": "src/app.py", "side": "new", "line": 2}
        assert mine["outdated"] is False and mine["anchor_version"] == 1
        theirs = await human_comment(live, aid, "say hi", line(3))
        span = {**line(1, file="docs/<b>notes</b>.md"), "end_line": 2}
        await human_comment(live, aid, "<img src=x onerror=alert(1)>", span)
        before = everything(live)
        for anchor in (
            {"mode": "line", "file": "src/app.py", "side": "old", "line": 9},
            {"mode": "line", "file": "nope.py", "side": "new", "line": 1},
            {"mode": "line", "file": "src/app.py", "side": "new", "line": 4, "end_line": 9},
            {"mode": "line", "file": "src/app.py", "side": "new", "line": 3, "end_line": 2},
            {"mode": "line", "file": "src/app.py", "side": "both", "line": 1},
            {"mode": "line", "file": "src/app.py", "side": "new", "line": 0},
        ):
            r = await live.http.post(
                f"{API}/artifacts/{aid}/comments", headers=ADMIN, json={"body": "x", "anchor": anchor}
            )
            assert r.status_code == 400 and r.json()["code"] == "invalid_argument", (anchor, r.text)
            tool_error(
                await bot.call_tool("comment_post", {"artifact_id": aid, "body": "x", "anchor": anchor}),
                "invalid_argument",
            )
        assert everything(live) == before
        md = await publish(bot, "M", "markdown", "# x")
        await refused(
            live,
            bot,
            "invalid_argument",
            "comment_post",
            artifact_id=md,
            body="x",
            anchor={"mode": "line", "file": "a", "side": "new", "line": 1},
        )

        await call(bot, "artifact_update", artifact_id=aid, content=v2_text())
        comments = {c["id"]: c for c in (await call(bot, "comment_list", artifact_id=aid))["comments"]}
        moved, changed = comments[mine["id"]], comments[theirs["id"]]
        assert moved["anchor"] == {"mode": "line", "file": "src/app.py", "side": "new", "line": 3}
        assert moved["anchor_version"] == 2 and not moved["outdated"]
        assert changed["outdated"] and changed["anchor_version"] == 1 and changed["anchor"]["line"] == 3
        ranged = next(c for c in comments.values() if c["anchor"]["file"].startswith("docs/"))
        assert ranged["anchor"]["end_line"] == 2 and ranged["anchor_version"] == 2
        rest = (await live.http.get(f"{API}/artifacts/{aid}/comments", headers=ADMIN)).json()["comments"]
        assert {c["id"]: c["outdated"] for c in rest} == {c["id"]: c["outdated"] for c in comments.values()}


async def test_verdict_reaches_the_agents_waits(live: LiveHub) -> None:
    token = await live.make_agent("bot")
    async with live.client(token) as bot:
        aid = await publish(bot)
        md = await publish(bot, "M", "markdown", "# x")
        # a signal naming an artifact, an approval naming a non-diff, another project's diff, an id too long
        for project_id, kind, artifact_id in (
            ("web", "signal", aid),
            ("web", "approval", md),
            ("other", "approval", aid),
            ("web", "approval", "x" * 65),
        ):
            await refused(
                live,
                bot,
                "invalid_argument",
                "signal_append",
                project_id=project_id,
                kind=kind,
                summary="s",
                artifact_id=artifact_id,
            )
        asked = await call(
            bot, "signal_append", project_id="web", kind="approval", summary="Review my change", artifact_id=aid
        )
        item = (await live.http.get(f"{API}/inbox", headers=ADMIN)).json()["items"][0]
        assert item["payload"]["review"] == {"artifact_id": aid, "version": 1, "title": "G"}
        line_comment = await human_comment(live, aid, "rename this", line(2))
        await call(bot, "comment_post", artifact_id=aid, body="old and done", anchor=line(2, "old"))
        resolved = (await call(bot, "comment_list", artifact_id=aid))["comments"][-1]
        await call(bot, "comment_resolve", artifact_id=aid, comment_id=resolved["id"])
        r = await live.http.post(
            f"{API}/approvals/{asked['event_id']}/decision",
            headers=ADMIN,
            json={"decision": "decline", "note": "see the comments"},
        )
        assert r.status_code == 200, r.text

        waited = await call(bot, "inbox_wait", wait_seconds=5)
        (got,) = waited["items"]
        review = got["decision"]["review"]
        assert got["decision"]["decision"] == "declined" and got["decision"]["note"] == "see the comments"
        assert review["verdict"] == "changes_requested" and review["version"] == 1
        assert review["comments"] == [
            {
                "id": line_comment["id"],
                "file": "src/app.py",
                "side": "new",
                "line": 2,
                "end_line": None,
                "body": "rename this",
                "author": "human",
            }
        ]
        assert review["open_comments"] == 1 and review["truncated"] is False
        read = await call(bot, "inbox_read", status="resolved")
        assert read["items"][0]["decision"]["review"] == review
        # the decision's notice rode the first result after it (the wait's trailer), as notify_wait's would
        pending = waited.get("notifications", {}).get("pending", [])
        assert [p["review"] for p in pending if p.get("source") == "attention"] == [review], waited
        rest = (await live.http.get(f"{API}/inbox", params={"status": "resolved"}, headers=ADMIN)).json()
        assert [i["decision"]["review"] for i in rest["items"] if i["event_id"] == asked["event_id"]] == [review]


@pytest.mark.parametrize("on_expiry", ["approve", "decline"])
async def test_an_expired_review_carries_the_open_comments(
    settings: HubSettings, clock: FakeClock, on_expiry: str
) -> None:
    """The hub resolves the approval at its deadline per `on_expiry`; the agent's wait gets the
    review with verdict `expired` (the human gave none) and the open line comments left before."""
    async with live_hub(settings, clock) as live:
        await live.make_project("web")
        token = await live.make_agent("bot")
        async with live.client(token) as bot:
            aid = await publish(bot)
            asked = await call(
                bot,
                "signal_append",
                project_id="web",
                kind="approval",
                summary="Review it",
                artifact_id=aid,
                expires_in_seconds=60,
                on_expiry=on_expiry,
            )
            comment = await human_comment(live, aid, "rename this", line(2))
            clock.advance(61)
            waited = await call(bot, "inbox_wait", wait_seconds=5)
        (got,) = waited["items"]
        assert got["event_id"] == asked["event_id"] and got["expired"] is True
        decision = got["decision"]
        assert decision["actor"] == "hub" and decision["decision"] == (
            "approved" if on_expiry == "approve" else "declined"
        )
        assert decision["review"] == {
            "artifact_id": aid,
            "version": 1,
            "verdict": "expired",
            "open_comments": 1,
            "truncated": False,
            "comments": [
                {
                    "id": comment["id"],
                    "file": "src/app.py",
                    "side": "new",
                    "line": 2,
                    "end_line": None,
                    "body": "rename this",
                    "author": "human",
                }
            ],
        }
        pending = waited.get("notifications", {}).get("pending", [])
        title = f"Expired, {decision['decision']} by its deadline: your approval request: Review it"
        assert [(p["title"], p["review"]) for p in pending if p.get("thread_id") == asked["event_id"]] == [
            (title, decision["review"])
        ], waited
