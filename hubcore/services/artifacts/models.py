"""Typed requests of the artifact operations, and the limits they are built from.

Limits (spec "Limits", DESIGN section 7): a version's body at most 50 MiB as UTF-8 (the blob
store's limit; over it is 413), a description at most 2000 characters, a version label at most 60
bytes, a title at most 200 characters. A protected version's `content` is base64 ciphertext (AES-256-GCM
output, tag included) and its `envelope` is exactly `{alg: "AES-256-GCM", kdf: "PBKDF2-HMAC-SHA256",
iterations: 600000, salt, iv}` (salt 16 to 64 bytes, iv 12 bytes, both base64); the hub checks the
shape and stores both as given: it never sees a password.
"""

# No `from __future__ import annotations`: pydantic reads the annotations.

import base64
import binascii
from typing import Annotated, Any, ClassVar, Literal

from pydantic import AfterValidator, Field, GetCoreSchemaHandler, GetJsonSchemaHandler, StringConstraints
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import PydanticCustomError, core_schema

from hubcore.services import validate
from hubcore.services.fields import (
    FLOAT_REPR_PATTERN,
    EntryContent,
    IdempotencyKey,
    ProjectId,
    SessionId,
    Trimmed,
    WholeNumber,
)
from hubcore.services.requests import Request
from hubcore.store.blobs import BLOB_MAX

TITLE_MAX = 200
DESCRIPTION_MAX = 2000
LABEL_MAX_BYTES = 60
ARTIFACT_ID_MAX = 64
VERSION_MAX = 2**31 - 1
LIST_DEFAULT, LIST_MAX = 100, 500
KINDS = ("html", "markdown", "diff")
ALG, KDF, ITERATIONS = "AES-256-GCM", "PBKDF2-HMAC-SHA256", 600_000
SALT_MIN, SALT_MAX, IV_BYTES, TAG_BYTES = 16, 64, 12, 16


def _one_line(value: str) -> str:
    if not validate.one_line(value):
        raise PydanticCustomError("one_line", "must be one line")
    return value


def _not_empty(value: str) -> str:
    if not value:
        raise PydanticCustomError(
            "string_too_short", "must be at least {min_length} characters long", {"min_length": 1}
        )
    return value


