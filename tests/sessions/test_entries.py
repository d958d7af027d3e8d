"""The entry rules shared by session brains and the knowledge base: paths, limits, `if_version`."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from hubcore.errors import HubError
from hubcore.services import entries
from hubcore.services.brains import BrainPut
from hubcore.services.requests import parse


def refused(code: str, fn: Any, *args: Any, **kwargs: Any) -> HubError:
    with pytest.raises(HubError) as caught:
        fn(*args, **kwargs)
    assert caught.value.code == code, caught.value
    return caught.value


@pytest.mark.parametrize(
    ("given", "canonical"),
    [
        ("/fs/a/b.md", "/fs/a/b.md"),
        ("/fs/a/", "/fs/a"),  # trailing slash dropped
        ("/fs//a/./b", "/fs/a/b"),  # empty and `.` components vanish
        ("/fs/a/../b", "/fs/b"),
        ("/fs/../b", "/fs/b"),  # `..` at the root stays at the root
        ("/fs/../../kv/x", "/fs/kv/x"),  # ... so it never reaches another namespace
        ("fs/a", "/fs/a"),
        ("/kv/k", "/kv/k"),
    ],
)
def test_canonical_paths(given: str, canonical: str) -> None:
    assert entries.canonical(given) == canonical


@pytest.mark.parametrize(
    "bad",
    [
        "/fs/a\x00b",
        "/fs/a\tb",
        "/fs/a\nb",
        "/fs/a\rb",
        "/fs/a\x7fb",
        "/fs/a\\b",  # control, backslash
        "/etc/passwd",
        "",
        "/",
        "fs",
        "/fs/",
        "/fs/..",
        "/kv/.",
        5,
        None,
    ],
)
def test_refused_paths_name_the_argument(bad: Any) -> None:
    err = refused("invalid_argument", entries.canonical, bad)
    assert (err.details or {}).get("field") == "path"


def test_namespace_root_only_where_a_directory_is_meant() -> None:
    assert entries.canonical("/fs/", allow_root=True) == "/fs/"
    assert entries.canonical("/kv/a/..", allow_root=True) == "/kv/"
    assert entries.is_root("/fs/") and entries.is_root("/kv/") and not entries.is_root("/fs/a")


def test_the_512_byte_limit_is_of_the_canonical_path() -> None:
    at_limit = "/fs/" + "x" * 508
    assert entries.canonical(at_limit) == at_limit
    err = refused("invalid_argument", entries.canonical, at_limit + "x")
    assert "513 bytes" in err.message
    # A long path that canonicalises to 512 bytes passes; the limit is never of the text sent.
    assert entries.canonical("/fs/" + "y/../" * 400 + "x" * 508) == at_limit
    assert entries.canonical(at_limit + "/") == at_limit


def test_multibyte_characters_count_in_bytes() -> None:
    euro = "\u20ac"  # three bytes in UTF-8
    at_limit = "/fs/" + "x" * 2 + euro * 168  # 4 + 2 + 504 = 510 bytes, 174 characters
    assert len(at_limit.encode()) == 510
    assert entries.canonical(at_limit + "xx") == at_limit + "xx"  # 512
    refused("invalid_argument", entries.canonical, at_limit + euro)  # 513
    refused("invalid_argument", entries.canonical, "/fs/" + "\U0001f600" * 128 + "x")  # 4 * 128 + 5


def test_page_paths_keep_to_fs() -> None:
    assert entries.page_path("/fs/guide/../index.md") == "/fs/index.md"
    assert entries.page_path("/fs/", allow_root=True) == "/fs/"
    err = refused("invalid_argument", entries.page_path, "/kv/x")
    assert "/fs/" in err.message and "/kv/" not in err.message
    refused("invalid_argument", entries.page_path, "/fs/a\\b")
    refused("invalid_argument", entries.page_path, "/fs/" + "x" * 509)
    assert entries.page_path("/fs/../../kv/x") == "/fs/kv/x"
    err = refused("invalid_argument", entries.page_path, "/kv/x", field="to_path")
    assert (err.details or {}).get("field") == "to_path" and err.message.startswith("to_path")


def test_content_and_page_limits_are_bytes_and_refused_before_storing() -> None:
    assert entries.encode("v" * entries.CONTENT_MAX) == b"v" * entries.CONTENT_MAX
    err = refused("payload_too_large", entries.encode, "v" * entries.CONTENT_MAX + "v")
    assert err.details == {"field": "content", "limit": entries.CONTENT_MAX}
    assert len(entries.encode("\u00e9" * (entries.PAGE_MAX // 2), limit=entries.PAGE_MAX)) == entries.PAGE_MAX
    refused("payload_too_large", entries.encode, "\u00e9" * (entries.PAGE_MAX // 2) + "x", limit=entries.PAGE_MAX)
    refused("invalid_argument", entries.encode, b"bytes")
    refused("invalid_argument", entries.encode, None)


def test_if_version_is_one_rule() -> None:
    v1, v2 = entries.version_of(b"1"), entries.version_of(b"2")
    assert v1.startswith("sha256:") and v1 != v2
    for held in (None, v1):
        entries.require_version(held, None)  # no condition: the last writer wins
    entries.require_version(None, entries.ABSENT)
    entries.require_version(v1, v1)
    err = refused("conflict", entries.require_version, v1, entries.ABSENT)
    assert err.message.endswith(f"current_version={v1}")
    err = refused("conflict", entries.require_version, v1, v2)
    assert err.message.endswith(f"current_version={v1}")
    err = refused("conflict", entries.require_version, None, v1)
    assert err.message.endswith("current_version=absent")


def write_with(if_version: Any) -> BrainPut:
    """A brain write carrying `if_version`, parsed as every surface parses it (`fields.IfVersion`)."""
    return parse(BrainPut, {"path": "/kv/a", "content": "x", "store": "session", "if_version": if_version})


@pytest.mark.parametrize("bad", ["", "sha1:00", "ABSENT", 3, ["absent"], "sha256:ab", "sha256:xyz", "absent "])
def test_if_version_form_is_checked_before_anything(bad: Any) -> None:
    err = refused("invalid_argument", write_with, bad)
    assert (err.details or {}).get("field") == "if_version"


def test_if_version_forms_accepted() -> None:
    assert write_with(None).if_version is None
    assert write_with("absent").if_version == "absent"
    held = "sha256:" + "ab" * 32
    assert write_with(held).if_version == held


def test_file_growth_warns_then_refuses() -> None:
    assert entries.file_growth("brain", 0, 10) == []
    warned = entries.file_growth("brain", entries.FILE_WARN, 1)
    assert len(warned) == 1 and "warning" in warned[0]
    refused("payload_too_large", entries.file_growth, "brain", entries.FILE_MAX - 1, 1)


@pytest.mark.parametrize("size", [0, 1, 2046, 2047, 2048, 4094, 4095, 5000, 65535, 65536, 70000])
def test_a_version_is_the_sha256_of_the_whole_value_whatever_its_size(size: int) -> None:
    # Values under HASH_WHOLE are hashed in pieces (the GIL is kept): the pieces' edges must not show.
    value = bytes(i % 251 for i in range(size))
    assert entries.version_of(value) == "sha256:" + hashlib.sha256(value).hexdigest()
