"""A knowledge base page's frontmatter: the spec's own YAML subset, read by hand (spec "Knowledge
base page").

The block opens only when line one is exactly `---` and closes at the next line that is exactly
`---` (a trailing `\\r` is a line ending, not part of the line). Inside: top-level `key: value`
lines; a `|` or `>` block scalar reads as one folded line; a list is a flow list `[a, "b c"]` or one
`- item` per line (at the key's column or indented); `verified` and `sources` are lists of
`key: value` mappings. Unknown keys are kept in the bytes and ignored, whatever their value holds.

States: `absent` (no block: the page is stored as sent), `parsed`, `unparsed` (the block cannot be
read: it never closes, a line is outside the subset, a known key has the wrong shape, a key is given
twice, or a line holds a control character). Fields read as None when the block is not parsed.

A control character (C0 other than the line ending, DEL, C1) on a line of a closed block is refused
at write time: `require_writable` raises `invalid_argument` naming the line (spec "Errors": a
frontmatter value with a control character is 400). A page already stored with one reads as unparsed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from hubcore.errors import HubError, invalid

State = Literal["absent", "parsed", "unparsed"]
FENCE = "---"
SCALAR_KEYS = ("type", "title", "description", "status", "stale_after", "okf_version")
_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_.-]*):(?:[ ](.*))?$")
_BLOCK_SCALAR = re.compile(r"[|>](?:[+-]?[1-9]?|[1-9][+-])\s*(?:#.*)?$")
_NULLS = ("", "~", "null", "Null", "NULL")
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")  # exactly Unicode's Cc category
_ITEM_KEYS = {"verified": ("by", "at"), "sources": ("title", "resource")}


class Unparsed(Exception):
    """The block is outside the subset; `line` is the page's line number (1-based)."""

    def __init__(self, line: int, reason: str) -> None:
        super().__init__(reason)
        self.line = line
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Verified:
    by: str
    at: str


@dataclass(frozen=True, slots=True)
class Source:
    title: str
    resource: str


@dataclass(frozen=True, slots=True)
class Frontmatter:
    """What a page's frontmatter says. Lines are the page's, 1-based."""

    state: State
    type: str | None = None
    title: str | None = None
    description: str | None = None
    status: str | None = None
    stale_after: str | None = None
    okf_version: str | None = None
    tags: tuple[str, ...] | None = None
    verified: tuple[Verified, ...] = ()
    sources: tuple[Source, ...] = ()
    keys: tuple[str, ...] = ()  # every top-level key, in order (unknown ones too)
    key_lines: tuple[tuple[str, int], ...] = ()  # (key, line of the key)
    error: str | None = None  # why the block is unparsed
    error_line: int | None = None
    control_line: int | None = None  # a line of a closed block holding a control character
    body_offset: int = 0  # where the markdown after the block starts (characters)
    body_line: int = 1  # ... and its line number

    def line_of(self, key: str) -> int | None:
        return next((line for k, line in self.key_lines if k == key), None)


# --- the block's lines -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Block:
    """The lines of a page split at the block: `lines` keep their endings; the block's own lines
    are `lines[1:close]` and the closing fence is `lines[close]` (None: never closes)."""

    lines: tuple[str, ...]
    close: int | None

    def text(self, index: int) -> str:
        return self.lines[index].rstrip("\n").removesuffix("\r")

    @property
    def inner(self) -> tuple[str, ...]:
        end = self.close if self.close is not None else len(self.lines)
        return tuple(self.text(i) for i in range(1, end))

    @property
    def newline(self) -> str:
        return "\r\n" if self.lines[0].endswith("\r\n") else "\n"


def split_lines(content: str) -> list[str]:
    """Lines with their `\\n` endings; only `\\n` ends a line (never `\\v`, `\\f`, U+2028 ...)."""
    parts = content.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def block_of(content: str) -> Block | None:
    """The block, or None when line one is not exactly `---`."""
    lines = split_lines(content)
    if not lines or lines[0].rstrip("\n").removesuffix("\r") != FENCE:
        return None
    block = Block(tuple(lines), None)
    close = next((i for i in range(1, len(lines)) if block.text(i) == FENCE), None)
    return Block(block.lines, close)


