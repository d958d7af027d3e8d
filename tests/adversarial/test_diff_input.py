"""Hostile diffs (issue 29): whatever text arrives, the parser answers a diff or the spec's refusal
(`invalid_argument` naming a line that exists, or `payload_too_large` at a count limit), never
another exception; and over MCP, hostile diff artifacts and line anchors are refused with nothing
written, or stored and shown back exactly as sent."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hubcore.config import HubSettings
from hubcore.errors import HubError
from hubcore.services.artifacts import diffs
from hubcore.services.artifacts.comments import FILE_MAX, LINE_MAX
from tests.artifacts.support import query, state
from tests.harness import ADMIN
from tests.mcp.live import LiveHub, live_hub, structured, tool_error

PIECES = st.sampled_from(
    [
        "diff --git a/x b/x",
        "--- a/x",
        "+++ b/x",
        "--- /dev/null",
        "+++ /dev/null",
        "@@ -1 +1 @@",
        "@@ -1,2 +1,2 @@",
        "@@ -0,0 +1,3 @@ f()",
        "@@ -99999999999999999999,1 +1 @@",
        "-a",
        "+b",
        " c",
        "",
        "\\ No newline at end of file",
        "Binary files a/x and b/x differ",
        "GIT binary patch",
        "literal 3",
        "new file mode 100644",
        "rename from a",
        "rename to b",
        "similarity index 50%",
        "similarity index x%",
        "index 1..2",
        'diff --git "a/\\377" "b/\\3',
        "Only in x: y",
        "diff -ru a b",
        "\r",
        "\x00",
        "<script>alert(1)</script>",
        "+\u202e\ufeff\ud7ff",
    ]
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(PIECES, st.text(max_size=20)), max_size=30))
def test_any_text_is_a_diff_or_a_named_refusal(lines: list[str]) -> None:
    text = "\n".join(lines)
    try:
        parsed = diffs.parse(text, files_max=5, hunks_max=8)
    except HubError as refused:
        assert refused.code in ("invalid_argument", "payload_too_large"), refused
        if refused.code == "invalid_argument":
            line = refused.details["line"] if refused.details else None
            assert isinstance(line, int) and 1 <= line <= max(1, len(text.split("\n")))
        return
    assert 1 <= len(parsed.files) <= 5 and parsed.hunk_count <= 8
    summary = diffs.summary(parsed)
    assert summary["added"] == sum(f["added"] for f in summary["files"])


@pytest.fixture
async def live(settings: HubSettings) -> AsyncIterator[LiveHub]:
    async with live_hub(settings) as hub:
        await hub.make_project("web")
        yield hub


HOSTILE = (
    "--- a/\u202eevil\u0000.py\n+++ b/<svg onload=alert(1)>\r\n@@ -1 +1 @@\n-\x00\x1b[31mred\n"
    "+\ud7ff\ufeff" + "x" * 100_000 + "\n"
)


SVG = "<svg onload=alert(1)>"
HOSTILE_ANCHORS = (
    {"mode": "line", "file": "x" * (FILE_MAX + 1), "side": "new", "line": 1},
    {"mode": "line", "file": "a\nb", "side": "new", "line": 1},
    {"mode": "line", "file": SVG, "side": "new", "line": LINE_MAX + 1},
    {"mode": "line", "file": SVG, "side": "new", "line": 1.5},
    {"mode": "line", "file": SVG, "side": "new", "line": True},
    {"mode": "line", "file": SVG, "side": "new", "line": "1"},
    {"mode": "line", "file": SVG, "side": "NEW", "line": 1},
    {"mode": "line", "file": SVG, "side": "new", "line": 1, "extra": 1},
    {"mode": "line", "file": SVG, "side": "new", "line": 1, "end_line": 0},
    {"mode": "line", "file": SVG, "side": "new", "line": 1, "end_line": LINE_MAX + 1},
    {"mode": "line", "file": ["a"], "side": "new", "line": 1},
    {"mode": "line", "side": "new", "line": 1},
    {"mode": "lines", "file": SVG, "side": "new", "line": 1},
    "line 1",
    [1],
)


@pytest.mark.anyio
async def test_line_anchors_at_their_edges_on_both_surfaces(live: LiveHub) -> None:
    """The longest path a line comment takes (FILE_MAX characters) on the highest line (LINE_MAX),
    over MCP and REST; one past either, and every hostile anchor, refused on both with nothing written."""
    path = "p" * FILE_MAX
    edge = f"--- a/{path}\n+++ b/{path}\n@@ -{LINE_MAX} +{LINE_MAX} @@\n-a\n+b\n"
    token = await live.make_agent("bot")
    async with live.client(token) as bot:
        aid = structured(
            await bot.call_tool(
                "artifact_publish", {"project_id": "web", "title": "Edge", "kind": "diff", "content": edge}
            )
        )["artifact_id"]
        at = {"mode": "line", "file": path, "side": "new", "line": LINE_MAX, "end_line": LINE_MAX}
        posted = structured(await bot.call_tool("comment_post", {"artifact_id": aid, "body": "agent", "anchor": at}))
        assert posted["anchor"] == at
        r = await live.http.post(
            f"/api/v1/artifacts/{aid}/comments", headers=ADMIN, json={"body": "human", "anchor": at}
        )
        assert r.status_code == 201 and r.json()["anchor"] == at, r.text
        before = (state(live.app.hub), query(live.app.hub, "SELECT * FROM artifact_comments"))
        for anchor in ({**at, "file": path + "p"}, {**at, "line": LINE_MAX + 1}, *HOSTILE_ANCHORS):
            error = tool_error(
                await bot.call_tool("comment_post", {"artifact_id": aid, "body": "x", "anchor": anchor}),
                "invalid_argument",
            )
            r = await live.http.post(
                f"/api/v1/artifacts/{aid}/comments", headers=ADMIN, json={"body": "x", "anchor": anchor}
            )
            assert r.status_code == 400 and r.json()["code"] == "invalid_argument", (anchor, r.text)
            assert "anchor" in error["message"] and "anchor" in r.json()["detail"], (anchor, error, r.text)
        assert (state(live.app.hub), query(live.app.hub, "SELECT * FROM artifact_comments")) == before


@pytest.mark.anyio
async def test_hostile_diffs_over_mcp(live: LiveHub) -> None:
    token = await live.make_agent("bot")
    async with live.client(token) as bot:

        async def refused(code: str, tool: str, **arguments: Any) -> None:
            before = (state(live.app.hub), query(live.app.hub, "SELECT * FROM artifact_comments"))
            tool_error(await bot.call_tool(tool, arguments), code)
            assert (state(live.app.hub), query(live.app.hub, "SELECT * FROM artifact_comments")) == before

        for content in (
            "\n",
            "+++ b/x\n--- a/x\n",
            "--- a\n+++ b\n@@ -1,100000000 +1 @@\n-x\n",
            "@@ -1 +1 @@\n-a\n+b\n",
        ):
            await refused(
                "invalid_argument", "artifact_publish", project_id="web", title="t", kind="diff", content=content
            )
        for kind in ("Diff", "patch", None, 1):
            await refused(
                "invalid_argument",
                "artifact_publish",
                project_id="web",
                title="t",
                kind=kind,
                content="--- a\n+++ b\n@@ -1 +1 @@\n-a\n+b\n",
            )
        made = structured(
            await bot.call_tool(
                "artifact_publish", {"project_id": "web", "title": "<b>t</b>", "kind": "diff", "content": HOSTILE}
            )
        )
        got = structured(await bot.call_tool("artifact_get", {"artifact_id": made["artifact_id"]}))
        assert got["content"] == HOSTILE and got["title"] == "<b>t</b>"
        assert [f["path"] for f in got["diff"]["files"]] == ["<svg onload=alert(1)>"]
        aid = made["artifact_id"]
        for anchor in HOSTILE_ANCHORS:
            await refused("invalid_argument", "comment_post", artifact_id=aid, body="x", anchor=anchor)
        await refused(
            "forbidden",
            "comment_post",
            artifact_id="nope",
            body="x",
            anchor={"mode": "line", "file": "a", "side": "new", "line": 1},
        )
        posted = structured(
            await bot.call_tool(
                "comment_post",
                {
                    "artifact_id": aid,
                    "body": "<img src=x>",
                    "anchor": {"mode": "line", "file": "<svg onload=alert(1)>", "side": "old", "line": 1},
                },
            )
        )
        assert posted["anchor"]["file"] == "<svg onload=alert(1)>" and posted["body"] == "<img src=x>"
        for artifact_id in ("", "x" * 65, 7, ["a"]):
            await refused(
                "invalid_argument",
                "signal_append",
                project_id="web",
                kind="approval",
                summary="s",
                artifact_id=artifact_id,
            )