def decoded_base64(value: str) -> bytes | None:
    """The bytes of standard base64 text (padding required), or None when it is not that."""
    try:
        return base64.b64decode(value.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        return None


class Base64Bytes:
    """Standard base64 text whose bytes number `minimum` to `maximum`."""

    def __init__(self, minimum: int, maximum: int) -> None:
        self.minimum, self.maximum = minimum, maximum

    def __call__(self, value: str) -> str:
        raw = decoded_base64(value) if len(value) <= 4 * self.maximum else None
        if raw is None or not self.minimum <= len(raw) <= self.maximum:
            size = f"{self.minimum}" if self.minimum == self.maximum else f"{self.minimum} to {self.maximum}"
            raise PydanticCustomError("base64", "must be standard base64 of {size} bytes", {"size": size})
        return value

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return core_schema.no_info_after_validator_function(
            self, core_schema.str_schema(strict=True, max_length=4 * ((self.maximum + 2) // 3))
        )

    def __get_pydantic_json_schema__(
        self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return {
            "type": "string",
            "maxLength": 4 * ((self.maximum + 2) // 3),
            "contentEncoding": "base64",
            "description": f"standard base64 of {self.minimum} to {self.maximum} bytes",
        }


class VersionLabel:
    """A version label: one line without control characters, at most 60 bytes as UTF-8 once
    trimmed; blank reads as no label."""

    def __call__(self, value: str) -> str:
        text = value.strip()
        if text and (not validate.is_label(text) or len(text.encode()) > LABEL_MAX_BYTES):
            raise PydanticCustomError(
                "label",
                "must be one line without control characters, at most {max_bytes} bytes as UTF-8",
                {"max_bytes": LABEL_MAX_BYTES},
            )
        return text

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return core_schema.no_info_after_validator_function(self, core_schema.str_schema(strict=True))

    def __get_pydantic_json_schema__(
        self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return {
            "type": "string",
            "x-max-bytes-utf8": LABEL_MAX_BYTES,
            "description": f"the version's label: one line, at most {LABEL_MAX_BYTES} bytes as UTF-8 once trimmed",
        }


class Envelope(Request):
    """How a protected version was encrypted (DESIGN section 7). The client derives a key from
    the password with PBKDF2-HMAC-SHA256 (600,000 iterations, this salt) and encrypts with
    AES-256-GCM under this iv; `content` is the base64 ciphertext with its tag."""

    alg: Literal["AES-256-GCM"]
    kdf: Literal["PBKDF2-HMAC-SHA256"]
    iterations: Annotated[int, WholeNumber(ITERATIONS, ITERATIONS)]
    salt: Annotated[str, Base64Bytes(SALT_MIN, SALT_MAX)]
    iv: Annotated[str, Base64Bytes(IV_BYTES, IV_BYTES)]


ArtifactId = Annotated[
    str,
    StringConstraints(min_length=1, max_length=ARTIFACT_ID_MAX),
    AfterValidator(_one_line),
    Field(description="artifact id"),
]
Content = Annotated[
    str,
    EntryContent(BLOB_MAX),
    AfterValidator(_not_empty),
    Field(
        description=f"the version's text (HTML or markdown), or for a protected version its base64 ciphertext; "
        f"at most {BLOB_MAX} bytes as UTF-8"
    ),
]
Title = Annotated[
    str,
    Trimmed(TITLE_MAX),
    Field(description=f"one line, at most {TITLE_MAX} characters; blank on a markdown artifact: its first heading"),
]
Description = Annotated[str, Trimmed(DESCRIPTION_MAX, lines=True)]
Label = Annotated[str, VersionLabel()]
Version = Annotated[int, WholeNumber(1, VERSION_MAX)]
SessionRef = Annotated[
    SessionId | None, Field(description="the session this is made in (over MCP, default: your active session)")
]
EnvelopeField = Annotated[
    Envelope | None,
    Field(
        description="protection: the envelope of a version encrypted on your machine (content is then its "
        "base64 ciphertext); hub-cli and the stdio bridge build it from a `password`"
    ),
]


class ArtifactPublish(Request):
    """`artifact_publish`: a new artifact, its version 1."""

    project_id: ProjectId
    title: Title | None = None
    kind: Annotated[
        Literal["html", "markdown", "diff"],
        Field(description="diff: the text of a unified diff (git diff, diff -u), never protected"),
    ]
    content: Content
    description: Description | None = None
    label: Label | None = None
    envelope: EnvelopeField = None
    session_id: SessionRef = None
    idempotency_key: IdempotencyKey | None = None


class ArtifactUpdate(Request):
    """`artifact_update`: a new version (sealing any live version first). An omitted envelope keeps
    the artifact's protection (a protected artifact then needs the new version's envelope);
    `envelope: null` makes the new version plain."""

    NULL_MEANS: ClassVar[frozenset[str]] = frozenset({"envelope"})

    artifact_id: ArtifactId
    content: Content
    envelope: EnvelopeField = None
    base_version: Annotated[
        Version | None,
        Field(description="the version your change is based on; another newest version is a conflict unless force"),
    ] = None
    force: bool = False
    label: Label | None = None
    session_id: SessionRef = None
    idempotency_key: IdempotencyKey | None = None


class ArtifactDraft(Request):
    """`artifact_draft`: hold the next version live, or change the live version in place."""

    NULL_MEANS: ClassVar[frozenset[str]] = frozenset({"envelope"})

    artifact_id: ArtifactId
    content: Content
    envelope: EnvelopeField = None
    force: Annotated[bool, Field(description="take over a version another session holds live")] = False
    label: Label | None = None
    session_id: SessionRef = None


class ArtifactGet(Request):
    """`artifact_get`, `GET /artifacts/:id`: the current sealed version, or `version`, or the live one."""

    artifact_id: ArtifactId
    version: Version | None = None
    live: Annotated[bool, Field(description="the live version when one is held (else the current)")] = False


class ArtifactRef(Request):
    """`artifact_versions`, `artifact_delete`, `/live`: one artifact."""

    artifact_id: ArtifactId


LIST_CURSOR_MAX = 80  # a float's repr, a separator and a 26-character id fit well inside
# What `service.encode_list_cursor` writes: the float's repr, `~`, the artifact id (lowercase).
LIST_CURSOR_PATTERN = f"^{FLOAT_REPR_PATTERN}~[0-7][0-9a-hjkmnp-tv-z]{{25}}$"
ListCursor = Annotated[
    str,
    StringConstraints(min_length=1, max_length=LIST_CURSOR_MAX, pattern=LIST_CURSOR_PATTERN),
    Field(description="the next_cursor of the previous page"),
]


class ArtifactList(Request):
    """`artifact_list`, `GET /artifacts`, `/projects/:id/artifacts`: newest updated first, paged by
    `cursor` (the `next_cursor` of the page before, null on the last)."""

    project_id: ProjectId | None = None
    session_id: Annotated[SessionId | None, Field(description="only artifacts published in this session")] = None
    limit: Annotated[int, Field(ge=1, le=LIST_MAX, description=f"at most this many, 1 to {LIST_MAX}")] = LIST_DEFAULT
    cursor: ListCursor | None = None