def has_control(text: str) -> bool:
    """Whether `text` holds a control character (Unicode category Cc: C0, DEL, C1)."""
    return _CONTROL.search(text) is not None


def control_line(block: Block) -> int | None:
    """The page line (1-based) of the first block line holding a control character."""
    return next((i + 2 for i, text in enumerate(block.inner) if has_control(text)), None)


# --- reading -----------------------------------------------------------------------------------


def parse(content: str) -> Frontmatter:
    """Read a page's frontmatter; never raises."""
    block = block_of(content)
    if block is None:
        return Frontmatter("absent")
    if block.close is None:
        # An unclosed block: the markdown is the whole page (its links still count).
        return Frontmatter("unparsed", error="the frontmatter block never closes with a --- line", error_line=1)
    offset = sum(len(line) for line in block.lines[: block.close + 1])
    body_line = block.close + 2
    bad = control_line(block)
    if bad is not None:
        return Frontmatter(
            "unparsed",
            error="a frontmatter line holds a control character",
            error_line=bad,
            control_line=bad,
            body_offset=offset,
            body_line=body_line,
        )
    try:
        return _fields(entries_of(block.inner), offset, body_line)
    except Unparsed as exc:
        return Frontmatter("unparsed", error=exc.reason, error_line=exc.line, body_offset=offset, body_line=body_line)


def require_writable(content: str) -> Frontmatter:
    """`parse`, refusing (`invalid_argument`, nothing stored) a closed block with a control character."""
    found = parse(content)
    if found.control_line is not None:
        raise invalid(
            f"frontmatter line {found.control_line} holds a control character", field="content", line=found.control_line
        )
    return found


@dataclass(frozen=True, slots=True)
class Entry:
    """A top-level key: its lines `start` (the key's) to `end` (exclusive, trailing blank and
    comment lines left out), as indexes into the block's inner lines."""

    key: str
    rest: str
    start: int
    end: int
    body: tuple[str, ...]  # the lines after the key's own, up to `end`


def _blank(text: str) -> bool:
    stripped = text.strip()
    return not stripped or stripped.startswith("#")


def entries_of(inner: tuple[str, ...]) -> list[Entry]:
    """The top-level keys of the block's inner lines, or `Unparsed`."""
    entries: list[Entry] = []
    seen: set[str] = set()
    i = 0
    while i < len(inner):
        if _blank(inner[i]):
            i += 1
            continue
        match = _KEY.match(inner[i])
        if match is None:
            raise Unparsed(i + 2, f"line {i + 2} is not a top-level 'key: value' line")
        key, rest = match.group(1), (match.group(2) or "").strip()
        j = i + 1
        while j < len(inner) and _continues(inner[j], rest):
            j += 1
        end = j
        while end > i + 1 and _blank(inner[end - 1]):
            end -= 1
        if key in seen:
            raise Unparsed(i + 2, f"key {key!r} is given twice")
        seen.add(key)
        entries.append(Entry(key, rest, i, end, inner[i + 1 : end]))
        i = j
    return entries


def _continues(text: str, rest: str) -> bool:
    """Whether a line belongs to the key above it: blank, a comment, indented, or (under a key
    with no inline value) a `-` item at the key's own column."""
    if _blank(text) or text.startswith(" "):
        return True
    return not rest and (text == "-" or text.startswith("- "))


def _fields(entries: list[Entry], offset: int, body_line: int) -> Frontmatter:
    values: dict[str, object] = {}
    for entry in entries:
        if entry.key in SCALAR_KEYS:
            values[entry.key] = scalar_value(entry)
        elif entry.key == "tags":
            values["tags"] = tags_value(entry)
        elif entry.key in _ITEM_KEYS:
            values[entry.key] = mapping_items(entry, _ITEM_KEYS[entry.key])
    verified = tuple(Verified(m["by"], m["at"]) for m in _maps(values.get("verified")))
    sources = tuple(Source(m["title"], m["resource"]) for m in _maps(values.get("sources")))
    tags = values.get("tags")
    text = {k: _str(values.get(k)) for k in SCALAR_KEYS}
    return Frontmatter(
        "parsed",
        type=text["type"],
        title=text["title"],
        description=text["description"],
        status=text["status"],
        stale_after=text["stale_after"],
        okf_version=text["okf_version"],
        tags=tuple(tags) if isinstance(tags, list) else None,
        verified=verified,
        sources=sources,
        keys=tuple(e.key for e in entries),
        key_lines=tuple((e.key, e.start + 2) for e in entries),
        body_offset=offset,
        body_line=body_line,
    )


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _maps(value: object) -> list[dict[str, str]]:
    return value if isinstance(value, list) else []


