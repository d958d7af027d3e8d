"""The unified-diff parser (`hubcore.services.artifacts.diffs`) on real `git diff` output of this
repository's own history (stored fixtures: a commit with a rename, one adding binary files, one
deleting a file; and, when the tests run in a git checkout, the newest commits read live, with and
without `--binary`), on `diff -u` output, and its refusals naming the first bad line."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from hubcore.errors import HubError
from hubcore.services.artifacts import diffs

HERE = Path(__file__).parent / "diffs"
REPO = Path(__file__).resolve().parents[2]


def numstat(text: str) -> dict[str, tuple[int | None, int | None]]:
    """`git show --numstat`: path (a rename's new path) -> (added, removed); binary files (None, None)."""
    found: dict[str, tuple[int | None, int | None]] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        added, removed, path = line.split("\t", 2)
        brace = re.match(r"(.*)\{(.*) => (.*)\}(.*)", path)
        if brace:
            path = (brace.group(1) + brace.group(3) + brace.group(4)).replace("//", "/")
        elif " => " in path:
            path = path.split(" => ")[1]
        found[path] = (None, None) if added == "-" else (int(added), int(removed))
    return found


def counts(parsed: diffs.Diff) -> dict[str, tuple[int | None, int | None]]:
    return {f.path: (None, None) if f.binary else (f.added, f.removed) for f in parsed.files}


@pytest.mark.parametrize("name", ["rename", "binary", "deletion"])
def test_fixtures_match_git_numstat(name: str) -> None:
    parsed = diffs.parse((HERE / f"{name}.diff").read_text())
    assert counts(parsed) == numstat((HERE / f"{name}.numstat").read_text())


def test_rename_fixture() -> None:
    found = {f["path"]: f for f in diffs.summary(diffs.parse((HERE / "rename.diff").read_text()))["files"]}
    moved = found["tools/bench/mcp_calls.py"]
    assert moved["status"] == "renamed" and moved["old_path"] == "tools/bench/mcp.py"
    assert moved["similarity"] == 87 and moved["added"] == 34 and moved["removed"] == 20
    assert found["tests/foundation/test_benches.py"]["status"] == "added"
    assert found["tools/bench/ab.py"]["status"] == "modified"


def test_binary_and_deletion_fixtures() -> None:
    binary = diffs.summary(diffs.parse((HERE / "binary.diff").read_text()))
    assert [(f["path"], f["status"], f["binary"]) for f in binary["files"]] == [
        ("docs/screenshots/search-desktop.png", "added", True),
        ("docs/screenshots/search-phone.png", "added", True),
    ]
    deletion = diffs.summary(diffs.parse((HERE / "deletion.diff").read_text()))
    gone = next(f for f in deletion["files"] if f["path"] == "pwa/.keep")
    assert gone["status"] == "deleted" and gone["hunks"] == 0 and gone["old_mode"] == "100644"


def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, check=True).stdout.decode(
        "utf-8", "surrogateescape"
    )


@pytest.mark.skipif(shutil.which("git") is None or not (REPO / ".git").exists(), reason="not a git checkout")
@pytest.mark.parametrize("binary", [False, True])
def test_live_history_matches_numstat(binary: bool) -> None:
    revs = _git("rev-list", "--no-merges", "--max-count=60", "HEAD").split()
    if len(revs) < 2:
        pytest.skip("a shallow checkout")
    checked = 0
    for rev in revs:
        text = _git("show", "--format=", "-M", "--no-color", *(["--binary"] if binary else []), rev)
        if not text.strip():
            continue
        assert counts(diffs.parse(text, files_max=100_000, hunks_max=1_000_000)) == numstat(
            _git("show", "--format=", "-M", "--numstat", rev)
        ), rev
        checked += 1
    assert checked > 0


