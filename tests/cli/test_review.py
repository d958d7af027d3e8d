"""`git diff | hub-cli review --project P --title T [--wait]` as a real process against a live hub:
it publishes the diff and asks the approval; with --wait exit 0 approved, 1 changes requested with
the open comments as `file:line: body`, 75 still waiting at --timeout, an expiry as its outcome
with the comments; usage and refusals.

The commands run in this process (`tests.cli.here`) but in `test_wait_changes_requested_then_approved`,
whose real `hub-cli` processes wait on the hub while the test decides."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from hubcore.clock import FakeClock
from hubcore.config import HubSettings
from hubcore.services.artifacts import diffs
from tests.artifacts.support import query
from tests.cli.conftest import Run, cli, cli_env
from tests.cli.here import cli_here
from tests.harness import ADMIN
from tests.mcp.live import LiveHub, live_hub, structured

pytestmark = pytest.mark.anyio
API = "/api/v1"
DIFF = b"""diff --git a/app.py b/app.py
--- a/app.py
+++ b/app.py
@@ -1,2 +1,2 @@
 import os
-x = 1
+x = 2
"""


def ids(run: Run) -> tuple[str, str]:
    lines = dict(line.split(" ", 1) for line in run.out.splitlines())
    return lines["artifact"], lines["approval"]


async def decide_when_asked(live: LiveHub, decision: str, note: str | None, comment: str | None) -> None:
    """The human, once the approval is in the inbox: a line comment, then the decision."""
    while True:
        items = (await live.http.get(f"{API}/inbox", params={"status": "waiting"}, headers=ADMIN)).json()["items"]
        if items:
            break
        await anyio.sleep(0.05)
    item = items[0]
    aid = item["payload"]["review"]["artifact_id"]
    if comment:
        r = await live.http.post(
            f"{API}/artifacts/{aid}/comments",
            headers=ADMIN,
            json={"body": comment, "anchor": {"mode": "line", "file": "app.py", "side": "new", "line": 2}},
        )
        assert r.status_code == 201, r.text
    body = {"decision": decision, **({"note": note} if note else {})}
    r = await live.http.post(f"{API}/approvals/{item['event_id']}/decision", headers=ADMIN, json=body)
    assert r.status_code == 200, r.text


async def test_publish_only(tmp_path: Path, live: LiveHub) -> None:
    await live.make_project("web")
    env = cli_env(tmp_path, HUB_URL=live.base, HUB_TOKEN=await live.make_agent("bot"))
    run = await cli_here(env, "review", "--project", "web", "--title", "Bump x", stdin=DIFF)
    assert run.code == 0, run.err
    artifact, approval = ids(run)
    got = (await live.http.get(f"{API}/artifacts/{artifact}", headers=ADMIN)).json()
    assert got["kind"] == "diff" and got["title"] == "Bump x" and got["diff"]["files"][0]["path"] == "app.py"
    (item,) = (await live.http.get(f"{API}/inbox", params={"status": "waiting"}, headers=ADMIN)).json()["items"]
    assert item["event_id"] == approval and item["kind"] == "approval" and item["summary"] == "Review: Bump x"


async def test_wait_changes_requested_then_approved(tmp_path: Path, live: LiveHub) -> None:
    await live.make_project("web")
    env = cli_env(tmp_path, HUB_URL=live.base, HUB_TOKEN=await live.make_agent("bot"))
    results: list[Run] = []
    async with anyio.create_task_group() as tg:

        async def review() -> None:
            results.append(await cli(env, "review", "--project", "web", "--title", "T", "--wait", stdin=DIFF))

        tg.start_soon(review)
        await decide_when_asked(live, "decline", "not yet", "x should be\nthree")
    (run,) = results
    assert run.code == 1, run.err
    assert run.out.splitlines()[2:] == ["app.py:2: x should be three"]
    assert "changes requested: not yet" in run.err

    results.clear()
    async with anyio.create_task_group() as tg:

        async def again() -> None:
            results.append(await cli(env, "review", "--project", "web", "--title", "T2", "--wait", stdin=DIFF))

        tg.start_soon(again)
        await decide_when_asked(live, "approve", None, None)
    assert results[0].code == 0 and "approved" in results[0].err


async def test_still_waiting_then_wait_again(tmp_path: Path, live: LiveHub) -> None:
    await live.make_project("web")
    env = cli_env(tmp_path, HUB_URL=live.base, HUB_TOKEN=await live.make_agent("bot"))
    run = await cli_here(env, "review", "--project", "web", "--title", "T", "--wait", "--timeout", "1", stdin=DIFF)
    assert run.code == 75 and "still waiting" in run.err
    _, approval = ids(run)
    await decide_when_asked(live, "approve", "ship it", None)
    again = await cli_here(env, "review", "--approval", approval, "--wait", "--timeout", "5")
    assert again.code == 0 and "approved: ship it" in again.err and again.out == ""


async def test_usage_and_refusals(tmp_path: Path, live: LiveHub) -> None:
    await live.make_project("web")
    env = cli_env(tmp_path, HUB_URL=live.base, HUB_TOKEN=await live.make_agent("bot"))
    before = query(live.app.hub, "SELECT id FROM artifacts")
    assert (await cli_here(env, "review", "--project", "web", "--title", "T", stdin=b"")).code == 2
    assert (await cli_here(env, "review", "--title", "T", stdin=DIFF)).code == 2
    run = await cli_here(env, "review", "--project", "web", "--title", "T", stdin=b"this is not a diff\n")
    assert run.code == 1 and "invalid_argument" in run.err and "line 1" in run.err
    run = await cli_here(env, "review", "--project", "nowhere", "--title", "T", stdin=DIFF)
    assert run.code == 1
    files = "".join(f"--- a/f{i}\n+++ b/f{i}\n@@ -1 +1 @@\n-a\n+b\n" for i in range(diffs.FILES_MAX + 1))
    run = await cli_here(env, "review", "--project", "web", "--title", "T", stdin=files.encode())
    assert run.code == 1 and "payload_too_large" in run.err and f"more than {diffs.FILES_MAX} files" in run.err
    assert query(live.app.hub, "SELECT id FROM artifacts") == before
    assert (await cli_here(cli_env(tmp_path), "review", "--project", "web", "--title", "T", stdin=DIFF)).code == 78
    bad = cli_env(tmp_path, HUB_URL=live.base, HUB_TOKEN="hub_bad")
    assert (await cli_here(bad, "review", "--project", "web", "--title", "T", stdin=DIFF)).code == 77


async def test_an_expired_review_exits_as_its_outcome_with_the_comments(
    tmp_path: Path, settings: HubSettings, clock: FakeClock
) -> None:
    async with live_hub(settings, clock) as live:
        await live.make_project("web")
        token = await live.make_agent("bot")
        env = cli_env(tmp_path, HUB_URL=live.base, HUB_TOKEN=token)
        run = await cli_here(env, "review", "--project", "web", "--title", "T", stdin=DIFF)
        artifact, _ = ids(run)
        async with live.client(token) as bot:
            asked = {}
            for outcome in ("approve", "decline"):
                asked[outcome] = structured(
                    await bot.call_tool(
                        "signal_append",
                        {
                            "project_id": "web",
                            "kind": "approval",
                            "summary": f"Review ({outcome} at the deadline)",
                            "artifact_id": artifact,
                            "expires_in_seconds": 60,
                            "on_expiry": outcome,
                        },
                    )
                )["event_id"]
        r = await live.http.post(
            f"{API}/artifacts/{artifact}/comments",
            headers=ADMIN,
            json={"body": "x stays 1", "anchor": {"mode": "line", "file": "app.py", "side": "old", "line": 2}},
        )
        assert r.status_code == 201, r.text
        clock.advance(61)
        for outcome, code, word in (("approve", 0, "approved"), ("decline", 1, "declined")):
            got = await cli_here(env, "review", "--approval", asked[outcome], "--wait", "--timeout", "5")
            assert got.code == code, got.err
            assert f"expired: {word} by its deadline" in got.err
            assert got.out.splitlines() == ["app.py:2: x stays 1"]