# --- values ------------------------------------------------------------------------------------


def scalar_value(entry: Entry) -> str | None:
    """A string-valued key: plain, quoted, or a folded block scalar; a list is the wrong shape."""
    line = entry.start + 2
    rest = entry.rest
    if _BLOCK_SCALAR.match(rest):
        return fold(entry.body)
    if rest.startswith(("[", "{")) or (not rest and any(not _blank(t) for t in entry.body)):
        raise Unparsed(line, f"{entry.key} must be a string, not a list or a mapping")
    if rest.startswith(('"', "'")):
        _no_body(entry)
        return quoted(rest, line)
    value = plain(rest)
    if entry.body:  # a plain scalar continued on indented lines folds into one line
        value = fold((value, *entry.body))
    return None if value in _NULLS else value


def tags_value(entry: Entry) -> list[str] | None:
    """Tags: a flow list, `- item` lines, or a lone string read as one tag."""
    line = entry.start + 2
    if entry.rest.startswith("["):
        _no_body(entry)
        return flow_list(entry.rest, line)
    if entry.rest:
        value = scalar_value(entry)
        return None if value is None else [value]
    items = _items(entry)
    if not items:
        return None
    result: list[str] = []
    for number, first, more in items:
        if more or _KEY.match(first):
            raise Unparsed(number, "a tag must be a string, not a mapping")
        result.append(item_scalar(first, number))
    return result


def mapping_items(entry: Entry, required: tuple[str, ...]) -> list[dict[str, str]]:
    """`verified` or `sources`: `- key: value` items each holding every required key."""
    if entry.rest in ("[]", *_NULLS[1:]):
        _no_body(entry)
        return []
    if entry.rest:
        raise Unparsed(entry.start + 2, f"{entry.key} must be a list of '- key: value' entries")
    result: list[dict[str, str]] = []
    for number, first, more in _items(entry):
        item = _mapping(number, first, more)
        missing = [k for k in required if not item.get(k)]
        if missing:
            raise Unparsed(number, f"a {entry.key} entry lacks {', '.join(missing)}")
        result.append(item)
    return result


def _no_body(entry: Entry) -> None:
    if any(not _blank(t) for t in entry.body):
        raise Unparsed(entry.start + 3, f"{entry.key}'s value continues on a line the subset does not read")


def _items(entry: Entry) -> list[tuple[int, str, list[str]]]:
    """The `- item` lines under a key as (page line, the item's text after the dash, its
    continuation lines); a line that is neither an item nor inside one is Unparsed."""
    first_line = entry.start + 3
    content = [(first_line + i, t) for i, t in enumerate(entry.body) if not _blank(t)]
    indent = _indent(content[0][1]) if content else 0
    items: list[tuple[int, str, list[str]]] = []
    for number, text in content:
        stripped = text.strip()
        if _indent(text) == indent and (stripped == "-" or stripped.startswith("- ")):
            items.append((number, stripped[1:].strip(), []))
        elif _indent(text) > indent and items:
            items[-1][2].append(stripped)
        else:
            raise Unparsed(number, f"{entry.key} must be a list of '- item' lines")
    return items


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip(" "))


def _mapping(number: int, first: str, more: list[str]) -> dict[str, str]:
    result: dict[str, str] = {}
    for text in (first, *more):
        match = _KEY.match(text)
        if match is None:
            raise Unparsed(number, "an entry line is not 'key: value'")
        key, rest = match.group(1), (match.group(2) or "").strip()
        if key in result:
            raise Unparsed(number, f"an entry gives {key!r} twice")
        result[key] = item_scalar(rest, number)
    return result


def item_scalar(text: str, line: int) -> str:
    if text.startswith(("[", "{", "|", ">")):
        raise Unparsed(line, "a list entry must be a plain or quoted string")
    return quoted(text, line) if text.startswith(('"', "'")) else plain(text)


