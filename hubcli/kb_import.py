"""`hub-cli kb import --dir D [--dry-run] [--prune]` (spec: Folder sync, items 2 and 3).

The folder is read and checked whole before anything is written (`read_folder`, `lint_refusals`);
each page is then decided from three versions: the folder's file (F), the manifest's record of the
last sync (M) and the hub's page (H) (`decide`); the changes are made with conditional writes
(`absent` for a create, M for an update or delete), a conflict skipped and the rest going on, any
other refusal stopping the import; the manifest is rewritten so a second import changes nothing.
"""

from __future__ import annotations

import os
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from hubcli import exits
from hubcli import kb_folder as rules
from hubcli.client import CliFailure
from hubcli.kb_backend import Kb, hub_code, lint_line, page_arg, version_or_none
from hubcli.kb_export import list_pages
from hubcli.kb_folder import refuse
from hubcore.errors import HubError
from hubcore.services.entries import PAGE_MAX, version_of
from hubcore.services.kb.paths import require_writable

WORKERS = 8  # hub reads in flight at once
REFUSING_LINT = ("unparsed_frontmatter", "okf_version_misplaced", "link_escapes_bundle")


@dataclass
class Folder:
    """The folder's pages (path -> bytes) and its manifest's record (path -> version)."""

    pages: dict[str, bytes] = field(default_factory=dict)
    manifest: dict[str, str] | None = None


def _file_page(rel: str) -> str | None:
    """The page a file at `rel` (relative, `/`-separated) stands for, or None when the hub would
    refuse its path."""
    page = rules.ROOT + rel
    try:
        require_writable(page)  # a page named like a REST action: refused before anything is written
        return page if page_arg(page) == page else None
    except (CliFailure, HubError):
        return None


def _read_entry(dir_fd: int, name: str, rel: str, problems: list[str]) -> bytes | None:
    st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    if stat.S_ISLNK(st.st_mode):
        problems.append(f"{rel}: a symlink; symlinks are never followed")
        return None
    if not stat.S_ISREG(st.st_mode):
        problems.append(f"{rel}: not a regular file")
        return None
    if st.st_size > PAGE_MAX:
        problems.append(f"{rel}: {st.st_size} bytes, over the {PAGE_MAX} a page may hold")
        return None
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=dir_fd)
    with os.fdopen(fd, "rb") as fh:
        data = fh.read(PAGE_MAX + 1)
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        problems.append(f"{rel}: not UTF-8 text (byte {exc.start})")
        return None
    return data


def read_folder(folder: Path, project: str) -> Folder:
    """Every page file of the folder (dot-named entries left out), checked whole: a list of
    refusals, or the folder. Nothing is followed through a symlink."""
    rules.check_folder(folder)
    if not folder.is_dir():
        raise refuse(f"{folder} is not a directory")
    found, problems, total = Folder(), [], 0
    for dirpath, dirnames, filenames, dir_fd in os.fwalk(folder, follow_symlinks=False):
        base = os.path.relpath(dirpath, folder)
        # fwalk lists a symlink to a directory among the directories and does not descend into it.
        for name in [d for d in dirnames if not d.startswith(".")]:
            if stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode):
                problems.append(
                    f"{_shown(name if base == '.' else f'{base}/{name}')}: a symlink; symlinks are never followed"
                )
        dirnames[:] = sorted(
            d
            for d in dirnames
            if not d.startswith(".") and not stat.S_ISLNK(os.stat(d, dir_fd=dir_fd, follow_symlinks=False).st_mode)
        )
        for name in sorted(n for n in filenames if not n.startswith(".")):
            rel = name if base == "." else f"{base}/{name}"
            page = _file_page(rel) if _utf8_name(rel) else None
            if page is None:
                problems.append(f"{_shown(rel)}: not a page path the hub accepts")
                continue
            data = _read_entry(dir_fd, name, rel, problems)
            if data is not None:
                found.pages[page] = data
                total += len(data)
            if len(found.pages) > rules.PAGES_MAX or total > rules.BYTES_MAX:
                raise refuse(f"{folder} holds more than {rules.PAGES_MAX} pages or {rules.BYTES_MAX} bytes")
    if problems:
        raise refuse("refused before writing anything:\n" + "\n".join(f"  {p}" for p in problems))
    twins = rules.find_twins(found.pages)
    if twins:
        raise refuse(f"{twins[0][0]} and {twins[0][1]} differ only in case or Unicode normalisation")
    manifest = rules.read_manifest(folder)
    if manifest is not None and manifest["project"] != project:
        raise refuse(f"{folder} holds project {manifest['project']!r}'s bundle, not {project!r}'s")
    found.manifest = None if manifest is None else dict(manifest["pages"])
    return found


