"""The diff review screen's first paint (issue 29), a row of tools/bench/webapp.py on the hub it runs.

Diffs published over /mcp by an agent and opened in the app on a phone profile: a 390 x 844
viewport and Chromium's CPU slowed 4x through the DevTools protocol (`Emulation.setCPUThrottlingRate`).
Timed: from setting `#/artifacts/<id>` in an open app to the second animation frame after the first
screen is final: the screen is in the page and every file section and block of lines that meets
the viewport is drawn (the screen draws lines only as they come near, so what lies below costs
nothing here). Three 10,000-line diffs and a small one:

- 100 files of 100 lines (hunks of 3 context, 2 removed, 2 added, 3 context): on a phone the first
  screen is the title, the verdict panel and the first ten files of the list; then "jump": a tap on
  the 60th file's link (in the list's hidden part, as after "Show all") to its lines painted.
- one new file of 10,000 lines (a single hunk): its first lines are on the first screen.
- a 10-line diff: the screen's own cost, whatever the diff's size.

Baseline, in the same run: the screen's reads over HTTP alone (the artifact with its content, its
versions, live state, a viewer pass, comments and the waiting inbox) for the 100-file diff.
Target (issue 29): under 1 s throttled.

Alone, on a hub of its own: `.venv/bin/python tools/bench/webapp_review.py [--runs N] [--lines N]`.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
from pathlib import Path
from typing import Any

if not __package__:  # run as `python tools/bench/<name>.py`: tools/bench/__init__.py says why
    del sys.path[0]
    if importlib.util.find_spec("tools") is None:
        sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import httpx

from tools.bench.webapp_open import new_agent, open_times, run_alone, tool

PHONE = {"width": 390, "height": 844}
PROJECT = "review-bench"
JUMP_TO = 59  # the 60th file of the 100
# Resolves (with the time) at the second animation frame after the review screen's first screen is
# final: `.diff-view` is in the page, `must` (a selector, or "") matches, and no file section or
# block of lines that meets the viewport is still waiting to be drawn.
VIEWPORT_DRAWN = """(must) => new Promise(resolve => {
  const final = () => {
    const view = document.querySelector("main .diff-view");
    if (!view || (must && !document.querySelector(must))) return false;
    for (const el of view.querySelectorAll("section.diff-file:not([data-drawn]), .diff-chunk:not([data-drawn])")) {
      const r = el.getBoundingClientRect();
      if (r.height && r.bottom > 0 && r.top < innerHeight) return false;
    }
    return true;
  };
  const obs = new MutationObserver(() => {
    if (!final()) return;
    obs.disconnect();
    requestAnimationFrame(() => requestAnimationFrame(() => resolve(performance.timeOrigin + performance.now())));
  });
  obs.observe(document.body, { childList: true, subtree: true, attributes: true });
})"""


def many_files(lines: int, files: int = 100) -> str:
    """About `lines` hunk lines over `files` files: hunks of 3 context, 2 removed, 2 added, 3 context."""
    per_file = max(1, lines // files)
    out = []
    for f in range(files):
        path = f"src/module_{f:03d}/file_{f:03d}.py"
        out.append(f"diff --git a/{path} b/{path}\nindex 1111111..2222222 100644\n--- a/{path}\n+++ b/{path}\n")
        for k in range(max(1, per_file // 10)):
            start = k * 20 + 1
            out.append(f"@@ -{start},8 +{start},8 @@ def function_{k}():\n")
            out.append("".join(f"     context = compute({start + n}, 'value')\n" for n in range(3)))
            out.append(f"-    old_name_{k} = call(alpha, beta)\n-    return old_name_{k} + 1\n")
            out.append(f"+    new_name_{k} = call(alpha, beta, gamma)\n+    return new_name_{k} + 2\n")
            out.append("".join(f"     trailing = finish({start + n})\n" for n in range(3)))
    return "".join(out)


def one_file(lines: int) -> str:
    """A new file of `lines` lines: one hunk."""
    path = "src/generated/tables.py"
    body = "".join(
        f"+ROW_{n:05d} = lookup('row {n}', weight={n % 97}, label='generated entry')\n" for n in range(lines)
    )
    return (
        f"diff --git a/{path} b/{path}\nnew file mode 100644\nindex 0000000..3333333\n--- /dev/null\n"
        f"+++ b/{path}\n@@ -0,0 +1,{lines} @@\n{body}"
    )


def seed(url: str, token: str, lines: int) -> dict[str, str]:
    """The three diffs, published by an agent, with an approval waiting on the big one."""
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=120) as http:
        http.post("/api/v1/projects", json={"id": PROJECT}).raise_for_status()
        agent = new_agent(http, "coder")
        ids = {
            name: str(
                tool(
                    http,
                    agent,
                    "artifact_publish",
                    {"project_id": PROJECT, "title": f"Change: {name}", "kind": "diff", "content": content},
                )["artifact_id"]
            )
            for name, content in (
                ("many", many_files(lines)),
                ("one", one_file(lines)),
                ("small", many_files(10, files=1)),
            )
        }
        tool(
            http,
            agent,
            "signal_append",
            {"project_id": PROJECT, "kind": "approval", "summary": "Review it", "artifact_id": ids["many"]},
        )
    return ids


def paints(page: Any, artifact_id: str, runs: int) -> list[float]:
    return open_times(page, f"#/artifacts/{artifact_id}", runs, f"() => ({VIEWPORT_DRAWN})('')")


def jumps(page: Any, artifact_id: str, runs: int) -> list[float]:
    """From a tap on the 60th file's link (at the top of the open screen) to its lines painted."""
    times: list[float] = []
    for _ in range(runs):
        open_times(page, f"#/artifacts/{artifact_id}", 1, f"() => ({VIEWPORT_DRAWN})('')")
        page.evaluate("() => window.scrollTo(0, 0)")
        page.evaluate(f"() => {{ window.__jumped = ({VIEWPORT_DRAWN})('#diff-file-{JUMP_TO}[data-drawn] .dl'); }}")
        started = page.evaluate(
            f"() => {{ const t = performance.timeOrigin + performance.now();"
            f" document.querySelector('.diff-files a[href=\"#diff-file-{JUMP_TO}\"]').click();"
            f" return t; }}"
        )
        times.append(page.evaluate("() => window.__jumped") - started)
    return times


