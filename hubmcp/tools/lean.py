"""The catalogue's schemas as an agent pays for them (issue 27).

`tools/list` is charged to an agent's context at every session, so each schema says what a client
needs to call the tool and read its result, once:

- An optional input member is simply optional: JSON `null` reads as absent anyway (`parse`), so
  its `null` is left out of the published schema. A member for which `null` means something of its
  own (`Request.NULL_MEANS`, an artifact update's `envelope`) keeps it, as an `anyOf` branch.
- No `type: [X, "null"]` anywhere: clients that map schemas onto a single-type dialect (Gemini's
  OpenAPI subset, the Inspector's `--strict` portability check) reject or drop it; a union is
  spelled as `anyOf` branches with one type each.
- Boilerplate said in the agent guide (what a project id, a session id or an idempotency key is)
  is not repeated in every tool; `x-` annotations meant for REST readers are left out (the limit
  they carry is in the member's description), except `x-mcp-header`, which clients act on.
- Output schemas describe the tool's own result: types and required members, no prose. The
  `notifications` trailer any successful result may carry is described once, in the guide
  (outputs allow unlisted members, so it always validates).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hubcore.services import entries
from hubcore.services.fields import ONE_LINE_RAW_PATTERN

# Member descriptions the guide already explains once (hubmcp/skill/SKILL.md, "Conventions").
SAID_IN_GUIDE = frozenset(
    {
        "project id (slug)",
        "retrying with the same key returns the original result and writes nothing new",
        "the session this is made in (over MCP, default: your active session)",
        "event id",
        "artifact id",
    }
)
KEPT_EXTENSIONS = frozenset({"x-mcp-header"})
# Members every tool spells the same way; the guide gives their format and limits once ("Conventions"),
# so a tool's schema gives only their type. The hub checks them whatever the schema says.
CONVENTIONAL = frozenset({"project_id", "session_id", "artifact_id", "idempotency_key"})
# A session reference, {session_id} or {agent, name, project_id?} (the guide's "Sessions"): its
# members once, not its two forms in full in every brain tool.
SESSION_REFERENCE: dict[str, Any] = {"type": "object", "description": "{session_id} or {agent, name, project_id?}"}
PROSE = ("description", "format", "examples", "title")
# Patterns that spell out for REST readers a rule the guide gives in words (a brain or page path
# starts /fs/ or /kv/ and holds no control character; an id is one line): left out, as a
# conventional member's format is. The hub checks them whatever the schema says.
SAID_IN_WORDS = frozenset(
    {
        *(
            entries.path_pattern(spaces, allow_root=root)
            for spaces in (entries.BRAIN_NAMESPACES, entries.PAGE_NAMESPACES)
            for root in (True, False)
        ),
        ONE_LINE_RAW_PATTERN,
    }
)


# Member descriptions that only restate the schema's own bounds, or what the tool's description
# or the guide says: left out. Others are said in fewer words (`SHORTER`, then `TRIMMED`).
RESTATED = frozenset(
    {
        "an event id",
        "page size, 1 to 500",
        "at most this many, 1 to 500",
        "at most this many sessions, 1 to 200",
        "rows, 1 to 200",
        "hits a page, 1 to 100",
        "comment id",
        "how long to wait, at most 60 seconds (the hub answers within 55); 0 polls once",
        "write only if the stored version is this sha256:..., or 'absent' to create only",
        "only this family: feed, artifact, brain or kb",
        "the answer",
        "session brain (default) or the project knowledge base",
        "required: session brain or project knowledge base",
        "the version your change is based on; another newest version is a conflict unless force",
    }
)
SHORTER = {
    "the version's text (HTML or markdown), or for a protected version its base64 ciphertext; "
    "at most 52428800 bytes as UTF-8": "HTML or markdown (protected: base64 ciphertext), at most 50 MiB",
    "free-form JSON object (at most 262144 bytes serialized)": "free-form JSON object, at most 256 KiB",
    "at most 262133 bytes once JSON-encoded": "the longer text, at most 256 KiB",
    "the entry's text, at most 4194304 bytes as UTF-8": "at most 4 MiB",
    "semantic blends in the documents nearest in meaning (backend hybrid); without the embedding model "
    "it is lexical (fts-fallback)": "semantic adds the documents nearest in meaning",
    "approvals only: deadline in seconds from now (60 to 2592000); when it passes the hub resolves the item": (
        "approvals only: seconds until the hub resolves it"
    ),
    "choices, 2 to 6 one-line labels of at most 80 characters once trimmed; a pick arrives as an answer whose "
    "body is the option text": "2 to 6 one-line choices of at most 80 characters; a pick is answered with its text",
    "the version commented on (default the current one; clamped to 1..current)": "default: the current version",
    "the version's label: one line, at most 60 bytes as UTF-8 once trimmed": "one line, at most 60 bytes",
    'words match as prefixes, whole words first; "a phrase" in quotes as a phrase; punctuation and bare '
    "AND/OR/NOT/NEAR are dropped": 'words (prefixes; every word must match) and "quoted phrases"',
}
SHORTER[
    "How a protected version was encrypted (DESIGN section 7). The client derives a key from the password "
    "with PBKDF2-HMAC-SHA256 (600,000 iterations, this salt) and encrypts with AES-256-GCM under this iv; "
    "`content` is the base64 ciphertext with its tag."
] = "how `content` was encrypted (guide: Artifacts)"
TRIMMED = (" once trimmed", "; canonicalised (., .., trailing slash)", " once canonical", " as UTF-8")


def lean_input(schema: Mapping[str, Any], keep_null: frozenset[str] = frozenset()) -> dict[str, Any]:
    """A tool's input schema for the catalogue (see the module's rules)."""
    out: dict[str, Any] = _walk_input(dict(schema), keep_null)
    out.pop("description", None)  # the tool's own description says it
    members = out.get("properties", {})
    for name, member in members.items():
        if isinstance(member, dict) and _is_envelope(member):
            members[name] = _envelope(member)
    for member in members.values():
        if isinstance(member, dict) and isinstance(member.get("description"), str):
            note = _note(member.pop("description"))
            if note:
                member["description"] = note
    for name in CONVENTIONAL & set(members):
        members[name] = {"type": "string"}
    if isinstance(members.get("session"), dict) and "oneOf" in members["session"]:
        members["session"] = dict(SESSION_REFERENCE)
    if isinstance(members.get("from"), dict) and "oneOf" in members["from"]:  # session_start: an id or a reference
        members["from"] = {
            "anyOf": [{"type": "string"}, {"type": "object"}],
            "description": "the session to continue: its id, {session_id} or {agent, name, project_id?}",
        }
    return out


def lean_output(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A tool's output schema for the catalogue: shape only; the items of a list name the members
    every item has (its required ones), not every member an item may have."""
    return dict(_walk_output(schema))


