"""What a path or query value's schema may say: its own module, so that the doc records
(`hubhttp.api.docs`) and the document's builder (`hubhttp.openapi`) both import it and not each other."""

from __future__ import annotations

from typing import Any

Schema = dict[str, Any]


def not_null(schema: Schema) -> Schema:
    """`schema` without `null` (in its type list or enum): what a path or query value can be."""
    out = dict(schema)
    kinds = out.get("type")
    if isinstance(kinds, list) and "null" in kinds:
        rest = [k for k in kinds if k != "null"]
        out["type"] = rest[0] if len(rest) == 1 else rest
    if isinstance(out.get("enum"), list):
        out["enum"] = [v for v in out["enum"] if v is not None]
    return out
