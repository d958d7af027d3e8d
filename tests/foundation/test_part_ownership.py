"""Each part owns its data, the ops tools included (issue 28 part 5): `hub-cli check`, `doctor`,
`backup` and `restore` and the search `type` list know a feature only through what its part class
declares. A part none of them has heard of (`NotesPart`, added to the part list here) is backed up,
checked, read by doctor, swept after a restore and searchable by its family, with no change to an
ops or search module; and those modules import no feature module."""

from __future__ import annotations

import ast
import json
import os
import re
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest

from hubcore.ops.backup import offline_backup
from hubcore.ops.check import check
from hubcore.ops.doctor import doctor
from hubcore.ops.findings import Finding
from hubcore.ops.restore import RESTORED_MARK, tidy_restored
from hubcore.parts.catalog import PART_TYPES
from hubcore.parts.protocol import FileStore, Part
from tests.ops.support import make_hub_dir, problem_lines, readings

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.anyio

# The modules that are one feature's: its part module, its services, its stores.
FEATURE_MODULES = (
    "hubcore.parts.artifacts",
    "hubcore.parts.kb",
    "hubcore.parts.sessions",
    "hubcore.parts.feeds",
    "hubcore.parts.push",
    "hubcore.parts.enrolment",
    "hubcore.parts.projects",
    "hubcore.parts.integrity",
    "hubcore.services.artifacts",
    "hubcore.services.kb",
    "hubcore.services.brains",
    "hubcore.services.brain_search",
    "hubcore.services.brain_files",
    "hubcore.services.callstage",
    "hubcore.services.sessions",
    "hubcore.services.feed_search",
    "hubcore.services.push",
    "hubcore.services.enrolment",
    "hubcore.store.brain",
    "hubcore.store.brain_record",
    "hubcore.store.kb",
    "hubcore.store.blobs",
)


class NotesPart(Part):
    """A feature the ops and search modules were never told of: per-project note files, scraps
    kept beside them as plain files (`scraps/wanted.txt` is the one its rows reference), and a
    search family."""

    name = "notes"
    file_stores = (FileStore("notes", 3, "note"),)
    search_family_names = ("note",)
    restore_sweeps = "note scraps"

    @classmethod
    def copied_files(cls, data_dir: Path) -> Iterable[Path]:
        return sorted((data_dir / "scraps").glob("*.txt"))

    @classmethod
    def check_references(cls, conn: sqlite3.Connection, data_dir: Path) -> Sequence[Finding]:
        assert conn.execute("SELECT COUNT(*) FROM projects").fetchone()[0] >= 1  # it reads hub.db
        wanted = data_dir / "scraps" / "wanted.txt"
        return [] if wanted.is_file() else [Finding("scraps/wanted.txt", "missing (a note names it)")]

    @classmethod
    def doctor_references(cls, conn: sqlite3.Connection, data_dir: Path) -> Sequence[Finding]:
        return [Finding("scraps", f"{len(list(cls.copied_files(data_dir)))} kept", problem=False)]

    @classmethod
    def sweep_restored(cls, conn: sqlite3.Connection, data_dir: Path) -> int:
        stray = [p for p in cls.copied_files(data_dir) if p.name != "wanted.txt"]
        for path in stray:
            path.unlink()
        return len(stray)


PARTS = (*PART_TYPES, NotesPart)


def note_file(root: Path, name: str, version: int) -> Path:
    path = root / "notes" / f"{name}.db"
    path.parent.mkdir(exist_ok=True)
    conn = sqlite3.connect(path)
    try:
        conn.execute("CREATE TABLE notes (body TEXT)")
        conn.execute(f"PRAGMA user_version = {version}")
        conn.commit()
    finally:
        conn.close()
    return path


def scrap(root: Path, name: str) -> Path:
    path = root / "scraps" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(name, encoding="utf-8")
    return path


async def test_a_new_parts_files_are_backed_up_checked_read_by_doctor_and_swept(tmp_path: Path) -> None:
    made = await make_hub_dir(tmp_path / "data")
    root = made.root
    note_file(root, "p1", 3)
    scrap(root, "stray.txt")

    # check: the part's store file is integrity-checked, its references checked through hub.db.
    without = await check(root, made.settings)
    assert not problem_lines(without)
    counted = int(readings(without)["stores"].split()[0])
    found = await check(root, made.settings, parts=PARTS)
    assert problem_lines(found) == ["scraps/wanted.txt: missing (a note names it)"]
    scrap(root, "wanted.txt")
    found = await check(root, made.settings, parts=PARTS)
    assert not problem_lines(found)
    assert readings(found)["stores"] == f"{counted + 1} SQLite files passed the integrity check"
    (root / "notes" / "p1.db").write_bytes(b"not a database at all, and long enough to be read" * 40)
    damaged = problem_lines(await check(root, made.settings, parts=PARTS))
    assert damaged and all(line.startswith("notes/p1.db: integrity check failed") for line in damaged)
    (root / "notes" / "p1.db").unlink()
    note_file(root, "p1", 3)

    # doctor: the part's files counted under its noun, their schema against its declared version.
    said = readings(doctor(root, min_free_bytes=0, now=0, parts=PARTS))
    assert said["store files"] == "1 brain files, 1 knowledge base files, 1 note files"
    assert said["scraps"] == "2 kept"
    assert said["write-ahead logs"].endswith("bytes in 2 brain, knowledge base and note logs")
    note_file(root, "p2", 4)
    assert "notes/p2.db: schema v4 is newer than this binary supports (v3)" in problem_lines(
        doctor(root, min_free_bytes=0, now=0, parts=PARTS)
    )
    assert "notes/p2.db" not in str(doctor(root, min_free_bytes=0, now=0))  # not a part of this binary
    (root / "notes" / "p2.db").unlink()

    # backup: its store file through SQLite, its plain files byte for byte; without it, neither.
    moment = datetime(2026, 11, 28, tzinfo=UTC)
    listed = {f.path for f in offline_backup(root, tmp_path / "with", moment=moment, parts=PARTS).manifest.files}
    assert {"notes/p1.db", "scraps/stray.txt", "scraps/wanted.txt"} <= listed
    plain = {f.path for f in offline_backup(root, tmp_path / "without", moment=moment).manifest.files}
    assert not any(p.startswith(("notes/", "scraps/")) for p in plain)
    assert listed - plain == {"notes/p1.db", "scraps/stray.txt", "scraps/wanted.txt"}

    # restore's first start: the part sweeps what hub.db does not reference, and doctor says so.
    (root / RESTORED_MARK).write_text("{}\n", encoding="utf-8")
    assert readings(doctor(root, min_free_bytes=0, now=0, parts=PARTS))["restored"] == (
        "a restore put this directory in place; the next start removes the brain files, blobs and "
        "note scraps hub.db does not reference"
    )
    assert tidy_restored(root, PARTS) == {"brain files": 0, "blobs": 0, "note scraps": 1}
    assert sorted(p.name for p in (root / "scraps").iterdir()) == ["wanted.txt"]
    assert not (root / RESTORED_MARK).exists()


