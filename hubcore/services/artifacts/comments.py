"""Comments on artifacts (`comment_post`, `comment_list`, `comment_resolve`, `comment_delete`, and
`/api/v1/artifacts/:id/comments`).

Public API (`hub.comments`, a `CommentService`; each method takes a `Caller` and one typed request):

- `post(caller, CommentPost)` -> the comment, plus `delete_token` (64 hex, shown once) for an agent
- `list(caller, CommentList)` -> `{artifact_id, comments: [...], truncated, next_after}`, oldest first
- `resolve(caller, CommentResolve)` -> the comment (`done` set as asked: resolve or reopen)
- `delete(caller, CommentDelete)` -> `{ok: true}`

A comment is `{id, artifact_id, author, body, anchor, anchor_version, done, created_at, updated_at}`
(DESIGN section 7); `anchor` is null, `{mode: "point", x, y}` (fractions 0..1 of the page's width and
height) or `{mode: "text", quote}`. Rules, each here once: posting needs write access (an agent or
the admin that sees the artifact's project); the body is trimmed, 1..2000 characters (over is 413);
a quote at most 2000 characters, the anchor object at most 2048 bytes of JSON (400: a shape); `anchor_version`
defaults to the artifact's current version and is clamped to 1..current; a quote anchor on a
version held only as ciphertext is refused; the delete token is kept only as its SHA-256 and a
retried post (same idempotency key, scope `comment:post`, bound to the artifact) answers the first
result without the token; resolving or deleting needs write access or the comment's delete token
(the token alone is enough, even for a caller that cannot see the project); the artifact's
`comments_count` and `comments_open` are kept in the same command. Missing and denied are the same
`not_found` (an artifact's; a comment's only to a caller that sees the artifact).
"""

# No `from __future__ import annotations`: pydantic reads the annotations.

import hashlib
import hmac
import math
import secrets
import sqlite3
from typing import Annotated, Any, Literal

import anyio
import orjson
from pydantic import AfterValidator, Field, StringConstraints, model_validator
from pydantic_core import PydanticCustomError

from hubcore.caller import Caller
from hubcore.clock import iso
from hubcore.errors import HubError, invalid, not_found
from hubcore.services import idempotency as idem
from hubcore.services import ids, validate
from hubcore.services.artifacts import diffs, reviews, rows
from hubcore.services.artifacts.comment_notes import notify_author
from hubcore.services.artifacts.models import ArtifactId, Version
from hubcore.services.changes import Effects
from hubcore.services.core import Core
from hubcore.services.fields import NOT_BLANK_PATTERN, IdempotencyKey, Trimmed, WholeNumber
from hubcore.services.requests import Request
from hubcore.store.blobs import BlobStore

BODY_MAX = 2000
QUOTE_MAX = 2000
ANCHOR_MAX_BYTES = 2048
LIST_DEFAULT, LIST_MAX = 100, 500
TOKEN_HEX = 64
FILE_MAX = 1024
LINE_MAX = 2**31 - 1
COMMENT_COLUMNS = (
    "c.id, c.artifact_id, c.author, c.body, c.anchor, c.anchor_version, c.done, c.token_hash, "
    "c.created_at, c.updated_at, c.outdated"
)


def _one_line(value: str) -> str:
    if not validate.one_line(value):
        raise PydanticCustomError("one_line", "must be one line")
    return value


def _not_blank(value: str) -> str:
    if not value:
        raise PydanticCustomError(
            "string_too_short", "must be at least {min_length} characters long once trimmed", {"min_length": 1}
        )
    return value


def _fraction(value: float) -> float:
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise PydanticCustomError("fraction", "must be a number from 0 to 1")
    return value


