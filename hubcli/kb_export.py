"""`hub-cli kb export --dir D [--force]` (spec: Folder sync, item 1).

Every page is listed and read, and every target checked, before anything is created: a refusal
leaves the folder as it was. Then each page is written at its path under the folder, files of pages
the old manifest names that the hub no longer has are removed (`--force`), and the manifest is
written last.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from hubcli import kb_folder as folder_rules
from hubcli.kb_backend import Kb
from hubcli.kb_folder import refuse

READERS = 8  # pages read at once: the hub serves them concurrently; the order of the files does not matter
NAME_MAX = 255  # bytes of one file name on common filesystems


@dataclass
class Export:
    """What an export will do, settled before anything is written."""

    project: str
    pages: dict[str, tuple[bytes, str]] = field(default_factory=dict)  # path -> (bytes, version)
    skipped: list[str] = field(default_factory=list)
    removals: list[str] = field(default_factory=list)


async def list_pages(kb: Kb, *, cap: int | None = folder_rules.PAGES_MAX) -> list[dict[str, Any]]:
    """Every page of the knowledge base (`{path, size_bytes}` rows), one directory level a request;
    refused past `cap` pages or when a directory holds more than one listing shows."""
    found: list[dict[str, Any]] = []
    pending = [folder_rules.ROOT]
    while pending:
        directory = pending.pop()
        level = await kb.listing(directory)
        if level.get("truncated"):
            raise refuse(f"{directory} holds more entries than the hub lists at once; not exported")
        for entry in level["entries"]:
            if entry["type"] == "dir":
                pending.append(entry["path"])
            else:
                found.append(entry)
            if cap is not None and len(found) > cap:
                raise refuse(f"the knowledge base holds more than {folder_rules.PAGES_MAX} pages; not exported")
    return sorted(found, key=lambda e: str(e["path"]))


async def read_pages(kb: Kb, paths: list[str]) -> dict[str, tuple[bytes, str]]:
    """Each page's bytes and version, `READERS` at a time."""
    read: dict[str, tuple[bytes, str]] = {}
    queue = iter(paths)

    async def reader() -> None:
        for path in queue:
            page = await kb.read(path)
            read[path] = (page["content"].encode("utf-8"), page["version"])

    async with anyio.create_task_group() as tg:
        for _ in range(READERS):
            tg.start_soon(reader)
    return read


async def gather(kb: Kb, project: str) -> Export:
    plan = Export(project)
    rows = await list_pages(kb)
    wanted = []
    for row in rows:
        if folder_rules.dot_named(row["path"]):
            plan.skipped.append(row["path"])
        else:
            wanted.append(row["path"])
    chosen = set(wanted)
    total = sum(int(r["size_bytes"]) for r in rows if r["path"] in chosen)
    if total > folder_rules.BYTES_MAX:
        raise refuse(f"the pages hold {total} bytes, over the {folder_rules.BYTES_MAX} a folder may; not exported")
    read = await read_pages(kb, wanted)
    plan.pages = {path: read[path] for path in wanted}  # in path order, whichever reader finished first
    return plan


def check(plan: Export, folder: Path, *, force: bool) -> None:
    """Every refusal of the export, before anything is created; fills in `plan.removals`."""
    folder_rules.check_folder(folder)
    exists = folder.exists()
    if exists and not force and not folder_rules.is_empty_dir(folder):
        raise refuse(f"{folder} is not empty; --force overwrites it")
    old = folder_rules.read_manifest(folder) if exists else None
    if old is not None and old["project"] != plan.project:
        raise refuse(f"{folder} holds project {old['project']!r}'s bundle, not {plan.project!r}'s")
    if old is not None:
        plan.removals = sorted(p for p in old["pages"] if p not in plan.pages and not folder_rules.dot_named(p))
    twins = folder_rules.find_twins([*plan.pages, *plan.removals])
    if twins:
        one, other = twins[0]
        raise refuse(f"{one} and {other} differ only in case or Unicode normalisation; a folder cannot hold both")
    for path in [*plan.pages, *plan.removals]:
        long = [p for p in folder_rules.parts_of(path) if len(p.encode("utf-8")) > NAME_MAX]
        if long:
            raise refuse(f"{path}: a name over {NAME_MAX} bytes cannot be a file")
        folder_rules.check_target(folder, path)
    folder_rules.check_target(folder, folder_rules.ROOT + folder_rules.MANIFEST)


def write(plan: Export, folder: Path) -> list[str]:
    """Write the pages, remove the stale files, write the manifest; the lines to print."""
    lines = []
    with folder_rules.folder_fd(folder, create=True) as root:
        for path, (data, _) in plan.pages.items():
            folder_rules.write_file(root, folder_rules.parts_of(path), data)
        for path in plan.removals:
            if folder_rules.remove_file(root, folder_rules.parts_of(path)):
                lines.append(f"removed {path}")
        versions = {path: version for path, (_, version) in plan.pages.items()}
        folder_rules.write_file(root, [folder_rules.MANIFEST], folder_rules.manifest_bytes(plan.project, versions))
    size = sum(len(data) for data, _ in plan.pages.values())
    lines.append(f"exported {len(plan.pages)} pages ({size} bytes) to {folder}")
    return lines


async def export(kb: Kb, project: str, folder: Path, *, force: bool) -> list[str]:
    plan = await gather(kb, project)
    for path in plan.skipped:
        sys.stderr.write(f"hub-cli kb: skipped {path}: a dot-named component is not exported\n")
    await anyio.to_thread.run_sync(lambda: check(plan, folder, force=force))
    return await anyio.to_thread.run_sync(lambda: write(plan, folder))