def reads_alone(url: str, token: str, artifact_id: str, runs: int) -> list[float]:
    base = f"/api/v1/artifacts/{artifact_id}"
    times: list[float] = []
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=60) as http:
        for _ in range(runs):
            started = time.perf_counter()
            for path in (base, base + "/versions", base + "/live", base + "/viewer-pass", base + "/comments"):
                http.get(path).raise_for_status()
            http.get("/api/v1/inbox", params={"status": "waiting", "project": PROJECT, "limit": 200}).raise_for_status()
            times.append((time.perf_counter() - started) * 1000)
    return times


def run(browser: Any, url: str, token: str, connected: Any, runs: int, lines: int = 10_000) -> list[str]:
    """The row's report lines (markdown), measured on the hub at `url`."""
    ids = seed(url, token, lines)
    page = connected(browser, url, "#/")
    slow: dict[str, list[float]] = {}
    fast: dict[str, list[float]] = {}
    try:
        page.set_viewport_size(PHONE)
        for name in ("small", "many", "one"):
            fast[name] = paints(page, ids[name], runs + 1)[1:]  # the first loads the screen's modules
        fast["jump"] = jumps(page, ids["many"], runs)
        cdp = page.context.new_cdp_session(page)
        cdp.send("Emulation.setCPUThrottlingRate", {"rate": 4})
        for name in ("small", "many", "one"):
            slow[name] = paints(page, ids[name], runs)
        slow["jump"] = jumps(page, ids["many"], runs)
        cdp.send("Emulation.setCPUThrottlingRate", {"rate": 1})
        cdp.detach()
    finally:
        page.context.close()
    base = statistics.median(reads_alone(url, token, ids["many"], runs))
    med = statistics.median
    labels = {
        "many": f"{lines:,} lines in 100 files: first screen (title, verdict, the first ten files)",
        "jump": "the same: tap the 60th file's link to its lines painted",
        "one": f"{lines:,} lines in one new file: first screen (its first lines)",
        "small": "10 lines in one file: first screen (the screen's own cost)",
    }
    out = [
        f"\n## The diff review screen on a phone (390 px): first screen painted ({runs} runs)\n",
        "| | CPU 4x slower: median ms | max ms | unthrottled: median ms | max ms | ratio (throttled median"
        " / baseline) |",
        "|---|---|---|---|---|---|",
    ]
    for name in ("many", "jump", "one", "small"):
        out.append(
            f"| {labels[name]} | {med(slow[name]):.0f} | {max(slow[name]):.0f} | {med(fast[name]):.0f} |"
            f" {max(fast[name]):.0f} | {med(slow[name]) / base:.1f} |"
        )
    worst = max(max(slow[n]) for n in ("many", "jump", "one"))
    out.append(
        f"\nbaseline: the screen's six reads over HTTP alone, median {base:.0f} ms."
        f" Worst throttled {worst:.0f} ms (target under 1 s: {'met' if worst < 1000 else 'NOT met'})"
    )
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7, help="opens timed per diff, throttled and not")
    parser.add_argument("--lines", type=int, default=10_000, help="lines of the big diffs")
    args = parser.parse_args(argv)
    run_alone(lambda browser, url, token, connected: run(browser, url, token, connected, args.runs, args.lines))


if __name__ == "__main__":
    main()
