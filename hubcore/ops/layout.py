"""What a data directory holds, as the parts declare it on their classes (`Part.files`,
`file_stores`, `key_files`, `copied_files`): the ops tools run on a directory without a hub, so
they ask the part classes, never a feature module. `parts` is the binary's list by default; a test
passes its own."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from hubcore.ops.stores import HUB_DB
from hubcore.parts.catalog import PART_TYPES
from hubcore.parts.protocol import FileStore, Part

Parts = Sequence[type[Part]]


def part_files(data_dir: Path, parts: Parts = PART_TYPES) -> list[Path]:
    """The parts' per-file SQLite stores (`Part.files`), in part order."""
    return [path for part in parts for path in part.files(data_dir)]


def store_files(root: Path, parts: Parts = PART_TYPES) -> list[Path]:
    """hub.db (when present), then every store file of the parts that is a file under `root`."""
    files = [root / HUB_DB] if (root / HUB_DB).is_file() else []
    return files + [p for p in part_files(root, parts) if p.is_file()]


def key_files(data_dir: Path, parts: Parts = PART_TYPES) -> list[Path]:
    """The secrets the parts keep as plain files (`Part.key_files`) that exist: copied verbatim,
    restored at 0600."""
    return [path for part in parts for path in part.key_files(data_dir) if path.is_file()]


def copied_files(data_dir: Path, parts: Parts = PART_TYPES) -> list[Path]:
    """What a backup copies byte for byte: the parts' `copied_files` (blobs), then their key files."""
    return [*(path for part in parts for path in part.copied_files(data_dir)), *key_files(data_dir, parts)]


def file_stores(parts: Parts = PART_TYPES) -> list[FileStore]:
    """Every per-file store directory the parts declare, in part order."""
    return [store for part in parts for store in part.file_stores]


def store_of(root: Path, path: Path, parts: Parts = PART_TYPES) -> FileStore | None:
    """The declared store `path` (a store file under `root`) belongs to."""
    for store in file_stores(parts):
        if path.parent == root / store.directory:
            return store
    return None


def spoken(words: Sequence[str]) -> str:
    """`words` as a sentence lists them: "a", "a and b", "a, b and c"."""
    return f"{', '.join(words[:-1])} and {words[-1]}" if len(words) > 1 else "".join(words)