SCHEMAS = """
import json
import hubcore.parts.catalog as catalog
from hubcore.parts.protocol import Part

class NotesPart(Part):  # the test module's, as far as search sees it (that module imports search)
    name = "notes"
    search_family_names = ("note",)

catalog.PART_TYPES = (*catalog.PART_TYPES, NotesPart)  # before the adapters are imported
import orjson
from hubhttp.app import create_app
from hubhttp.openapi import document
from hubmcp.tools.search import TOOLS
doc = orjson.loads(document(create_app()))
search = doc["paths"]["/api/v1/search"]["get"]
param = next(p["schema"] for p in search["parameters"] if p["name"] == "type")
groups = search["responses"]["200"]["content"]["application/json"]["schema"]["properties"]["groups"]
tool = TOOLS[0]
print(json.dumps({
    "rest": param["enum"],
    "rest_group": groups["items"]["properties"]["type"]["enum"],
    "mcp": tool.input_schema["properties"]["type"],
}))
"""


def schemas(script: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    loaded: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return loaded


def test_a_new_parts_family_is_in_the_rest_and_mcp_schemas() -> None:
    found = schemas(SCHEMAS)
    families = ["feed", "brain", "kb", "artifact", "note"]
    assert found["rest"] == families and found["rest_group"] == families
    mcp = found["mcp"]
    assert isinstance(mcp, dict)
    assert mcp["enum"] == families and mcp["description"] == "only this family: feed, brain, kb, artifact or note"


def test_the_search_type_list_is_the_parts_declared_families() -> None:
    from hubcore.services.search.models import FAMILIES

    assert FAMILIES == ("feed", "brain", "kb", "artifact")
    assert tuple(name for part in PART_TYPES for name in part.search_family_names) == FAMILIES


async def test_each_parts_declared_families_are_the_ones_it_feeds(tmp_path: Path) -> None:
    from hubcore.hub import Hub
    from tests.harness import test_settings as settings_for

    async with Hub.open(settings_for(tmp_path / "data")) as hub:
        for part in hub.parts:
            assert tuple(f.name for f in part.search_families()) == type(part).search_family_names, part.name


def imported(source: str) -> set[str]:
    """Every module `source` imports at run time, a function-level import included (those under
    `if TYPE_CHECKING:` never run)."""
    names: set[str] = set()
    tree = ast.parse(source)
    skip = {
        id(child)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for stmt in node.body
        for child in ast.walk(stmt)
    }
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def ownerless_modules() -> list[Path]:
    return [*sorted((ROOT / "hubcore" / "ops").glob("*.py")), *sorted((ROOT / "hubcore/services/search").glob("*.py"))]


@pytest.mark.parametrize("path", ownerless_modules(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_the_ops_and_search_modules_import_no_feature_module(path: Path) -> None:
    named = sorted(
        name
        for name in imported(path.read_text(encoding="utf-8"))
        for feature in FEATURE_MODULES
        if name == feature or name.startswith(feature + ".")
    )
    assert named == [], f"{path.relative_to(ROOT)} imports {named}: ask the part classes (hubcore.parts.catalog)"


def test_the_feature_list_names_real_modules() -> None:
    """The test above cannot pass vacuously: every name it forbids is a module or package of the tree."""
    for name in FEATURE_MODULES:
        as_path = ROOT / Path(*name.split("."))
        assert as_path.with_suffix(".py").is_file() or (as_path / "__init__.py").is_file(), name
    sample = textwrap.dedent("""
        from hubcore.services.kb import signals
        if TYPE_CHECKING:
            from hubcore.store.blobs import BlobGate
        def late():
            import hubcore.store.brain
    """)
    names = imported(sample)
    assert "hubcore.services.kb.signals" in names and "hubcore.store.brain" in names
    assert "hubcore.store.blobs" not in names


def test_the_agent_guide_names_every_family_search_accepts() -> None:
    """The guide is written by hand: a part that adds a family says so there (its `type` line
    names exactly the families the schemas list)."""
    from hubcore.services.search.models import FAMILIES

    guide = (ROOT / "hubmcp/skill/references/search.md").read_text(encoding="utf-8")
    line = next(row for row in guide.splitlines() if row.startswith("- `type` keeps one family:"))
    named = re.findall(r"`([a-z]+)`", line.split(":", 1)[1].split(".", 1)[0])
    assert sorted(named) == sorted(FAMILIES)
