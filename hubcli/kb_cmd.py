"""`hub-cli kb get|put|list|delete|history|revert|forget`: one project's knowledge base, over REST
when `HUB_URL` is set (the admin token as `HUB_TOKEN`), else on the local data directory as the
human admin. Heavy imports wait until a command runs: `--help` reads nothing."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from hubcli import exits

if TYPE_CHECKING:
    from hubcli.kb_backend import Kb

kb_app = typer.Typer(
    name="kb",
    help="Read and write a project's knowledge base.\n\nOn the hub at HUB_URL with the admin token as "
    "HUB_TOKEN, or with no HUB_URL on the local data directory as the human admin (refused while a "
    "running hub holds it). A path outside /fs is relative to it (notes/a.md is /fs/notes/a.md). "
    "Exit 0 ok, 1 the hub refused (for get: the page is absent), 2 usage, 69 unreachable, "
    "77 token refused, 78 no hub or token named.",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)

PROJECT = typer.Option(None, "--project", help="The project; HUB_PROJECT (or [client] project) when left out.")
JSON = typer.Option(False, "--json", help="Print the hub's answer as JSON.")
IF_VERSION = typer.Option(
    None,
    "--if-version",
    help="Only if the page is at this version (sha256:...), or 'absent' for only if there is no page.",
)


def _err(message: str) -> None:
    sys.stderr.write(f"hub-cli kb: {message}\n")


def _run(project: str | None, work: Callable[[Kb], Awaitable[Any]]) -> Any:
    """Run `work` on the project's knowledge base, or exit with the failure's code (its message on
    stderr, nothing on stdout)."""
    from hubcli.client import CliFailure
    from hubcli.kb_backend import run_kb
    from hubcli.settings import settings_or_exit

    settings = settings_or_exit()
    target = project or settings.client.project
    if not target:
        _err("name the project with --project or HUB_PROJECT")
        raise typer.Exit(exits.USAGE)
    try:
        return run_kb(settings, target, work)
    except CliFailure as failure:
        _err(failure.message)
        raise typer.Exit(failure.code) from None


def _path(raw: str, *, is_directory: bool = False) -> str:
    """The canonical path, or exit 2 naming why the hub would refuse it."""
    from hubcli.client import CliFailure
    from hubcli.kb_backend import page_arg

    try:
        return page_arg(raw, is_directory=is_directory)
    except CliFailure as failure:
        _err(failure.message)
        raise typer.Exit(failure.code) from None


def _json(value: Any) -> None:
    from hubcli.mcp_cmd import dump_json

    sys.stdout.write(dump_json(value) + "\n")


def _notes(result: dict[str, Any]) -> None:
    """A write's lint findings and warnings, on stderr (they never fail a write)."""
    from hubcli.kb_backend import lint_line

    for finding in result.get("lint") or []:
        sys.stderr.write(lint_line(finding) + "\n")
    for warning in result.get("warnings") or []:
        _err(f"warning: {warning}")


@kb_app.command("get")
def get(
    path: str = typer.Argument("/fs/index.md", help="The page (default /fs/index.md)."),
    project: str = PROJECT,
    as_json: bool = JSON,
    version: str = typer.Option(
        None,
        "--version",
        help="A kept version the page's history names (deleted pages too), instead of the page as it stands.",
    ),
) -> None:
    """Print a page's content exactly as stored.

    Nothing is printed on stdout on failure: exit 1 means the page (or the version) is absent, other
    codes mean no answer or the token refused."""
    canonical = _path(path)
    page = _run(project, lambda kb: kb.read(canonical, version))
    if as_json:
        _json(page)
    else:
        sys.stdout.write(page["content"])


def _content(source: str | None, file: Path | None) -> str:
    """The page from stdin (`-`) or `--file`: exactly one of them, UTF-8 text; else exit 2."""
    if (source is None) == (file is None) or (source is not None and source != "-"):
        _err("give the content as - (stdin) or --file F, one of them")
        raise typer.Exit(exits.USAGE)
    try:
        data = sys.stdin.buffer.read() if file is None else file.read_bytes()
    except OSError as exc:
        _err(f"cannot read {file}: {exc.strerror}")
        raise typer.Exit(exits.USAGE) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        _err(f"{'stdin' if file is None else file} is not UTF-8 text (byte {exc.start}); a page is markdown")
        raise typer.Exit(exits.USAGE) from None


