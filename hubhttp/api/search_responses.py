"""The search response models (OpenAPI document and the test harness's response check)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from hubcore.services.search.models import Family
from hubhttp.api.responses import ABSENT, Out


class SearchHit(Out):
    """One hit: the common fields, then the family's own (spec "Search hit")."""

    type: Family
    project_id: str
    project_display_name: str
    snippet: str = Field(max_length=200)
    event_id: str | None = None
    event_kind: str | None = None
    actor: str | None = None
    session_id: str | None = None
    path: str | None = None
    session_name: str | None = None
    session_status: Literal["active", "ended"] | None = None
    artifact_id: str | None = None
    version: int | None = None
    size_bytes: int | None = None


class SearchGroup(Out):
    type: Family
    count: int
    hits: list[SearchHit]


class SearchPage(Out):
    query: str
    count: int
    truncated: bool
    took_ms: float
    backend: Literal["fts", "hybrid", "fts-fallback"]
    groups: list[SearchGroup]
    # With fts-fallback only: "unavailable" (no model on this hub) or "warming" (the model's vectors
    # are still being written; ask again shortly).
    semantic: Literal["unavailable", "warming"] = ABSENT
