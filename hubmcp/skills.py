"""The hub's own agent guide, served as an Agent Skill (SEP-2640) under `skill://hub/`.

The files ship as package data in `hubmcp/skill/`: `SKILL.md` and reference files below it. Each
is served with its SHA-256 digest and byte size; `skills/list` and `skills/get` return the entry
(`uri`, `frontmatter`, `resources`), `resources/directory/read` lists a directory's children. The
bootstrap guide (`hub://skill`, `GET /bootstrap/SKILL.md`) is a template with the caller's origin
rendered in.
"""

from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass
from importlib.resources import files
from typing import Any

SKILL_NAME = "hub"
SKILL_ROOT = f"skill://{SKILL_NAME}"
SKILL_MD_URI = f"{SKILL_ROOT}/SKILL.md"
DIRECTORY_MIME = "inode/directory"
ORIGIN_MARK = "{{ORIGIN}}"
STANDALONE_NOTE = (
    "You reach it through this stdio MCP server (`hub-cli mcp` serving the hub's data directory\n"
    "itself), as the human's admin connection: you are connected already, and no network\n"
    "address serves this hub here."
)


@dataclass(frozen=True)
class SkillFile:
    path: str  # relative to the skill root, e.g. "SKILL.md", "references/errors.md"
    data: bytes

    @property
    def uri(self) -> str:
        return f"{SKILL_ROOT}/{self.path}"

    @property
    def text(self) -> str:
        return self.data.decode("utf-8")

    @property
    def size(self) -> int:
        return len(self.data)

    @property
    def digest(self) -> str:
        return "sha256:" + hashlib.sha256(self.data).hexdigest()

    @property
    def mime_type(self) -> str:
        return "text/markdown" if self.path.endswith(".md") else "text/plain"

    @property
    def title(self) -> str:
        for line in self.text.splitlines():
            if line.startswith("# "):
                return line[2:].strip()
        return self.path


def _walk(node: Any, prefix: str) -> list[SkillFile]:
    found: list[SkillFile] = []
    for child in sorted(node.iterdir(), key=lambda c: c.name):
        if child.name.startswith((".", "_")):
            continue
        rel = f"{prefix}{child.name}"
        if child.is_dir():
            found.extend(_walk(child, rel + "/"))
        else:
            found.append(SkillFile(rel, child.read_bytes()))
    return found


def parse_frontmatter(text: str) -> dict[str, str]:
    """The `key: value` lines of the leading `---` block (the guide keeps to plain strings)."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return {}
    found: dict[str, str] = {}
    for line in lines[1:]:
        if line.strip() == "---":
            return found
        key, sep, value = line.partition(":")
        if sep and key.strip() and not key.startswith((" ", "\t")):
            found[key.strip()] = value.strip().strip('"')
    return {}


@dataclass(frozen=True)
class Skill:
    files: tuple[SkillFile, ...]
    bootstrap_template: str

    @functools.cached_property
    def by_path(self) -> dict[str, SkillFile]:
        return {f.path: f for f in self.files}

    @functools.cached_property
    def frontmatter(self) -> dict[str, str]:
        return parse_frontmatter(self.by_path["SKILL.md"].text)

    def entry(self) -> dict[str, Any]:
        """The skill entry of `skills/list` and `skills/get`."""
        ordered = sorted(self.files, key=lambda f: (f.path != "SKILL.md", f.path))
        return {
            "uri": SKILL_MD_URI,
            "frontmatter": dict(self.frontmatter),
            "resources": [{"uri": f.uri, "digest": f.digest, "size": f.size} for f in ordered],
        }

    def file_for(self, uri: str) -> SkillFile | None:
        if not uri.startswith(SKILL_ROOT + "/"):
            return None
        return self.by_path.get(uri[len(SKILL_ROOT) + 1 :])

    def directories(self) -> set[str]:
        """Every directory of the skill as a relative path ("" is the root)."""
        dirs = {""}
        for f in self.files:
            parts = f.path.split("/")[:-1]
            for i in range(1, len(parts) + 1):
                dirs.add("/".join(parts[:i]))
        return dirs

    def directory_path(self, uri: str) -> str | None:
        """The relative directory a `skill://hub[/dir][/]` URI names, or None."""
        if uri.rstrip("/") == SKILL_ROOT:
            return ""
        if not uri.startswith(SKILL_ROOT + "/"):
            return None
        rel = uri[len(SKILL_ROOT) + 1 :].rstrip("/")
        return rel if rel in self.directories() else None

    def children(self, rel: str) -> list[dict[str, Any]]:
        """Direct children of a directory, as resource descriptors (directories first)."""
        prefix = f"{rel}/" if rel else ""
        subdirs = sorted({d for d in self.directories() if d and d.startswith(prefix) and "/" not in d[len(prefix) :]})
        out: list[dict[str, Any]] = [
            {"uri": f"{SKILL_ROOT}/{d}", "name": d.rsplit("/", 1)[-1], "mimeType": DIRECTORY_MIME} for d in subdirs
        ]
        for f in self.files:
            if f.path.startswith(prefix) and "/" not in f.path[len(prefix) :]:
                out.append(
                    {
                        "uri": f.uri,
                        "name": f.path.rsplit("/", 1)[-1],
                        "title": f.title,
                        "mimeType": f.mime_type,
                        "size": f.size,
                    }
                )
        return out

    def bootstrap(self, origin: str) -> str:
        return self.bootstrap_template.replace(ORIGIN_MARK, origin.rstrip("/"))

    def bootstrap_standalone(self) -> str:
        """The bootstrap guide for a server with no address (`hub-cli mcp` standalone over stdio,
        no public URL configured): it names no address, since nothing listens at any (issue 27);
        the client is connected already, so the "Connect" section is left out."""
        head, rest = self.bootstrap_template.split("## Connect", 1)
        then = rest.split("## Then", 1)[1]
        head = re.sub(r"\s*It answers at\s+" + re.escape(ORIGIN_MARK) + r"\.", "\n" + STANDALONE_NOTE, head)
        text = head + "## Then" + then
        if ORIGIN_MARK in text:
            raise RuntimeError("hubmcp/bootstrap.md names its origin outside the Connect section")
        return text


@functools.cache
def load() -> Skill:
    package = files("hubmcp")  # package data, wherever the package is installed
    found = tuple(_walk(package / "skill", ""))
    template = (package / "bootstrap.md").read_text(encoding="utf-8")
    skill = Skill(found, template)
    if "SKILL.md" not in skill.by_path or skill.frontmatter.get("name") != SKILL_NAME:
        raise RuntimeError("hubmcp/skill/SKILL.md is missing or its frontmatter name is not 'hub'")
    return skill


def render_bootstrap(origin: str) -> str:
    """The bootstrap guide with `origin` (e.g. `https://hub.example:8443`) rendered in."""
    return load().bootstrap(origin)