@kb_app.command("put")
def put(
    path: str = typer.Argument(..., help="The page to write."),
    source: str = typer.Argument(None, metavar="-", help="- to read the content from stdin."),
    file: Path = typer.Option(None, "--file", help="Read the content from this file.", dir_okay=False),
    project: str = PROJECT,
    as_json: bool = JSON,
    if_version: str = IF_VERSION,
) -> None:
    """Write a page from stdin (-) or a file and print `wrote <path> <version>`.

    Lint findings go to stderr as `lint <code> <path>:<line>: <message>`; they never fail a write."""
    canonical = _path(path)
    content = _content(source, file)
    result = _run(project, lambda kb: kb.write(canonical, content, if_version))
    _notes(result)
    if as_json:
        _json(result)
    else:
        sys.stdout.write(f"wrote {result['path']} {result['version']}\n")


@kb_app.command("list")
def list_pages(
    path: str = typer.Argument("/fs/", help="The directory (default /fs/)."),
    project: str = PROJECT,
    as_json: bool = JSON,
) -> None:
    """List one directory level: a path a line, directories ending in /.

    At most 500 entries; past that a note on stderr says the listing was cut."""
    canonical = _path(path, is_directory=True)
    listed = _run(project, lambda kb: kb.listing(canonical))
    if as_json:
        _json(listed)
        return
    for entry in listed["entries"]:
        sys.stdout.write(entry["path"] + ("/" if entry["type"] == "dir" else "") + "\n")
    if listed.get("truncated"):
        _err(f"the listing stops at {len(listed['entries'])} entries")


@kb_app.command("delete")
def delete(
    path: str = typer.Argument(..., help="The page to delete."),
    project: str = PROJECT,
    as_json: bool = JSON,
    if_version: str = IF_VERSION,
) -> None:
    """Delete a page and print `deleted <path>`.

    Its history and kept versions stay: revert can bring it back."""
    canonical = _path(path)
    result = _run(project, lambda kb: kb.delete(canonical, if_version))
    if as_json:
        _json(result)
    else:
        sys.stdout.write(f"deleted {result['path']}\n")


async def _all_versions(kb: Kb, path: str) -> dict[str, Any]:
    """Every version of the page, newest first, page after page of the hub's answer."""
    first = await kb.versions(path, None)
    rows = list(first["versions"])
    answer = first
    while answer.get("truncated") and answer.get("next_before"):
        answer = await kb.versions(path, answer["next_before"])
        rows.extend(answer["versions"])
    return {**first, "versions": rows, "next_before": None, "truncated": False}


@kb_app.command("history")
def history(
    path: str = typer.Argument(..., help="The page (deleted pages too)."),
    project: str = PROJECT,
    as_json: bool = JSON,
) -> None:
    """Print a page's versions, newest first.

    Columns: time, operation, actor, version, size, and a note saying which rows hold the current
    version and whose bytes are not kept (only kept versions can be reverted to)."""
    canonical = _path(path)
    found = _run(project, lambda kb: _all_versions(kb, canonical))
    if as_json:
        _json(found)
        return
    rows = [("AT", "OP", "ACTOR", "VERSION", "SIZE", "NOTE")]
    for v in found["versions"]:
        note = ", ".join(n for n, on in (("current", v.get("current")), ("not kept", not v.get("kept"))) if on)
        size = "-" if v.get("size_bytes") is None else str(v["size_bytes"])
        rows.append((v["at"], v["op"], v["actor"], v.get("version") or "-", size, note))
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    for r in rows:
        sys.stdout.write("  ".join([*(r[i].ljust(widths[i]) for i in range(5)), r[5]]).rstrip() + "\n")