def plain(text: str) -> str:
    """A plain scalar: ` #` starts a comment."""
    cut = text.find(" #")
    return (text if cut < 0 else text[:cut]).strip()


def fold(lines: tuple[str, ...] | list[str]) -> str:
    return " ".join(t.strip() for t in lines if t.strip())


def quoted(text: str, line: int) -> str:
    """A quoted scalar closing on its line. Double quotes read `\\\\` and `\\"`; any other
    backslash stays as written (no escape makes a control character). Single quotes read `''`."""
    value, end = scan_quoted(text, 0, line)
    tail = text[end:].strip()
    if tail and not tail.startswith("#"):
        raise Unparsed(line, "text follows a quoted value")
    return value


def scan_quoted(text: str, start: int, line: int) -> tuple[str, int]:
    """The quoted string opening at `start` and the index just past its closing quote."""
    quote, out, i = text[start], [], start + 1
    while i < len(text):
        ch = text[i]
        if quote == '"' and ch == "\\" and i + 1 < len(text) and text[i + 1] in '\\"':
            out.append(text[i + 1])
            i += 2
        elif ch == quote and quote == "'" and text[i + 1 : i + 2] == "'":
            out.append("'")
            i += 2
        elif ch == quote:
            return "".join(out), i + 1
        else:
            out.append(ch)
            i += 1
    raise Unparsed(line, "a quoted value does not close on its line")


def flow_list(text: str, line: int) -> list[str]:
    """`[a, "b, c", 'd']`: strings only, one line, a trailing comma allowed."""
    items: list[str] = []
    i, expect_item = 1, True
    while i < len(text):
        ch = text[i]
        if ch == " ":
            i += 1
        elif ch == "]":
            tail = text[i + 1 :].strip()
            if tail and not tail.startswith("#"):
                raise Unparsed(line, "text follows a flow list")
            return items
        elif ch == ",":
            if expect_item:
                raise Unparsed(line, "a flow list holds an empty item")
            i, expect_item = i + 1, True
        elif not expect_item or ch in "[{":
            raise Unparsed(line, "a flow list holds something other than strings")
        else:
            value, i = _flow_item(text, i, line)
            items.append(value)
            expect_item = False
    raise Unparsed(line, "a flow list does not close on its line")


def _flow_item(text: str, i: int, line: int) -> tuple[str, int]:
    if text[i] in "\"'":
        return scan_quoted(text, i, line)
    end = i
    while end < len(text) and text[end] not in ",]":
        end += 1
    return text[i:end].strip(), end


# --- writing -----------------------------------------------------------------------------------


def unsafe(reason: str) -> HubError:
    """Review or promote of a page whose block cannot be patched safely (spec "Errors")."""
    return invalid(f"the page's frontmatter is unsafe to patch: {reason}", field="content")


# Plain text the reader takes back as itself: no indicator first, no `: `, ` #`, quotes, commas
# or brackets (so a flow list item too); a colon only inside a word (`hub://...`, times).
_WORD = r"[A-Za-z0-9 _./@+()'!?&*=%-]*"
_PLAIN_SAFE = re.compile(rf"[A-Za-z0-9_./@(]{_WORD}(?::[A-Za-z0-9_./@+-]+{_WORD})*")


def render(value: str) -> str:
    """A string as the subset writes it: plain when it reads back as itself (in a flow list
    too), else double-quoted. A control character is refused: it would break the block."""
    if has_control(value):
        raise invalid("a frontmatter value must not hold a control character", field="frontmatter")
    if _PLAIN_SAFE.fullmatch(value) and value == value.strip() and value not in _NULLS:
        return value
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


Item = tuple[tuple[str, str], ...]  # one list entry's keys and values, in order


@dataclass(frozen=True, slots=True)
class Patch:
    """What review or promote sets: scalar keys replaced or added (in this order), the tags
    replaced or added, list entries appended to `verified` or `sources`."""

    scalars: tuple[tuple[str, str], ...] = ()
    tags: tuple[str, ...] | None = None
    append: tuple[tuple[str, Item], ...] = field(default=())


def append_verified(content: str, by: str, at: str) -> str:
    """Review's patch: `{by, at}` appended to `verified`; no other byte of the page changes."""
    return patch(content, Patch(append=(("verified", (("by", by), ("at", at))),)))