CommentId = Annotated[str, StringConstraints(min_length=1, max_length=64), Field(description="comment id")]
Body = Annotated[
    str,
    Trimmed(BODY_MAX, lines=True),
    AfterValidator(_not_blank),
    Field(
        description=f"the comment, 1 to {BODY_MAX} characters once trimmed",
        json_schema_extra={"pattern": NOT_BLANK_PATTERN},
    ),
]
Fraction = Annotated[float, AfterValidator(_fraction), Field(description="0 to 1, a fraction of the page")]
DeleteToken = Annotated[
    str,
    StringConstraints(min_length=1, max_length=TOKEN_HEX),
    Field(description="the delete_token comment_post returned (not needed when you can see the project)"),
]


class PointAnchor(Request):
    """A point on the page: fractions of its width (x) and height (y)."""

    mode: Literal["point"]
    x: Fraction
    y: Fraction


class TextAnchor(Request):
    """A quote from the version's text (refused on a password-protected version)."""

    mode: Literal["text"]
    quote: Annotated[str, Trimmed(QUOTE_MAX, lines=True), AfterValidator(_not_blank)]


LineNumber = Annotated[int, WholeNumber(1, LINE_MAX)]


class LineAnchor(Request):
    """Lines of a diff artifact's version: a file of its summary, a side, a line (to end_line)."""

    mode: Literal["line"]
    file: Annotated[str, StringConstraints(min_length=1, max_length=FILE_MAX), AfterValidator(_one_line)]
    side: Literal["old", "new"]
    line: LineNumber
    end_line: Annotated[LineNumber | None, Field(description="a range's last line")] = None

    @model_validator(mode="after")
    def _range(self) -> "LineAnchor":
        if self.end_line is not None and self.end_line < self.line:
            raise PydanticCustomError("line_range", "end_line must not be before line")
        return self


Anchor = Annotated[PointAnchor | TextAnchor | LineAnchor, Field(discriminator="mode")]


class CommentPost(Request):
    """`comment_post`, `POST /artifacts/:id/comments`."""

    artifact_id: ArtifactId
    body: Body
    anchor: Annotated[
        Anchor | None,
        Field(description="null, {mode: point, x, y}, {mode: text, quote}, on a diff {mode: line, file, side, line}"),
    ] = None
    anchor_version: Annotated[
        Version | None, Field(description="the version commented on (default the current one; clamped to 1..current)")
    ] = None
    idempotency_key: IdempotencyKey | None = None


class CommentList(Request):
    """`comment_list`, `GET /artifacts/:id/comments`: oldest first."""

    artifact_id: ArtifactId
    after: Annotated[CommentId | None, Field(description="continue after this comment id (next_after)")] = None
    limit: Annotated[int, Field(ge=1, le=LIST_MAX, description=f"at most this many, 1 to {LIST_MAX}")] = LIST_DEFAULT


class CommentResolve(Request):
    """`comment_resolve`, `PATCH /artifacts/:id/comments/:commentId`: resolve (done) or reopen."""

    artifact_id: ArtifactId
    comment_id: CommentId
    done: Annotated[bool, Field(description="true resolves, false reopens")] = True
    delete_token: DeleteToken | None = None


class CommentDelete(Request):
    """`comment_delete`, `DELETE /artifacts/:id/comments/:commentId`."""

    artifact_id: ArtifactId
    comment_id: CommentId
    delete_token: DeleteToken | None = None


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def comment_missing(comment_id: str) -> HubError:
    shown = comment_id if len(comment_id) <= 64 else comment_id[:64] + "..."
    return not_found(f"comment {shown!r} not found")


def render(c: sqlite3.Row) -> dict[str, Any]:
    return {
        "id": c["id"],
        "artifact_id": c["artifact_id"],
        "author": c["author"],
        "body": c["body"],
        "anchor": orjson.loads(c["anchor"]) if c["anchor"] is not None else None,
        "anchor_version": c["anchor_version"],
        "done": bool(c["done"]),
        "outdated": bool(c["outdated"]),
        "created_at": iso(c["created_at"]),
        "updated_at": iso(c["updated_at"]),
    }


