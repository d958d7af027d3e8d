"""The rules every stored entry obeys, in a session brain and in a project's knowledge base alike.

One place for: what a path may be and its canonical form, the size limits of an entry and of the
file holding a store, the version an entry is known by, and the `if_version` condition of a write.
The stores (`hubcore.store.brain`, and the knowledge base when it comes) only read and write rows;
the services call these rules before a write and, for the condition, inside the writer's command,
so compare and write stay under the writer lock.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from hubcore.errors import HubError, conflict, invalid
from hubcore.services import validate

BRAIN_NAMESPACES = ("/fs/", "/kv/")
# A knowledge base page lives under /fs/ only (spec: Knowledge base page, Paths).
PAGE_NAMESPACES = ("/fs/",)
PATH_MAX_BYTES = 512  # of the canonical path, UTF-8
CONTENT_MAX = 4 * 1024 * 1024  # one brain entry
PAGE_MAX = 1024 * 1024  # one knowledge base page
HASH_PIECE = 2047  # hashlib (OpenSSL) hashes an update of 2,048 bytes or more with the GIL let go
HASH_WHOLE = 64 * 1024  # ... which a value this large is worth (see `version_of`)
FILE_WARN = 256 * 1024 * 1024  # a store's file: a write past this carries a warning
FILE_MAX = 1024 * 1024 * 1024  # ... and one reaching this is refused
LISTING_MAX = 500  # entries in one directory level
ABSENT = "absent"  # the `if_version` that creates only
VERSION_PREFIX = "sha256:"
IF_VERSION_RE = re.compile(f"^({ABSENT}|{VERSION_PREFIX}[0-9a-f]{{64}})$")


def canonical(
    path: Any, namespaces: tuple[str, ...] = BRAIN_NAMESPACES, *, allow_root: bool = False, field: str = "path"
) -> str:
    """The canonical path, or `invalid_argument` naming `field`.

    As in a filesystem, `.` and empty components vanish and `..` climbs, but never above the
    namespace root (`/fs/..` is `/fs/`); a trailing slash is dropped. Refused: a control
    character (C0 with NUL, line breaks and tab; DEL; C1 with NEL), a line or paragraph separator
    (U+2028, U+2029: no address may hold what breaks a line), a backslash, a namespace outside `namespaces`, a
    canonical path over 512 bytes. With `allow_root`, a bare namespace (`/fs/`) is accepted, as
    a listing's directory; otherwise it names no entry and is refused.
    """
    if not isinstance(path, str) or not path:
        raise invalid(f"{field} must be a non-empty string", field=field)
    if not validate.is_label(path) or "\\" in path:
        raise invalid(f"{field} must not hold a control character or a backslash", field=field)
    parts = [p for p in path.split("/") if p not in ("", ".")]
    roots = [n.strip("/") for n in namespaces]
    if not parts or parts[0] not in roots:
        where = " or ".join(namespaces)
        raise invalid(f"{field} must start with {where}", field=field)
    namespace, stack = parts[0], list[str]()
    for part in parts[1:]:
        if part != "..":
            stack.append(part)
        elif stack:  # `..` at the root stays at the root
            stack.pop()
    if not stack and not allow_root:
        raise invalid(f"{field} names the /{namespace}/ namespace itself, not an entry", field=field)
    result = f"/{namespace}/" + "/".join(stack)
    size = len(result.encode("utf-8"))
    if size > PATH_MAX_BYTES:
        raise invalid(f"{field} is {size} bytes once canonical; the limit is {PATH_MAX_BYTES}", field=field)
    return result


# What `canonical` takes, as a pattern: leading empty or `.` components, the namespace, then
# components without a control character, separator or backslash, one of them naming something
# (not empty, `.` or `..`) unless the root is allowed. (`..` climbing back to the root, and the
# byte limit, are beyond a pattern: the schema says `x-max-bytes-canonical`.)
_COMPONENT = "[^\\x00-\\x1f\\x7f-\\x9f\\u2028\\u2029\\\\/]"
_NAMING = _COMPONENT.replace("/]", "/.]")
_NAMED = f"(?:{_NAMING}{_COMPONENT}*|\\.{_NAMING}{_COMPONENT}*|\\.\\.{_COMPONENT}+)"


def path_pattern(namespaces: tuple[str, ...], *, allow_root: bool) -> str:
    roots = "|".join(n.strip("/") for n in namespaces)
    rest = f"(?:/{_COMPONENT}*)*" if allow_root else f"(?:/{_COMPONENT}*)*/{_NAMED}(?:/{_COMPONENT}*)*"
    return f"^(?:\\.?/)*(?:{roots}){rest}$"


def page_path(path: Any, *, allow_root: bool = False, field: str = "path") -> str:
    """A knowledge base page's canonical path: the brain's rules, with `/fs/` the only namespace."""
    return canonical(path, PAGE_NAMESPACES, allow_root=allow_root, field=field)


def is_root(path: str) -> bool:
    """True for a canonical namespace root (`/fs/`, `/kv/`): a directory, never an entry."""
    return path in BRAIN_NAMESPACES


def encode(content: Any, *, limit: int = CONTENT_MAX, field: str = "content") -> bytes:
    """The entry's bytes (UTF-8 text), or `payload_too_large` past `limit`, before anything is stored."""
    if not isinstance(content, str):
        raise invalid(f"{field} must be a string", field=field)
    data = content.encode("utf-8")
    if len(data) > limit:
        raise HubError(
            "payload_too_large",
            f"{field} is {len(data)} bytes; the limit is {limit}",
            details={"field": field, "limit": limit},
        )
    return data


def version_of(data: bytes) -> str:
    """The version an entry is known by: its content hash. A value under `HASH_WHOLE` bytes is
    fed to the hash in pieces under 2,048 bytes, the size from which hashlib lets go of the GIL:
    on the event loop, while a writer thread waits for the GIL, getting it back costs more than
    hashing such a value (docs/benchmarks.md, tenth session). A larger value is hashed whole, in
    parallel with the other threads."""
    if len(data) < HASH_PIECE or len(data) >= HASH_WHOLE:
        return VERSION_PREFIX + hashlib.sha256(data).hexdigest()
    digest, view = hashlib.sha256(), memoryview(data)
    for start in range(0, len(data), HASH_PIECE):
        digest.update(view[start : start + HASH_PIECE])
    return VERSION_PREFIX + digest.hexdigest()


def require_version(held: str | None, wanted: str | None) -> None:
    """The `if_version` rule, the one place it is decided: `held` is the stored version (None
    when nothing is stored), `wanted` a parsed condition. No condition always holds; `absent`
    holds only when nothing is stored; a version holds only when it is the stored one. A
    mismatch is a conflict ending `current_version=...`."""
    if wanted is None or wanted == held or (wanted == ABSENT and held is None):
        return
    raise conflict(f"if_version does not match; current_version={held or ABSENT}", current_version=held or ABSENT)


def file_growth(what: str, size: int, incoming: int) -> list[str]:
    """Warnings for a write of `incoming` bytes to a store file of `size` bytes; refused
    (`payload_too_large`) when the file would reach its limit."""
    if size + incoming >= FILE_MAX:
        raise HubError(
            "payload_too_large",
            f"{what} is at its {FILE_MAX}-byte limit; writes are refused",
            details={"limit": FILE_MAX, "size_bytes": size},
        )
    if size + incoming > FILE_WARN:
        return [f"{what} is {size + incoming} bytes, past the {FILE_WARN}-byte warning mark"]
    return []
