"""Helpers of the knowledge base's service tests: calls through `hub.kb` with typed requests, and
what is stored (pages, the log, kept bytes, the feed), read through separate connections."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from hubcore.caller import Caller
from hubcore.hub import Hub
from hubcore.services.kb import models
from hubcore.services.requests import Request, parse

PROJECT = "web"


def kb_file(hub: Hub, project_id: str = PROJECT) -> Path:
    return hub.settings.data_path / "kb" / f"{project_id}.db"


def kb_rows(hub: Hub, sql: str, *params: Any, project_id: str = PROJECT) -> list[tuple[Any, ...]]:
    path = kb_file(hub, project_id)
    if not path.exists():
        return []
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return [tuple(r) for r in conn.execute(sql, params)]
    finally:
        conn.close()


def kb_events(hub: Hub, project_id: str = PROJECT) -> list[tuple[str, str, str]]:
    """(kind, actor, payload) of the project's knowledge base events, oldest first."""
    conn = sqlite3.connect(f"file:{hub.settings.data_path / 'hub.db'}?mode=ro", uri=True)
    try:
        return [
            tuple(r)
            for r in conn.execute(
                """SELECT kind, actor, payload FROM events WHERE project_id = ?
               AND (payload LIKE '%"action":"kb_%' OR kind = 'system') ORDER BY id""",
                (project_id,),
            )
        ]
    finally:
        conn.close()


def state(hub: Hub, project_id: str = PROJECT) -> tuple[Any, ...]:
    """Everything a refusal must leave as it was: pages, log, kept bytes, the feed."""
    return (
        kb_rows(hub, "SELECT path, version, trust FROM pages ORDER BY path", project_id=project_id),
        kb_rows(hub, "SELECT * FROM log ORDER BY id", project_id=project_id),
        kb_rows(hub, "SELECT version FROM blobs ORDER BY version", project_id=project_id),
        kb_events(hub, project_id),
        kb_file(hub, project_id).exists(),
    )


def req(model: type[Request], **fields: Any) -> Any:
    return parse(model, {"project_id": PROJECT, **fields})


async def put(hub: Hub, who: Caller, path: str, content: str, **fields: Any) -> dict[str, Any]:
    return await hub.kb.write(who, req(models.KbWrite, path=path, content=content, **fields))


async def get(hub: Hub, who: Caller, path: str, **fields: Any) -> dict[str, Any]:
    return await hub.kb.read(who, req(models.KbRead, path=path, **fields))


async def trust_of(hub: Hub, path: str) -> str:
    rows = await hub.kb.list(Caller.admin(), req(models.KbList, meta=True))
    return str(next(r["trust"] for r in rows["entries"] if r["path"] == path))


def page(title: str = "A page", body: str = "Some text.\n", **keys: str) -> str:
    """A page with a frontmatter block (`type: Concept`, the title, then `keys`) and a body."""
    lines = ["---", "type: Concept", f"title: {title}", *(f"{k}: {v}" for k, v in keys.items()), "---"]
    return "\n".join(lines) + "\n" + body