def writable(conn: sqlite3.Connection, caller: Caller, artifact_id: str) -> sqlite3.Row | None:
    """The artifact row when the caller has write access to it (an agent or the admin seeing its
    project), else None. The public reads artifacts by id but writes nothing here."""
    if caller.kind == "public":
        return None
    try:
        return rows.readable(conn, caller, artifact_id)
    except HubError:
        return None


def anchor_json(req: CommentPost) -> str | None:
    if req.anchor is None:
        return None
    text = orjson.dumps(req.anchor.model_dump(exclude_none=True)).decode()
    if len(text.encode()) > ANCHOR_MAX_BYTES:
        raise invalid(f"anchor: at most {ANCHOR_MAX_BYTES} bytes as JSON", field="anchor")
    return text


def clamped_version(conn: sqlite3.Connection, a: sqlite3.Row, req: CommentPost) -> int:
    """The version commented on, 1..current; a quote anchor on ciphertext is refused."""
    current = int(a["version"])
    version = current if req.anchor_version is None else max(1, min(req.anchor_version, current))
    if isinstance(req.anchor, TextAnchor):
        v = rows.version_row(conn, a["id"], version)
        if v is not None and v["envelope"] is not None:
            raise invalid(
                f"anchor: version {version} is password protected (the hub holds only its ciphertext), so "
                "a quote cannot be checked against it; anchor to a point or to nothing",
                field="anchor",
            )
    return version