def _shown(rel: str) -> str:
    """A name as printed: bytes that are not UTF-8 as \\xNN escapes."""
    return rel.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _utf8_name(rel: str) -> bool:
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:  # a name that is not UTF-8 reaches us with surrogate escapes
        return False
    return True


def lint_findings(pages: dict[str, bytes], written: list[str]) -> list[dict[str, Any]]:
    """The findings of the pages to be written, with the folder as the bundle their links land in.
    Only those pages are parsed: where a link lands needs the folder's paths alone."""
    from hubcore.services.kb.facts import Derived, PageFacts, derive
    from hubcore.services.kb.views import Walk, page_findings

    there = Derived("absent")  # a page of the folder as a link target: it exists
    walk = Walk([PageFacts(p, len(data), "", there, "unverified") for p, data in pages.items()], checked_at="")
    found: list[dict[str, Any]] = []
    for path in written:
        found += page_findings(path, derive(path, pages[path].decode("utf-8")), walk)
    return found


@dataclass
class Step:
    """What import does with one page: `kind` (create, update, delete, hub newer, keep, conflict,
    already gone, none) and, once made, its outcome."""

    path: str
    kind: str
    reason: str = ""
    condition: str | None = None  # the if_version sent
    outcome: str | None = None  # the line printed, once decided or made
    version: str | None = None  # the version folder and hub agree on afterwards (for the manifest)


def decide(path: str, f: str | None, m: str | None, h: str | None, *, prune: bool) -> Step:
    """One page's step from its folder (F), manifest (M) and hub (H) versions."""
    if f is not None:
        if f == h:
            return Step(path, "none", version=f)
        if m is None:
            if h is None:
                return Step(path, "create", condition="absent")
            return Step(path, "conflict", "the hub holds a different page and the manifest names none", version=None)
        if f == m:
            return Step(path, "hub newer", version=m)
        if h == m:
            return Step(path, "update", condition=m)
        what = "deleted on the hub" if h is None else "changed on the hub"
        return Step(path, "conflict", f"{what} and changed in the folder since the last sync", version=m)
    if m is None:
        return Step(path, "none")
    if h is None:
        return Step(path, "already gone") if prune else Step(path, "none")
    if not prune:
        return Step(path, "keep", "gone from the folder; --prune deletes it on the hub", version=m)
    if h == m:
        return Step(path, "delete", condition=m)
    return Step(path, "conflict", "changed on the hub since the last sync; not deleted", version=m)


async def hub_versions(kb: Kb, paths: list[str]) -> dict[str, str | None]:
    """The hub's version of each page (None: no page), `WORKERS` reads at a time."""
    found: dict[str, str | None] = {}
    queue = iter(paths)

    async def reader() -> None:
        for path in queue:
            found[path] = await version_or_none(kb, path)

    async with anyio.create_task_group() as tg:
        for _ in range(WORKERS):
            tg.start_soon(reader)
    return found


@dataclass
class Run:
    """The changes being made, and what stopped them (a refusal other than a conflict)."""

    kb: Kb
    pages: dict[str, bytes]
    stopped: BaseException | None = None
    failed: str | None = None


async def _apply(run: Run, step: Step) -> None:
    kb = run.kb
    try:
        if step.kind == "delete":
            await kb.delete(step.path, step.condition)
            step.version = None
        else:
            done = await kb.write(step.path, run.pages[step.path].decode("utf-8"), step.condition)
            step.version = str(done["version"])
        step.outcome = f"{step.kind} {step.path}"
    except (HubError, CliFailure) as exc:
        refusal = hub_code(exc)
        if refusal is not None and refusal[0] == "conflict":
            step.kind, step.outcome = "conflict", f"conflict {step.path}: {refusal[1]}"
        elif refusal is not None and refusal[0] == "not_found" and step.kind == "delete":
            step.kind, step.outcome, step.version = "already gone", f"delete {step.path}: already gone", None
        else:
            run.stopped, run.failed, step.kind = exc, step.path, "failed"


async def make(run: Run, changes: list[Step]) -> None:
    """Make the changes one after another in path order; once one is refused (not a conflict) the
    later ones are not attempted. One at a time, so which ones those are does not depend on timing."""
    for step in changes:
        if run.stopped is not None:
            step.kind, step.outcome = "not attempted", f"not attempted {step.path}"
        else:
            await _apply(run, step)