def promote_patch(
    content: str,
    source: Source,
    *,
    type: str | None = None,
    title: str | None = None,
    description: str | None = None,
    tags: tuple[str, ...] | list[str] | None = None,
) -> str:
    """Promote's patch: the keys given set, a `sources` entry appended; no other byte changes."""
    scalars = tuple(
        (k, v) for k, v in (("type", type), ("title", title), ("description", description)) if v is not None
    )
    item = (("title", source.title), ("resource", source.resource))
    return patch(content, Patch(scalars, None if tags is None else tuple(tags), (("sources", item),)))


def patch(content: str, change: Patch) -> str:
    """Apply `change` to the page's block, adding one when the page has none (the page's bytes
    then follow it unchanged). Only the lines of the keys set change, and appended entries go in
    after the list's last entry (or just before the closing fence for a new key). A block that is
    not parsed is refused (`invalid_argument`): rewriting what the reader cannot read is unsafe."""
    block = block_of(content)
    if block is None:
        newline = "\r\n" if content.split("\n", 1)[0].endswith("\r") and "\n" in content else "\n"
        return FENCE + newline + "".join(_new_lines(change, newline)) + FENCE + newline + content
    found = parse(content)
    if found.state != "parsed" or block.close is None:
        raise unsafe(found.error or "the block cannot be read")
    return _apply(block, _edits(block, {e.key: e for e in entries_of(block.inner)}, change))


@dataclass(frozen=True, slots=True)
class Edit:
    """Lines `start` to `end` (exclusive; equal for an insertion) of the page become `lines`."""

    start: int
    end: int
    lines: tuple[str, ...]
    rank: int = 1  # at one place, rank 0 (an entry appended to its list) goes before rank 1


def _apply(block: Block, edits: list[Edit]) -> str:
    lines = list(block.lines)
    # Bottom up, so earlier positions stay valid; insertions at one place keep rank, then order.
    for _order, edit in sorted(enumerate(edits), key=lambda e: (e[1].start, e[1].rank, e[0]), reverse=True):
        lines[edit.start : edit.end] = edit.lines
    return "".join(lines)


def _edits(block: Block, entries: dict[str, Entry], change: Patch) -> list[Edit]:
    newline = block.newline
    close = block.close if block.close is not None else len(block.lines)
    edits: list[Edit] = []
    for key, text in _settings(change):
        line = (f"{key}: {text}{newline}",)
        entry = entries.get(key)
        edits.append(Edit(1 + entry.start, 1 + entry.end, line) if entry else Edit(close, close, line))
    for key, item in change.append:
        edits.append(_append(entries.get(key), key, item, close, newline))
    return edits


def _settings(change: Patch) -> list[tuple[str, str]]:
    settings = [(k, render(v)) for k, v in change.scalars]
    if change.tags is not None:
        settings.append(("tags", "[" + ", ".join(render(t) for t in change.tags) + "]"))
    return settings


def _item_lines(item: Item, indent: int, newline: str) -> tuple[str, ...]:
    pad = " " * indent
    return tuple(f"{pad}{'- ' if i == 0 else '  '}{k}: {render(v)}{newline}" for i, (k, v) in enumerate(item))


def _append(entry: Entry | None, key: str, item: Item, close: int, newline: str) -> Edit:
    """The entry appended after the list's last line, at its items' column; an absent key is
    added before the closing fence; an empty flow list or null (`[]`, `~`) becomes the key alone."""
    if entry is None:
        return Edit(close, close, (f"{key}:{newline}", *_item_lines(item, 2, newline)))
    if entry.rest:
        return Edit(1 + entry.start, 2 + entry.start, (f"{key}:{newline}", *_item_lines(item, 2, newline)))
    content = [t for t in entry.body if not _blank(t)]
    indent = _indent(content[0]) if content else 2
    return Edit(1 + entry.end, 1 + entry.end, _item_lines(item, indent, newline), rank=0)


def _new_lines(change: Patch, newline: str) -> list[str]:
    lines = [f"{key}: {text}{newline}" for key, text in _settings(change)]
    for key, item in change.append:
        lines += [f"{key}:{newline}", *_item_lines(item, 2, newline)]
    return lines