def test_numbers_and_no_newline_markers() -> None:
    text = (
        "--- a.txt\t2026-01-01 00:00:00.000000000 +0000\n+++ b.txt\t2026-01-02 00:00:00.000000000 +0000\n"
        "@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n\\ No newline at end of file\n"
        "@@ -10 +10,2 @@ def f():\n-x\n+y\n+z\n"
    )
    parsed = diffs.parse(text)
    (f,) = parsed.files
    assert (f.old_path, f.new_path, f.status, f.added, f.removed) == ("a.txt", "b.txt", "modified", 3, 2)
    first, second = f.hunks
    assert [(ln.kind, ln.old, ln.new, ln.text) for ln in first.lines] == [
        (" ", 1, 1, "one"),
        ("-", 2, None, "two"),
        ("+", None, 2, "TWO"),
        (" ", 3, 3, "three"),
    ]
    assert first.lines[-1].eof and second.section == "def f():"
    assert [(ln.kind, ln.old, ln.new) for ln in second.lines] == [("-", 10, None), ("+", None, 10), ("+", None, 11)]


def test_diff_ru_and_quoted_paths_and_mode_changes() -> None:
    text = (
        "diff -ru old/x new/x\n--- old/x\n+++ new/x\n@@ -1 +1 @@\n-a\n+b\nOnly in new: y\n"
        'diff --git "a/t\\303\\251st <b>.txt" "b/t\\303\\251st <b>.txt"\nold mode 100644\nnew mode 100755\n'
        "diff --git a/c.txt b/d.txt\nsimilarity index 100%\nrename from c.txt\nrename to d.txt\n"
        "diff --git a/e b/e\nnew file mode 100644\nindex 0000000..e69de29\n"
    )
    files = diffs.summary(diffs.parse(text))["files"]
    assert [(f["path"], f["status"]) for f in files] == [
        ("new/x", "modified"),
        ("tést <b>.txt", "modified"),
        ("d.txt", "renamed"),
        ("e", "added"),
    ]
    assert files[1]["old_mode"] == "100644" and files[1]["new_mode"] == "100755"
    assert files[2]["similarity"] == 100 and files[2]["old_path"] == "c.txt"


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("hello world\n", 1),
        ("<html><script>alert(1)</script></html>", 1),
        ("--- a\n+++ b\n@@ -1,2 +1,2 @@\n-x\n+y\n", 3),  # ends before its counts
        ("--- a\n+++ b\n@@ -1 +1 @@\n-x\n+y\n+z\n", 6),  # more added lines than the header said
        ("--- a\n+++ b\nnot a hunk\n", 3),
        ("--- a\nnope\n", 1),
        ("diff --git a/x b/x\nindex 1..2 100644\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\ntrailing words\n", 8),
        ("--- a\n+++ b\n@@ -1 +1 @@ \n-a\n+b\n@@ -x +1 @@\n", 6),
        ("\n\n", 1),
    ],
)
def test_refusals_name_the_first_bad_line(text: str, line: int) -> None:
    with pytest.raises(HubError) as caught:
        diffs.parse(text)
    assert caught.value.code == "invalid_argument"
    assert caught.value.details is not None and caught.value.details["line"] == line
    assert f"line {line}" in caught.value.message


def _files(n: int, hunks: int = 1) -> str:
    one = "".join(f"@@ -{k * 10 + 1} +{k * 10 + 1} @@\n-a\n+b\n" for k in range(hunks))
    return "".join(f"--- a/f{i}\n+++ b/f{i}\n{one}" for i in range(n))


def test_limits_at_their_edges() -> None:
    assert len(diffs.parse(_files(diffs.FILES_MAX)).files) == diffs.FILES_MAX
    with pytest.raises(HubError) as caught:
        diffs.parse(_files(diffs.FILES_MAX + 1))
    assert caught.value.code == "payload_too_large" and caught.value.details == {
        "field": "content",
        "limit": diffs.FILES_MAX,
    }
    assert diffs.parse(_files(10, diffs.HUNKS_MAX // 10)).hunk_count == diffs.HUNKS_MAX
    with pytest.raises(HubError) as caught:
        diffs.parse(_files(10, diffs.HUNKS_MAX // 10) + _files(1))
    assert caught.value.code == "payload_too_large" and caught.value.details["limit"] == diffs.HUNKS_MAX


def test_search_text_holds_paths_and_changed_lines_only() -> None:
    parsed = diffs.parse(
        "--- a/src/app.py\n+++ b/src/app.py\n@@ -1,3 +1,3 @@\n context\n-old_name()\n+new_name()\n tail\n"
    )
    text = diffs.search_text(parsed, 1000)
    assert text.split("\n") == ["src/app.py", "old_name()", "new_name()"]
