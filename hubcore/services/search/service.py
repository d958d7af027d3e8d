"""Search queries over the one index, confined to what the caller may see.

Visibility is decided in the query itself, from the live rows: a hit's project must be visible to
the caller (`access.visibility`), a brain hit's session must exist unpruned, and a hit tied to a
pruned session is never shown; a removed event or artifact took its documents in its own command.
So a removal the index has not caught up with yet (an undo window, an abandoned enrolment's event)
can never show a hit.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from typing import Any

import orjson

from hubcore.caller import Caller
from hubcore.errors import invalid, not_found
from hubcore.services.access import readable_project, visibility
from hubcore.services.core import Core
from hubcore.services.search.index import SearchIndex
from hubcore.services.search.models import ROWS_MAX, SearchRequest
from hubcore.services.search.query import Parsed, parse
from hubcore.services.search.rank import Ranking
from hubcore.services.search.semantic import LEXICAL_MAX, Searcher, SemanticIndex, fuse

log = logging.getLogger("hubcore.search")

HIT_COLUMNS = """d.id, d.family, d.key, d.project_id, d.session_id, d.snippet, d.meta,
       p.display_name, s.name AS session_name, s.status AS session_status"""
HIT_JOINS = "JOIN projects p ON p.id = d.project_id LEFT JOIN sessions s ON s.id = d.session_id"
# A removed event or artifact takes its documents in its own command (triggers, migration v10),
# so only sessions are checked here.
HIT_LIVE = """(s.id IS NULL OR s.pruned_at IS NULL)
  AND (d.family != 'brain' OR s.id IS NOT NULL)"""
# Ranking reads only ids and scores (up to ROWS_MAX rows); the page's rows are read after, by id.
HIT_SQL = f"""SELECT d.id, bm25(search_fts) AS score
FROM search_fts f JOIN search_docs d ON d.id = f.rowid {HIT_JOINS}
WHERE search_fts MATCH :match AND {{visible}} AND {{scope}} AND {HIT_LIVE}
ORDER BY f.rowid DESC LIMIT :rows"""
PAGE_SQL = f"""SELECT {HIT_COLUMNS} FROM search_docs d {HIT_JOINS}
WHERE d.id IN (SELECT value FROM json_each(:ids))"""
# The semantic candidates (`semantic.Searcher`) pass the same visibility, scope and liveness.
VECTOR_SQL = f"""SELECT {HIT_COLUMNS}, v.vec
FROM search_vectors v JOIN search_docs d ON d.id = v.doc_id {HIT_JOINS}
WHERE v.doc_id IN (SELECT value FROM json_each(:ids)) AND {{visible}} AND {{scope}} AND {HIT_LIVE}"""


class SearchService:
    def __init__(self, core: Core, index: SearchIndex, semantic: SemanticIndex) -> None:
        self.core = core
        self.index = index
        self.semantic = semantic
        self.ranking = Ranking()

    async def search(self, caller: Caller, req: SearchRequest) -> dict[str, Any]:
        started = time.perf_counter()
        parsed = parse(req.q)
        scope = req.scope or ("project" if req.project else "global")
        if scope == "project" and req.project is None:
            raise invalid("scope=project needs project", field="project")
        if scope == "global" and req.project is not None:
            raise invalid("project is only for scope=project", field="project")
        if req.project is not None or req.session_id is not None:
            # A scope the caller may not see is refused before indexing or embedding writes anything.
            await self.core.store.read(lambda conn: _check_scope(conn, caller, req))
        try:
            await self.index.catch_up()  # what was committed before this query is searchable
        except Exception:  # the index is derived: a failed catch-up still answers from what it holds
            log.exception("search index catch-up failed")
        near = await self._semantic() if req.mode == "semantic" else None
        hits, truncated = await self.core.store.read(lambda conn: self._hits(conn, caller, req, parsed, near))
        backend = "fts" if req.mode == "lexical" else "hybrid" if near is not None else "fts-fallback"
        page = {"query": req.q, "count": len(hits), "truncated": truncated,
                "took_ms": round((time.perf_counter() - started) * 1000, 3),
                "backend": backend, "groups": _groups(hits)}
        if backend == "fts-fallback":
            # Why the answer is lexical: no model on this hub, or a model whose vectors are still
            # being written (a client retries the latter by itself).
            page["semantic"] = "unavailable" if self.semantic.unavailable else "warming"
        return page

    async def _semantic(self) -> Searcher | None:
        try:
            return await self.semantic.prepare()
        except Exception:  # derived data: a failure answers lexically (fts-fallback)
            log.exception("semantic search unavailable for this query")
            return None

    def _hits(self, conn: sqlite3.Connection, caller: Caller, req: SearchRequest,
              parsed: Parsed, near: Searcher | None = None) -> tuple[list[dict[str, Any]], bool]:
        if req.project is not None:
            readable_project(conn, caller, req.project)
        visible, params = visibility(caller)
        scope, scoped = _scope(conn, caller, req, visible, params)
        bm25_sql = HIT_SQL.format(visible=visible, scope=scope)
        fill = {"joins": HIT_JOINS, "visible": visible, "scope": scope, "live": HIT_LIVE}
        keep = req.limit + 1 if near is None else max(req.limit + 1, LEXICAL_MAX)  # the rows read in full
        ranked: list[int] = []
        budget = ROWS_MAX
        passes = {parsed.whole: False}  # whole words first; one pass when the two are alike
        passes.setdefault(parsed.prefix, True)
        for match, prefix in passes.items():
            if len(ranked) >= keep:
                break  # the page is whole-word hits only (and more matched: truncated)
            # Ranked in bm25's order, without its whole-index count where that costs (rank.py).
            rows = self.ranking.rank(conn, parsed, prefix=prefix, bm25_sql=bm25_sql, fill=fill,
                                     args={**params, **scoped, "match": match, "rows": budget},
                                     need=keep - len(ranked))
            budget -= len(rows)
            seen = set(ranked)
            ranked.extend(r[0] for r in sorted(rows, key=lambda r: r[1]) if r[0] not in seen)
            if budget <= 0:
                break
        found = _rows(conn, PAGE_SQL, ranked[:keep])  # one read transaction: the same snapshot
        if near is not None:
            found = fuse(found, _neighbours(conn, near, req, visible, params, scope, scoped))
        truncated = budget <= 0 or len(ranked) > req.limit or len(found) > req.limit
        return [_hit(r) for r in found[: req.limit]], truncated


def _rows(conn: sqlite3.Connection, sql: str, ids: list[int]) -> list[sqlite3.Row]:
    """The rows of `ids`, in that order."""
    if not ids:
        return []
    by_id = {r["id"]: r for r in conn.execute(sql, {"ids": orjson.dumps(ids).decode()})}
    return [by_id[i] for i in ids if i in by_id]


def _neighbours(conn: sqlite3.Connection, near: Searcher, req: SearchRequest, visible: str,
                params: dict[str, Any], scope: str, scoped: dict[str, Any]) -> list[sqlite3.Row]:
    projects = None if visible == "1" and req.project is None else [  # None: every project (the admin)
        r[0] for r in conn.execute(f"SELECT p.id FROM projects p WHERE {visible}", params)
        if req.project is None or r[0] == req.project]
    sql = VECTOR_SQL.format(visible=visible, scope=scope)

    def fetch(ids: list[int]) -> list[sqlite3.Row]:
        return conn.execute(sql, {**params, **scoped, "ids": orjson.dumps(ids).decode()}).fetchall()

    return near.neighbours(conn, req.q, projects, req.type, req.session_id, fetch)


def _check_scope(conn: sqlite3.Connection, caller: Caller, req: SearchRequest) -> None:
    if req.project is not None:
        readable_project(conn, caller, req.project)
    _scope(conn, caller, req, *visibility(caller))


def _scope(conn: sqlite3.Connection, caller: Caller, req: SearchRequest, visible: str,
           params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    conds, args = ["1"], {}
    if req.project is not None:
        conds.append("d.project_id = :project")
        args["project"] = req.project
    if req.type is not None:
        conds.append("d.family = :family")
        args["family"] = req.type
    if req.session_id is not None:
        row = conn.execute(f"""SELECT 1 FROM sessions s JOIN projects p ON p.id = s.project_id
                               WHERE s.id = :sid AND s.pruned_at IS NULL AND {visible}""",
                           {**params, "sid": req.session_id}).fetchone()
        if row is None:
            raise not_found(f"session {req.session_id!r} not found")
        conds.append("d.session_id = :sid")
        args["sid"] = req.session_id
    return " AND ".join(conds), args


def _hit(row: sqlite3.Row) -> dict[str, Any]:
    meta = orjson.loads(row["meta"])
    hit: dict[str, Any] = {"type": row["family"], "project_id": row["project_id"],
                           "project_display_name": row["display_name"], "snippet": row["snippet"]}
    if row["family"] == "feed":
        hit.update(event_id=meta["id"], event_kind=meta["event_kind"], actor=meta["actor"],
                   session_id=row["session_id"])
    elif row["family"] == "brain":
        hit.update(session_id=row["session_id"], path=meta["path"], session_name=row["session_name"],
                   session_status=row["session_status"])
    elif row["family"] == "kb":
        hit.update(path=meta["path"])
    else:
        hit.update(artifact_id=meta.get("id"), version=meta.get("version"), size_bytes=meta.get("size_bytes"))
    return hit


def _groups(hits: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Hits by family, the families in the order of their best hit, hits in rank order inside."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for hit in hits:
        groups.setdefault(hit["type"], []).append(hit)
    return [{"type": family, "count": len(found), "hits": found} for family, found in groups.items()]
