"""Unified diffs: the parser behind `kind: "diff"` artifacts (issue 29), pure and one pass.

`parse(text)` reads what `git diff` (and `git show`, `git diff --binary`) and `diff -u` / `diff -ru`
write: several files; renames and copies with their similarity; new and deleted files; mode
changes; binary markers (`Binary files ... differ`, `GIT binary patch` blocks, skipped); the
`\\ No newline at end of file` marker; C-quoted paths (`"a/t\\303\\251"`). Anything else refuses the
whole text with `invalid_argument` naming the first line that is not part of a diff (1-based,
`details.line`), so a write of a non-diff stores nothing. The file and hunk counts are limited here
once (`FILES_MAX`, `HUNKS_MAX`; over is `payload_too_large`), the size by the artifact body limit.

`summary(diff)` is what the hub keeps beside the version and reads return: per file its `path`
(the new path; the old one for a deleted file), `old_path` (renames and copies), `status`
(`added`, `deleted`, `modified`, `renamed`, `copied`), `added` and `removed` line counts, `hunks`,
`binary`, and when git said so `similarity` and `old_mode`/`new_mode`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from hubcore.errors import HubError, invalid, shown

FILES_MAX = 1000
HUNKS_MAX = 10_000
_HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)\Z")
_EXTENDED = (
    "old mode ",
    "new mode ",
    "deleted file mode ",
    "new file mode ",
    "copy from ",
    "copy to ",
    "rename from ",
    "rename to ",
    "similarity index ",
    "dissimilarity index ",
    "index ",
)
_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}


@dataclass(slots=True)
class Line:
    """One line of a hunk: `kind` is ' ' (context), '-' (removed) or '+' (added); `old` and `new`
    its numbers on each side (None on the side it is not on); `eof` when a no-newline marker follows."""

    kind: str
    old: int | None
    new: int | None
    text: str
    eof: bool = False


@dataclass(slots=True)
class Hunk:
    old_start: int
    old_count: int
    new_start: int
    new_count: int
    section: str
    lines: list[Line] = field(default_factory=list)


@dataclass(slots=True)
class FileDiff:
    old_path: str | None = None  # None: /dev/null (an added file)
    new_path: str | None = None  # None: /dev/null (a deleted file)
    status: str = "modified"
    binary: bool = False
    similarity: int | None = None
    old_mode: str | None = None
    new_mode: str | None = None
    hunks: list[Hunk] = field(default_factory=list)
    added: int = 0
    removed: int = 0

    @property
    def path(self) -> str:
        return self.new_path if self.new_path is not None else self.old_path or ""


@dataclass(slots=True)
class Diff:
    files: list[FileDiff]

    @property
    def hunk_count(self) -> int:
        return sum(len(f.hunks) for f in self.files)


def unquote(path: str) -> str:
    """A path as git writes it: C-quoted (octal bytes of UTF-8) when it holds unusual characters."""
    if len(path) < 2 or not (path.startswith('"') and path.endswith('"')):
        return path
    out, body, i = bytearray(), path[1:-1], 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            if nxt in "0123" and re.match(r"[0-7]{3}", body[i + 1 : i + 4]):
                out.append(int(body[i + 1 : i + 4], 8))
                i += 4
                continue
            if nxt in _ESCAPES:
                out.append(_ESCAPES[nxt])
                i += 2
                continue
        out.extend(ch.encode("utf-8", "surrogatepass"))
        i += 1
    return out.decode("utf-8", "replace")


def _side_path(raw: str, prefix: str | None) -> str | None:
    """The path of a `---`/`+++` line: None for /dev/null; without a `diff -u` timestamp; without
    git's `a/`/`b/` prefix."""
    raw = raw.rstrip("\r")  # a diff with CRLF line ends: the paths end before it
    if not raw.startswith('"') and "\t" in raw:
        raw = raw.split("\t", 1)[0]
    path = unquote(raw)
    if path == "/dev/null":
        return None
    if prefix and path.startswith(prefix):
        path = path[len(prefix) :]
    return path


def _git_paths(rest: str) -> tuple[str | None, str | None]:
    """The two paths of `diff --git a/P b/P` (the same path both sides; else left to the headers)."""
    if rest.startswith('"'):
        found = re.match(r'("(?:[^"\\]|\\.)*") (.*)\Z', rest)
        if found:
            return _side_path(found.group(1), "a/"), _side_path(found.group(2), "b/")
        return None, None
    n = len(rest)
    if n % 2 == 1 and rest.startswith("a/"):
        half = (n - 1) // 2
        left, right = rest[:half], rest[half + 1 :]
        if rest[half] == " " and right.startswith("b/") and left[2:] == right[2:]:
            return left[2:], right[2:]
    return None, None