class CommentService:
    def __init__(self, core: Core, blobs: BlobStore) -> None:
        self.core = core
        self.blobs = blobs

    async def _check_lines(self, caller: Caller, req: CommentPost) -> int | None:
        """A line anchor names lines the (sealed, so immutable) version's diff shows; the version
        checked is the one the comment is posted on."""
        if not isinstance(req.anchor, LineAnchor):
            return None

        def read(conn: sqlite3.Connection) -> tuple[int, str]:
            a = writable(conn, caller, req.artifact_id)
            if a is None:
                raise rows.artifact_missing(req.artifact_id)
            if a["kind"] != "diff":
                raise invalid(
                    f"anchor: a line anchor needs a diff artifact; {a['id']!r} is {a['kind']}", field="anchor"
                )
            version = clamped_version(conn, a, req)
            v = rows.version_row(conn, a["id"], version)
            if v is None:
                raise not_found(f"version {version} of artifact {a['id']!r} not found")
            return version, str(v["sha256"])

        version, digest = await self.core.store.read(read)
        anchor = req.anchor.model_dump()

        def check() -> None:
            diff = diffs.parse(self.blobs.read(digest).decode(), files_max=1 << 30, hunks_max=1 << 30)
            reviews.check_anchor(diff, anchor, version)

        await anyio.to_thread.run_sync(check)
        return version

    async def post(self, caller: Caller, req: CommentPost) -> dict[str, Any]:
        anchor = anchor_json(req)
        checked = await self._check_lines(caller, req)
        if checked is not None:
            req = req.model_copy(update={"anchor_version": checked})
        now, actor = self.core.now(), caller.actor
        token = None if caller.is_admin else secrets.token_hex(TOKEN_HEX // 2)

        def write(conn: sqlite3.Connection) -> tuple[dict[str, Any], Effects]:
            effects = Effects()
            a = writable(conn, caller, req.artifact_id)
            if a is None:
                raise rows.artifact_missing(req.artifact_id)
            earlier = idem.replayed(conn, actor, "comment:post", req.idempotency_key, a["id"])
            if earlier is not None:
                return earlier, effects
            version = clamped_version(conn, a, req)
            comment_id = ids.mint(conn, now).lower()
            conn.execute(
                """INSERT INTO artifact_comments (id, artifact_id, author, body, anchor, anchor_version, done,
                   token_hash, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?, ?)""",
                (comment_id, a["id"], actor, req.body, anchor, version, token and token_hash(token), now, now),
            )
            conn.execute(
                """UPDATE artifacts SET comments_count = comments_count + 1,
                            comments_open = comments_open + 1 WHERE id = ?""",
                (a["id"],),
            )
            result = render(self._row(conn, a["id"], comment_id))
            notify_author(conn, caller, a, result, now, effects)  # the human's comment reaches its author agent
            idem.remember(conn, actor, "comment:post", req.idempotency_key, a["id"], a["project_id"], result, now)
            return ({**result, "delete_token": token} if token else result), effects

        found: dict[str, Any] = await self.core.store.execute_effects(write)
        return found

    async def list(self, caller: Caller, req: CommentList) -> dict[str, Any]:
        def read(conn: sqlite3.Connection) -> dict[str, Any]:
            a = writable(conn, caller, req.artifact_id)
            if a is None:
                raise rows.artifact_missing(req.artifact_id)
            found = conn.execute(
                f"""SELECT {COMMENT_COLUMNS} FROM artifact_comments c WHERE c.artifact_id = ? AND c.id > ?
                    ORDER BY c.id LIMIT ?""",
                (a["id"], req.after or "", req.limit + 1),
            ).fetchall()
            page = [render(c) for c in found[: req.limit]]
            truncated = len(found) > req.limit
            return {
                "artifact_id": a["id"],
                "comments": page,
                "truncated": truncated,
                "next_after": page[-1]["id"] if truncated else None,
            }

        found: dict[str, Any] = await self.core.store.read(read)
        return found

    async def resolve(self, caller: Caller, req: CommentResolve) -> dict[str, Any]:
        now = self.core.now()

        def write(conn: sqlite3.Connection) -> dict[str, Any]:
            c = self._allowed(conn, caller, req.artifact_id, req.comment_id, req.delete_token)
            if bool(c["done"]) != req.done:
                conn.execute(
                    "UPDATE artifact_comments SET done = ?, updated_at = ? WHERE id = ?", (int(req.done), now, c["id"])
                )
                conn.execute(
                    "UPDATE artifacts SET comments_open = comments_open + ? WHERE id = ?",
                    (-1 if req.done else 1, c["artifact_id"]),
                )
            return render(self._row(conn, c["artifact_id"], c["id"]))

        found: dict[str, Any] = await self.core.store.execute(write)
        return found

    async def delete(self, caller: Caller, req: CommentDelete) -> dict[str, Any]:
        def write(conn: sqlite3.Connection) -> None:
            c = self._allowed(conn, caller, req.artifact_id, req.comment_id, req.delete_token)
            conn.execute("DELETE FROM artifact_comments WHERE id = ?", (c["id"],))
            conn.execute(
                """UPDATE artifacts SET comments_count = comments_count - 1,
                            comments_open = comments_open - ? WHERE id = ?""",
                (0 if c["done"] else 1, c["artifact_id"]),
            )

        await self.core.store.execute(write)
        return {"ok": True}

    @staticmethod
    def _row(conn: sqlite3.Connection, artifact_id: str, comment_id: str) -> sqlite3.Row:
        row: sqlite3.Row | None = conn.execute(
            f"SELECT {COMMENT_COLUMNS} FROM artifact_comments c WHERE c.artifact_id = ? AND c.id = ?",
            (artifact_id, comment_id),
        ).fetchone()
        if row is None:
            raise comment_missing(comment_id)
        return row

    def _allowed(
        self, conn: sqlite3.Connection, caller: Caller, artifact_id: str, comment_id: str, token: str | None
    ) -> sqlite3.Row:
        """The comment when the caller has write access to its artifact or holds its delete token.
        Without either the answer is the missing artifact's, whether or not the comment exists."""
        if writable(conn, caller, artifact_id) is not None:
            return self._row(conn, artifact_id, comment_id)
        c = conn.execute(
            f"SELECT {COMMENT_COLUMNS} FROM artifact_comments c WHERE c.artifact_id = ? AND c.id = ?",
            (artifact_id, comment_id),
        ).fetchone()
        if (
            c is None
            or token is None
            or c["token_hash"] is None
            or not hmac.compare_digest(token_hash(token), c["token_hash"])
        ):
            raise rows.artifact_missing(artifact_id)
        result: sqlite3.Row = c
        return result
