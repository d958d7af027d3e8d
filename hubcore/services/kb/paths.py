"""Knowledge base page paths: the brains' canonicaliser (`entries.canonical`) with `/fs/` the only
namespace, and the URL form of the REST routes.

Canonical before use (spec "Knowledge base page", Paths): `.`, `..`, empty components and a
trailing slash resolve as in a filesystem, and `..` never climbs above `/fs`. Refused as
`invalid_argument`: a `/kv` path (or any other namespace), a control character, a backslash, a
canonical path over 512 bytes. There is no move or rename.
"""

# No `from __future__ import annotations`: pydantic reads `PagePath`'s hooks.

from typing import Any

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import core_schema

from hubcore.errors import invalid
from hubcore.services import entries

ROOT = "/fs/"
# The REST routes act on a page by a final segment after its path (`POST .../pages/<path>/review`),
# so no page may end in one: its address would name the action on its parent (docs/decisions.md).
RESERVED_FINAL = frozenset({"review", "revert"})


def page_path(value: Any, *, field: str = "path") -> str:
    """A page's canonical path (never the bare `/fs/` root), or `invalid_argument` naming `field`."""
    return entries.page_path(value, field=field)


def require_writable(path: str, *, field: str = "path") -> None:
    """Refuse a page write whose final segment is one of the REST actions' (`RESERVED_FINAL`)."""
    final = path.rstrip("/").rsplit("/", 1)[-1]
    if final in RESERVED_FINAL:
        names = " or ".join(f"'{n}'" for n in sorted(RESERVED_FINAL))
        raise invalid(
            f"{field}: a page name cannot be {names} (the REST routes use them as actions); "
            f"name it {final}.md or similar",
            field=field,
        )


def directory(value: Any, *, field: str = "prefix") -> str:
    """A directory's canonical path: `/fs/` itself, or a path beneath it."""
    return entries.page_path(value, allow_root=True, field=field)


def from_url(segment: str, *, allow_root: bool = False, field: str = "path") -> str:
    """The canonical path a REST URL names: its leading slash is dropped and the `fs` namespace
    may be omitted (`notes/a.md` and `fs/notes/a.md` both name `/fs/notes/a.md`; a page at
    `/fs/fs/x.md` is `fs/fs/x.md`). A URL naming the `kv` namespace is refused like `/kv/...`."""
    if not isinstance(segment, str):
        raise invalid(f"{field} must be a string", field=field)
    bare = segment.lstrip("/")
    head = bare.split("/", 1)[0]
    full = "/" + bare if head in ("fs", "kv") else ROOT + bare
    return entries.page_path(full, allow_root=allow_root, field=field)


def under(path: str, prefix: str) -> bool:
    """Whether `path` lies beneath the canonical directory `prefix` (or is it)."""
    root = prefix.rstrip("/") + "/"
    return path == prefix.rstrip("/") or path.startswith(root)


class PagePath:
    """A typed request member holding a page path (or, with `allow_root`, a directory), checked
    and canonicalised by `page_path`; its limit is in bytes of the canonical path."""

    def __init__(self, *, allow_root: bool = False, field: str = "path") -> None:
        self.allow_root, self.field = allow_root, field

    def __call__(self, value: str) -> str:
        return entries.page_path(value, allow_root=self.allow_root, field=self.field)

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return core_schema.no_info_after_validator_function(self, core_schema.str_schema(strict=True))

    def __get_pydantic_json_schema__(
        self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        limit = entries.PATH_MAX_BYTES
        what = "a directory (/fs/ or beneath)" if self.allow_root else "/fs/<page path>"
        return {
            "type": "string",
            "minLength": 1,
            "x-max-bytes-canonical": limit,
            "pattern": entries.path_pattern(entries.PAGE_NAMESPACES, allow_root=self.allow_root),
            "description": f"{what}; canonicalised (., .., trailing slash), at most {limit} bytes once canonical",
        }