class _Parser:
    def __init__(self, text: str, files_max: int, hunks_max: int) -> None:
        self.lines = text.split("\n")
        if self.lines and self.lines[-1] == "":
            self.lines.pop()
        self.i = 0
        self.files: list[FileDiff] = []
        self.hunks = 0
        self.files_max, self.hunks_max = files_max, hunks_max

    def bad(self, why: str = "is not part of a unified diff") -> HubError:
        if self.i >= len(self.lines):  # the text stopped short: name its last line, which exists
            n = max(1, len(self.lines))
            return invalid(f"content: the diff ends after line {n}; the next line {why}", field="content", line=n)
        n = self.i + 1
        return invalid(f"content: line {n} {why}: {shown(self.lines[self.i][:120])}", field="content", line=n)

    def peek(self) -> str | None:
        return self.lines[self.i] if self.i < len(self.lines) else None

    def run(self) -> Diff:
        while (line := self.peek()) is not None:
            if line.strip() == "" or line.startswith("Only in "):
                self.i += 1  # between files: blank lines and `diff -r`'s notes carry no change
            elif line.startswith("diff --git "):
                self.git_file(line)
            elif line.startswith("diff "):
                self.i += 1  # `diff -ru`'s command line before a file's headers
            elif line.startswith("--- ") and (self.lines[self.i + 1 : self.i + 2] or [""])[0].startswith("+++ "):
                self.add(self.plain_file())
            elif line.startswith("Binary files ") and line.endswith(" differ"):
                self.add(self.binary_note(FileDiff(), None))
            else:
                raise self.bad()
        if not self.files:
            raise invalid(
                "content: line 1: no file changes found: send the text `git diff` or `diff -u` writes",
                field="content",
                line=1,
            )
        return Diff(self.files)

    def add(self, f: FileDiff) -> None:
        if len(self.files) >= self.files_max:
            raise HubError(
                "payload_too_large",
                f"content: the diff changes more than {self.files_max} files; send it in parts",
                details={"field": "content", "limit": self.files_max},
            )
        if f.status == "modified" and f.old_path is None and f.new_path is not None:
            f.status = "added"
        elif f.status == "modified" and f.new_path is None and f.old_path is not None:
            f.status = "deleted"
        self.files.append(f)

    def git_file(self, line: str) -> None:
        f = FileDiff()
        f.old_path, f.new_path = _git_paths(line[len("diff --git ") :])
        self.i += 1
        while (header := self.peek()) is not None and header.startswith(_EXTENDED):
            self.extended(f, header)
            self.i += 1
        nxt = self.peek()
        if nxt is not None and nxt.startswith("--- "):
            self.add(self.plain_file(f, git=True))
        elif nxt is not None and nxt.startswith("Binary files ") and nxt.endswith(" differ"):
            self.add(self.binary_note(f, "git"))
        elif nxt == "GIT binary patch":
            f.binary = True
            self.i += 1
            while (block := self.peek()) is not None and not block.startswith("diff --git "):
                self.i += 1  # literal/delta blocks of base85 lines: not shown, never checked
            self.add(f)
        else:
            self.add(f)  # a mode change, a pure rename or an empty new file: no text

    @staticmethod
    def extended(f: FileDiff, line: str) -> None:
        key, _, value = line.partition(" ")
        if line.startswith(("rename from ", "copy from ")):
            f.old_path = unquote(line.split(" ", 2)[2])
            f.status = "renamed" if key == "rename" else "copied"
        elif line.startswith(("rename to ", "copy to ")):
            f.new_path = unquote(line.split(" ", 2)[2])
        elif line.startswith("similarity index "):
            f.similarity = int(value.split(" ")[1].rstrip("%")) if value.split(" ")[1].rstrip("%").isdigit() else None
        elif line.startswith("old mode "):
            f.old_mode = line[9:]
        elif line.startswith("new mode "):
            f.new_mode = line[9:]
        elif line.startswith("deleted file mode "):
            f.status, f.new_path, f.old_mode = "deleted", None, line[18:]
        elif line.startswith("new file mode "):
            f.status, f.old_path, f.new_mode = "added", None, line[14:]

    def binary_note(self, f: FileDiff, git: str | None) -> FileDiff:
        """`Binary files A and B differ`: paths from the note where the header gave none."""
        body = self.lines[self.i][len("Binary files ") : -len(" differ")]
        if not git or (f.old_path is None and f.new_path is None):
            left, sep, right = body.partition(" and ")
            if sep:
                f.old_path = _side_path(left, "a/" if git else None)
                f.new_path = _side_path(right, "b/" if git else None)
        if body.startswith("/dev/null and "):
            f.old_path = None
        if body.endswith(" and /dev/null"):
            f.new_path = None
        f.binary = True
        self.i += 1
        return f

    def plain_file(self, f: FileDiff | None = None, *, git: bool = False) -> FileDiff:
        f = f or FileDiff()
        old_raw, new_raw = self.lines[self.i][4:], None
        self.i += 1
        line = self.peek()
        if line is None or not line.startswith("+++ "):
            raise self.bad("should be the `+++ ` line of the file whose `--- ` line is above it")
        new_raw = line[4:]
        self.i += 1
        # git's prefixes; also on a plain `diff -u a/x b/x` pair (both sides, or neither, lose them)
        git = git or (
            old_raw.startswith(("a/", "/dev/null"))
            and new_raw.startswith(("b/", "/dev/null"))
            and not (old_raw.startswith("/dev/null") and new_raw.startswith("/dev/null"))
        )
        f.old_path = _side_path(old_raw, "a/" if git else None)
        f.new_path = _side_path(new_raw, "b/" if git else None)
        while (line := self.peek()) is not None and line.startswith("@@ "):
            self.hunk(f)
        if not f.hunks:
            raise self.bad("should start a hunk (`@@ -l,s +l,s @@`) after the file's `+++ ` line")
        return f

    def hunk(self, f: FileDiff) -> None:
        found = _HUNK.match(self.lines[self.i])
        if found is None:
            raise self.bad("is not a hunk header (`@@ -l,s +l,s @@`)")
        self.hunks += 1
        if self.hunks > self.hunks_max:
            raise HubError(
                "payload_too_large",
                f"content: the diff has more than {self.hunks_max} hunks; send it in parts",
                details={"field": "content", "limit": self.hunks_max},
            )
        old_start, new_start = int(found.group(1)), int(found.group(3))
        old_left = 1 if found.group(2) is None else int(found.group(2))
        new_left = 1 if found.group(4) is None else int(found.group(4))
        h = Hunk(old_start, old_left, new_start, new_left, found.group(5).strip())
        header, old_no, new_no = self.i, old_start, new_start
        self.i += 1
        while old_left > 0 or new_left > 0:
            line = self.peek()
            kind = line[:1] if line else " "
            if (
                line is None
                or kind not in " -+\\"
                or (kind == "-" and old_left == 0)
                or (kind == "+" and new_left == 0)
                or (kind == " " and (old_left == 0 or new_left == 0))
            ):
                why = (
                    f"ends the hunk at line {header + 1} early ({old_left} old and {new_left} new lines still to come)"
                )
                if line is None:
                    self.i = header
                    raise self.bad(
                        f"starts a hunk that the text ends before it is complete ({old_left} old and "
                        f"{new_left} new lines missing)"
                    )
                raise self.bad(why)
            if kind == "\\":
                if h.lines:
                    h.lines[-1].eof = True
            elif kind == "-":
                h.lines.append(Line("-", old_no, None, line[1:]))
                old_no, old_left, f.removed = old_no + 1, old_left - 1, f.removed + 1
            elif kind == "+":
                h.lines.append(Line("+", None, new_no, line[1:]))
                new_no, new_left, f.added = new_no + 1, new_left - 1, f.added + 1
            else:
                h.lines.append(Line(" ", old_no, new_no, line[1:]))
                old_no, new_no, old_left, new_left = old_no + 1, new_no + 1, old_left - 1, new_left - 1
            self.i += 1
        if (line := self.peek()) is not None and line.startswith("\\"):
            if h.lines:
                h.lines[-1].eof = True
            self.i += 1
        f.hunks.append(h)