ENVELOPE_MEMBERS = ["alg", "kdf", "iterations", "salt", "iv"]
ENVELOPE: dict[str, Any] = {"type": "object", "required": ENVELOPE_MEMBERS}


def _is_envelope(member: dict[str, Any]) -> bool:
    forms = [member, *member.get("anyOf", [])]
    return any(isinstance(f, dict) and f.get("required") == ENVELOPE_MEMBERS for f in forms)


def _envelope(member: dict[str, Any]) -> dict[str, Any]:
    """A protected version's envelope by its members' names: their values are fixed by the
    guide's "Protected artifacts" (clients build it, or hub-cli does from a password)."""
    note = {"description": "how `content` was encrypted (guide: Artifacts)"}
    if "anyOf" in member:  # `null` means something here (a plain new version)
        return {"anyOf": [dict(ENVELOPE), {"type": "null"}], **note}
    return {**ENVELOPE, **note}


def _note(text: str) -> str | None:
    text = " ".join(text.split())
    if text in SAID_IN_GUIDE or text in RESTATED:
        return None
    text = SHORTER.get(text, text)
    for cut in TRIMMED:
        text = text.replace(cut, "")
    return text


def _walk_input(node: Any, keep_null: frozenset[str] = frozenset(), depth: int = 0) -> Any:
    """`depth` counts schema levels: 0 the arguments object, 1 an argument; descriptions deeper
    than an argument (the branches of a union, an envelope's members) are left out."""
    if isinstance(node, list):
        return [_walk_input(v, depth=depth) for v in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if (key.startswith("x-") and key not in KEPT_EXTENSIONS) or key in ("discriminator", "contentEncoding"):
            continue
        if key == "description" and (depth > 1 or value in SAID_IN_GUIDE):
            continue
        if key == "pattern" and value in SAID_IN_WORDS:
            continue
        if key == "properties" and isinstance(value, dict):
            required = set(node.get("required", ()))
            out[key] = {
                name: _member(member, name in required or name in keep_null, depth + 1)
                for name, member in value.items()
            }
            continue
        if key in ("default", "const", "enum"):
            out[key] = value
            continue
        if key == "type" and ("const" in node or _string_enum(node)):  # the values say their type
            continue
        if key == "maximum" and isinstance(value, int) and value >= 2**31 - 1:  # any id or version
            continue
        out[key] = _walk_input(value, depth=depth + (key in ("items", "anyOf", "oneOf", "allOf")))
    return _split_types(out)


def _string_enum(node: dict[str, Any]) -> bool:
    values = node.get("enum")
    return node.get("type") == "string" and isinstance(values, list) and all(isinstance(v, str) for v in values)


def _member(member: Any, keep: bool, depth: int) -> Any:
    walked = _walk_input(member, depth=depth)
    return walked if keep or not isinstance(walked, dict) else _without_null(walked)


def _without_null(node: dict[str, Any]) -> dict[str, Any]:
    """An optional member with its `null` left out (absent and null read the same)."""
    out = dict(node)
    if isinstance(out.get("enum"), list):
        out["enum"] = [v for v in out["enum"] if v is not None]
    for union in ("anyOf", "oneOf"):
        branches = out.get(union)
        if not isinstance(branches, list):
            continue
        kept = [b for b in branches if b != {"type": "null"}]
        if len(kept) == 1 and isinstance(kept[0], dict) and not (set(kept[0]) & set(out) - {union}):
            rest = {k: v for k, v in out.items() if k != union}
            out = {**kept[0], **rest}
        else:
            out[union] = kept
    if out.get("anyOf") is not None and all(isinstance(b, dict) and set(b) == {"type"} for b in out["anyOf"]):
        kinds = [b["type"] for b in out["anyOf"]]
        if len(kinds) == 1:
            out.pop("anyOf")
            out["type"] = kinds[0]
    return out


def _walk_output(node: Any) -> Any:
    if isinstance(node, list):
        return [_walk_output(v) for v in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in PROSE and not isinstance(value, dict):
            continue
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: _walk_output(member) for name, member in value.items() if not _nullable(member)}
        elif key == "items" and isinstance(value, dict):
            out[key] = _walk_output(_required_only(value))
        elif key in ("const", "enum", "default", "required"):
            out[key] = value
        else:
            out[key] = _walk_output(value)
    return _split_types(out)


def _nullable(member: Any) -> bool:
    """A result member that may be null: named by the required list when always present, its type
    left open (a one-type-per-branch union of it and null would cost more than it tells)."""
    if not isinstance(member, dict):
        return False
    kinds = member.get("type")
    branches = member.get("anyOf") or member.get("oneOf") or []
    return (isinstance(kinds, list) and "null" in kinds) or {"type": "null"} in branches


def _required_only(item: dict[str, Any]) -> dict[str, Any]:
    """A list's item as the names of the members every item has (the tool's description and the
    guide say what they hold); an item without a required list keeps its members' types."""
    if not isinstance(item.get("properties"), dict) or not item.get("required"):
        return item
    return {k: v for k, v in item.items() if k != "properties"}


def _split_types(node: dict[str, Any]) -> dict[str, Any]:
    """`type: [X, Y]` as `anyOf` branches of one type each (the portable spelling); the branch
    for `null` carries nothing else, every other constraint stays with its own type."""
    kinds = node.get("type")
    if not isinstance(kinds, list):
        return node
    kinds = [k for k in kinds if isinstance(k, str)]
    if len(kinds) == 1:
        return {**node, "type": kinds[0]}
    rest = {k: v for k, v in node.items() if k != "type"}
    enum = rest.pop("enum", None)
    shared = {k: rest.pop(k) for k in list(rest) if k in ("description", "default")}
    branches: list[dict[str, Any]] = []
    for kind in kinds:
        if kind == "null":
            branches.append({"type": "null"})
            continue
        branch: dict[str, Any] = {"type": kind, **rest}
        if isinstance(enum, list):
            branch["enum"] = [v for v in enum if v is not None]
        branches.append(branch)
    return {**shared, "anyOf": branches}
