"""Response models of `/api/v1/backups` (the OpenAPI document's): loaded with the document, not
with the routes, as the other response models are (`hubhttp.api.responses`'s conventions)."""

from __future__ import annotations

from hubhttp.api.responses import Out


class BackupManifestOut(Out):
    schema_version: int
    created_at: str
    files: int
    bytes: int


class BackupOut(Out):
    directory: str
    path: str
    manifest: BackupManifestOut
    duration_ms: int