def parse(text: str, *, files_max: int = FILES_MAX, hunks_max: int = HUNKS_MAX) -> Diff:
    """The diff in `text`, or `invalid_argument` naming its first line that is not part of one."""
    return _Parser(text, files_max, hunks_max).run()


def summary(diff: Diff) -> dict[str, Any]:
    files = []
    for f in diff.files:
        entry: dict[str, Any] = {
            "path": f.path,
            "old_path": f.old_path if f.status in ("renamed", "copied") else None,
            "status": f.status,
            "added": f.added,
            "removed": f.removed,
            "hunks": len(f.hunks),
            "binary": f.binary,
        }
        if f.similarity is not None:
            entry["similarity"] = f.similarity
        if f.old_mode is not None or f.new_mode is not None:
            entry["old_mode"], entry["new_mode"] = f.old_mode, f.new_mode
        files.append(entry)
    return {
        "files": files,
        "added": sum(f.added for f in diff.files),
        "removed": sum(f.removed for f in diff.files),
        "hunks": diff.hunk_count,
    }


def search_text(diff: Diff, limit: int) -> str:
    """What search indexes of a diff: its file paths, then its changed lines (at most `limit`
    characters; context lines are the code around a change, not the change)."""
    parts = [f.path for f in diff.files] + [
        f.old_path for f in diff.files if f.status in ("renamed", "copied") and f.old_path
    ]
    size = sum(len(p) + 1 for p in parts)
    for f in diff.files:
        for h in f.hunks:
            for line in h.lines:
                if line.kind != " " and size < limit:
                    parts.append(line.text)
                    size += len(line.text) + 1
    return "\n".join(p for p in parts if p)[:limit]