LOCAL_LINES = {
    "hub newer": "hub newer {path}: left as is",
    "keep": "keep {path}: {reason}",
    "conflict": "conflict {path}: {reason}",
    "already gone": "delete {path}: already gone",
}
COUNTS = (
    ("created", "create"),
    ("updated", "update"),
    ("deleted", "delete"),
    ("conflicts", "conflict"),
    ("hub newer", "hub newer"),
    ("kept", "keep"),
    ("already gone", "already gone"),
    ("not attempted", "not attempted"),
    ("failed", "failed"),
    ("unchanged", "none"),
)


def summary(steps: list[Step], *, dry_run: bool) -> str:
    parts = []
    for label, kind in COUNTS:
        if dry_run and kind in ("create", "update", "delete"):
            label = f"would {kind}"
        parts.append(f"{label} {sum(1 for s in steps if s.kind == kind)}")
    return ", ".join(parts)


def _lint(pages: dict[str, bytes], steps: list[Step]) -> None:
    """Print the lint lines of the pages to be written on stderr; a `CliFailure` (exit 1) when a
    refusing code is among them."""
    written = [s.path for s in steps if s.kind in ("create", "update")]
    if not written:
        return
    findings = lint_findings(pages, written)
    sys.stderr.write("".join(lint_line(f) + "\n" for f in findings))
    refusing = sorted({f["path"] for f in findings if f["code"] in REFUSING_LINT})
    if refusing:
        raise refuse(f"refused before writing anything: lint {', '.join(REFUSING_LINT)} on {', '.join(refusing)}")


@dataclass
class Outcome:
    """What the command prints and returns."""

    stdout: list[str]
    stderr: list[str]
    code: int


async def import_folder(kb: Kb, folder: Path, *, dry_run: bool, prune: bool) -> Outcome:
    found = await anyio.to_thread.run_sync(read_folder, folder, kb.project)
    # The listing also stops a missing project here, before anything is decided; a page it does
    # not hold needs no read.
    held = await _held(kb)
    manifest = found.manifest or {}
    paths = sorted(set(found.pages) | set(manifest))
    hub = dict.fromkeys(paths) | await hub_versions(kb, [p for p in paths if held is None or p in held])
    steps = [
        decide(p, version_of(found.pages[p]) if p in found.pages else None, manifest.get(p), hub[p], prune=prune)
        for p in paths
    ]
    for step in steps:
        if step.kind in ("update", "delete") and step.version is None:
            step.version = manifest.get(step.path)  # what the manifest keeps if the change is not made
    _lint(found.pages, steps)
    changes = [s for s in steps if s.kind in ("create", "update", "delete")]
    run = Run(kb, found.pages)
    if dry_run:
        for step in changes:
            step.outcome = f"would {step.kind} {step.path}"
    else:
        await make(run, changes)
        versions = {s.path: s.version for s in steps if s.version is not None}
        data = rules.manifest_bytes(kb.project, versions)
        await anyio.to_thread.run_sync(_write_manifest, folder, data)
    for step in steps:
        if step.outcome is None and step.kind in LOCAL_LINES:
            step.outcome = LOCAL_LINES[step.kind].format(path=step.path, reason=step.reason)
    stdout = [s.outcome for s in steps if s.outcome is not None]
    stdout.append(summary(steps, dry_run=dry_run))
    return Outcome(stdout, _stopped(run), _code(run, steps))


async def _held(kb: Kb) -> set[str] | None:
    """The paths of the hub's pages, or None when a directory holds more than one listing shows
    (then every page is read). A hub refusal (a missing project) stops the import here."""
    try:
        return {row["path"] for row in await list_pages(kb, cap=None)}
    except CliFailure as exc:
        if hub_code(exc) is None and exc.code == exits.REFUSED:  # the listing's own refusal
            return None
        raise


def _write_manifest(folder: Path, data: bytes) -> None:
    with rules.folder_fd(folder) as root:
        rules.write_file(root, [rules.MANIFEST], data)


def _stopped(run: Run) -> list[str]:
    if run.stopped is None:
        return []
    refusal = hub_code(run.stopped)
    said = f"{refusal[0]}: {refusal[1]}" if refusal else getattr(run.stopped, "message", str(run.stopped))
    return [f"hub-cli kb: the hub refused {run.failed}, so the import stopped: {said}"]


def _code(run: Run, steps: list[Step]) -> int:
    if run.stopped is not None:
        return run.stopped.code if isinstance(run.stopped, CliFailure) else exits.REFUSED
    return exits.REFUSED if any(s.kind == "conflict" for s in steps) else exits.OK