@kb_app.command("revert")
def revert(
    path: str = typer.Argument(..., help="The page."),
    version: str = typer.Argument(..., help="A kept version of it (sha256:..., see history)."),
    project: str = PROJECT,
    as_json: bool = JSON,
    if_version: str = IF_VERSION,
) -> None:
    """Write a kept version back as a new write and print `reverted <path> <version>`.

    Reverting to the version the page holds writes nothing and prints `unchanged <path> <version>`.
    With --if-version absent it restores a deleted page only while it is still gone."""
    canonical = _path(path)
    result = _run(project, lambda kb: kb.revert(canonical, version, if_version))
    _notes(result)
    if as_json:
        _json(result)
    else:
        word = "reverted" if result.get("changed") else "unchanged"
        sys.stdout.write(f"{word} {result['path']} {result['version']}\n")


@kb_app.command("forget")
def forget(
    path: str = typer.Argument(..., help="The page."),
    project: str = PROJECT,
    as_json: bool = JSON,
) -> None:
    """Forget the kept bytes of a page's older versions (admin).

    Every version's bytes but the held one's go (all of them for a deleted page); the log rows stay.
    Prints `forgot <n> versions of <path> (<bytes> bytes)`."""
    canonical = _path(path)
    result = _run(project, lambda kb: kb.forget(canonical))
    if as_json:
        _json(result)
    else:
        sys.stdout.write(
            f"forgot {result['versions_forgotten']} versions of {result['path']} ({result['bytes_forgotten']} bytes)\n"
        )


@kb_app.command("export")
def export(
    folder: Path = typer.Option(..., "--dir", help="The folder: created when absent (its parent must exist)."),
    force: bool = typer.Option(
        False,
        "--force",
        help="Write into a non-empty folder, overwriting files, and "
        "remove files of pages the old manifest names that the "
        "hub no longer has.",
    ),
    project: str = PROJECT,
) -> None:
    """Write every page into a folder, with the manifest .hub-kb.json.

    Each page goes to its path under /fs; the manifest holds format 1, the project and each page's
    version. Every page is read and every target checked before anything is created: a non-empty
    folder (without --force), a symlink or non-directory on the way, a directory at a page's place,
    two paths differing only in case or Unicode normalisation, or more than 10,000 pages or 256 MiB
    refuse. Pages with a dot-named component are skipped with a note on stderr. Files are opened
    without following symlinks. Prints `removed <path>` for each file --force removed, then a count."""
    from hubcli.kb_export import export as run_export

    lines = _run(project, lambda kb: run_export(kb, kb.project, folder, force=force))
    sys.stdout.write("".join(line + "\n" for line in lines))


@kb_app.command("import")
def import_(
    folder: Path = typer.Option(..., "--dir", help="The folder holding the pages (and .hub-kb.json)."),
    dry_run: bool = typer.Option(
        False,
        "--dry-run",
        help="Print what would be done (would create, would update, would delete) and write nothing.",
    ),
    prune: bool = typer.Option(
        False, "--prune", help="Delete hub pages the manifest names whose files are gone from the folder."
    ),
    project: str = PROJECT,
) -> None:
    """Bring a folder's pages into the knowledge base.

    Every file but dot-named ones is a page at its path under /fs. Refused before anything is
    written: symlinks, non-UTF-8 files, pages over 1 MiB, paths the hub refuses, case or Unicode
    twins, over 10,000 pages or 256 MiB, another project's manifest or one naming a page twice or a
    non-canonical path, and lint unparsed_frontmatter, okf_version_misplaced or link_escapes_bundle on
    a page to be written (other findings are printed on stderr). A line per page: create, update,
    hub newer ...: left as is, delete (--prune), keep, conflict, delete ...: already gone, not
    attempted; nothing for identical pages; then a count. Writes are conditional (absent for a
    create, the manifest's version for an update or delete): a conflict is skipped, any other
    refusal stops the import. The manifest is rewritten so a second import changes nothing.
    Exit 0 all made; 1 any conflict (dry runs too), lint or file refusal; the hub's own code when it
    stopped the import."""
    from hubcli.kb_import import import_folder

    outcome = _run(project, lambda kb: import_folder(kb, folder, dry_run=dry_run, prune=prune))
    sys.stderr.write("".join(line + "\n" for line in outcome.stderr))
    sys.stdout.write("".join(line + "\n" for line in outcome.stdout))
    raise typer.Exit(outcome.code)
