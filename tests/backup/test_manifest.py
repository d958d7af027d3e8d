"""The shared manifest: written, read back, and every kind of mismatch named by file."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from hubcore.ops.manifest import (
    MANIFEST_NAME,
    ManifestError,
    ManifestFile,
    format_created_at,
    read_manifest,
    verify_manifest,
    write_manifest,
)

WHEN = datetime(2026, 11, 27, 9, 20, 1, 123456, tzinfo=UTC)


def _tree(root: Path) -> None:
    (root / "brains").mkdir(parents=True)
    (root / "hub.db").write_bytes(b"hub" * 100)
    (root / "brains" / "b1.db").write_bytes(b"brain")


def test_written_manifest_reads_back_and_verifies(tmp_path: Path) -> None:
    _tree(tmp_path)
    written = write_manifest(tmp_path, ["hub.db", "brains/b1.db"], 7, WHEN)
    data = json.loads((tmp_path / MANIFEST_NAME).read_text())
    assert data == {
        "format": 1,
        "schema_version": 7,
        "created_at": "2026-11-27T09:20:01.123Z",
        "files": [
            {"path": "brains/b1.db", "size": 5, "sha256": hashlib.sha256(b"brain").hexdigest()},
            {"path": "hub.db", "size": 300, "sha256": hashlib.sha256(b"hub" * 100).hexdigest()},
        ],
        "bytes": 305,
    }
    assert read_manifest(tmp_path) == written
    assert verify_manifest(tmp_path) == []


def test_given_entries_are_taken_as_given(tmp_path: Path) -> None:
    entry = ManifestFile("x", 3, "0" * 64)
    manifest = write_manifest(tmp_path, [entry], 1, "2026-01-01T00:00:00.000Z")
    assert manifest.files == (entry,) and manifest.bytes == 3
    assert [(p.path, p.kind) for p in verify_manifest(tmp_path)] == [("x", "missing")]


def test_each_mismatch_is_named(tmp_path: Path) -> None:
    _tree(tmp_path)
    (tmp_path / "gone").write_bytes(b"g")
    (tmp_path / "same-size").write_bytes(b"abc")
    write_manifest(tmp_path, ["hub.db", "brains/b1.db", "gone", "same-size"], 7, WHEN)
    (tmp_path / "hub.db").write_bytes(b"short")
    (tmp_path / "gone").unlink()
    (tmp_path / "same-size").write_bytes(b"abd")
    (tmp_path / "brains" / "stray.db").write_bytes(b"?")
    problems = {p.path: p for p in verify_manifest(tmp_path)}
    assert {k: p.kind for k, p in problems.items()} == {
        "hub.db": "size",
        "gone": "missing",
        "same-size": "digest",
        "brains/stray.db": "extra",
    }
    assert str(problems["hub.db"]) == "hub.db: size differs: manifest 300, on disk 5"


def test_a_symlink_is_never_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.write_bytes(b"brain")
    root = tmp_path / "root"
    _tree(root)
    write_manifest(root, ["brains/b1.db"], 1, WHEN)
    (root / "hub.db").unlink()
    (root / "brains" / "b1.db").unlink()
    (root / "brains" / "b1.db").symlink_to(outside)
    (root / "linked").symlink_to(tmp_path, target_is_directory=True)
    kinds = {(p.path, p.kind) for p in verify_manifest(root)}
    assert kinds == {("brains/b1.db", "not_a_file"), ("linked", "extra")}


def test_missing_manifest_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match="no manifest"):
        read_manifest(tmp_path)
    with pytest.raises(ManifestError, match="no manifest"):
        verify_manifest(tmp_path)


GOOD = {"format": 1, "schema_version": 1, "created_at": "t", "files": [], "bytes": 0}
SHA = "a" * 64


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (b"{not json", "not JSON"),
        (b"\xff\xfe", "not JSON"),
        (json.dumps([1]).encode(), "not an object"),
        (json.dumps({**GOOD, "format": 2}).encode(), "format"),
        (json.dumps({**GOOD, "schema_version": "7"}).encode(), "schema_version"),
        (json.dumps({**GOOD, "schema_version": True}).encode(), "schema_version"),
        (json.dumps({**GOOD, "bytes": 5}).encode(), "sum"),
        (json.dumps({**GOOD, "files": {}}).encode(), "files"),
        (json.dumps({**GOOD, "created_at": 5}).encode(), "created_at"),
        (json.dumps({**GOOD, "files": [{"path": "../x", "size": 0, "sha256": SHA}]}).encode(), "x"),
        (json.dumps({**GOOD, "files": [{"path": "/etc", "size": 0, "sha256": SHA}]}).encode(), "etc"),
        (json.dumps({**GOOD, "files": [{"path": "a\\b", "size": 0, "sha256": SHA}]}).encode(), "a"),
        (json.dumps({**GOOD, "files": [{"path": "a//b", "size": 0, "sha256": SHA}]}).encode(), "a"),
        (json.dumps({**GOOD, "files": [{"path": "a", "size": -1, "sha256": SHA}]}).encode(), "size"),
        (json.dumps({**GOOD, "files": [{"path": "a", "size": 0, "sha256": "AB"}]}).encode(), "sha256"),
        (
            json.dumps({**GOOD, "files": [{"path": "a", "size": 0, "sha256": SHA}] * 2}).encode(),
            "twice",
        ),
    ],
)
def test_garbled_manifest_is_refused(tmp_path: Path, body: bytes, words: str) -> None:
    (tmp_path / MANIFEST_NAME).write_bytes(body)
    with pytest.raises(ManifestError, match="garbled") as caught:
        read_manifest(tmp_path)
    assert words in str(caught.value)


def test_written_paths_must_stay_inside(tmp_path: Path) -> None:
    with pytest.raises(ManifestError):
        write_manifest(tmp_path, [ManifestFile("../x", 0, SHA)], 1, WHEN)
    assert not (tmp_path / MANIFEST_NAME).exists()


def test_created_at_needs_a_zone() -> None:
    with pytest.raises(ValueError):
        format_created_at(datetime(2026, 1, 1))
    assert format_created_at(WHEN) == "2026-11-27T09:20:01.123Z"
