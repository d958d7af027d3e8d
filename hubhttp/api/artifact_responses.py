"""Response models of the artifact routes (`hubhttp.api.artifacts`), for the OpenAPI document;
the conventions are `hubhttp.api.responses`'s (required as always sent, nullable where null, closed)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from hubhttp.api.responses import ABSENT, Out


class EnvelopeOut(Out):
    alg: Literal["AES-256-GCM"]
    kdf: Literal["PBKDF2-HMAC-SHA256"]
    iterations: int
    salt: str
    iv: str


class ArtifactSummary(Out):
    id: str
    project_id: str
    title: str
    kind: Literal["html", "markdown", "diff"]
    description: str
    actor: str | None
    session_id: str | None
    version: int
    label: str | None
    size_bytes: int
    protected: bool
    live_version: int | None
    comments_count: int
    comments_open: int
    created_at: str
    updated_at: str


class DiffFileOut(Out):
    path: str
    old_path: str | None
    status: Literal["added", "deleted", "modified", "renamed", "copied"]
    added: int
    removed: int
    hunks: int
    binary: bool
    similarity: int = ABSENT
    old_mode: str | None = ABSENT
    new_mode: str | None = ABSENT


class DiffOut(Out):
    files: list[DiffFileOut]
    added: int
    removed: int
    hunks: int


class ArtifactOut(ArtifactSummary):
    envelope: EnvelopeOut | None
    content: str
    live: bool
    live_rev: int
    rendered: str = ABSENT  # a public markdown version rendered to HTML by the hub's one renderer
    diff: DiffOut | None = ABSENT  # a diff's summary, parsed once at write


class ArtifactListOut(Out):
    artifacts: list[ArtifactSummary]
    next_cursor: str | None  # pass as `cursor` for the next page; null on the last


class VersionOut(Out):
    version: int
    label: str | None
    size_bytes: int
    protected: bool
    actor: str | None
    session_id: str | None
    live: bool
    created_at: str
    updated_at: str


class VersionsOut(Out):
    artifact_id: str
    versions: list[VersionOut]


class LiveOut(Out):
    state: Literal["live", "idle", "sealed"]
    version: int
    live_rev: int
    actor: str | None
    session_id: str | None


class RawProtected(Out):
    envelope: EnvelopeOut
    ciphertext: str


class Ok(Out):
    ok: Literal[True]


class ShareCreated(Out):
    token: str
    version: int
    url: str


class ShareOut(ShareCreated):
    created_at: str


class ScriptsOut(Out):
    artifact_id: str
    scripts: bool


class ViewerPass(Out):
    pass_: str = Field(alias="pass")  # `pass` on the wire


class PointAnchorOut(Out):
    mode: Literal["point"]
    x: float
    y: float


class TextAnchorOut(Out):
    mode: Literal["text"]
    quote: str


class LineAnchorOut(Out):
    mode: Literal["line"]
    file: str
    side: Literal["old", "new"]
    line: int
    end_line: int = ABSENT


class CommentOut(Out):
    id: str
    artifact_id: str
    author: str
    body: str
    anchor: PointAnchorOut | TextAnchorOut | LineAnchorOut | None
    anchor_version: int
    done: bool
    outdated: bool
    created_at: str
    updated_at: str


class CommentPosted(CommentOut):
    delete_token: str = ABSENT  # an agent's post only (over REST the admin posts, and gets none)


class CommentsOut(Out):
    artifact_id: str
    comments: list[CommentOut]
    truncated: bool
    next_after: str | None
