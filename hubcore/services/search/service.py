"""Search queries over the one index, confined to what the caller may see.

Visibility is decided in the query itself, from the live rows: a hit's project must be visible to
the caller (`access.visibility`), and each part adds what its own rows decide (`Part.search_scope`:
the sessions part shows a brain hit only while its session exists unpruned, and no hit tied to a
pruned session); a removed event or artifact took its documents in its own command. So a removal
the index has not caught up with yet (an undo window, an abandoned enrolment's event) can never
show a hit. A hit's own members come from its family's part (`Part.search_families`). This module
holds no other feature's SQL.

A query only reads: the index is brought up to date on the write side (`SearchIndex.run`), and a
query waits for the pass that covers the writes committed before it (`SearchIndex.settled`).
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from hubcore.caller import Caller
from hubcore.errors import invalid, not_found
from hubcore.parts.protocol import HitOf, Part
from hubcore.services.access import readable_project, visibility
from hubcore.services.core import Core
from hubcore.services.search.index import SearchIndex
from hubcore.services.search.query import Parsed, parse
from hubcore.services.search.rank import Ranking
from hubcore.services.search.semantic import LEXICAL_MAX, Searcher, SemanticIndex, fuse

if TYPE_CHECKING:  # the request models list the parts' families: they import the part catalog
    from hubcore.services.search.models import SearchRequest

log = logging.getLogger("hubcore.search")

ROWS_MAX = 1000  # index rows read per query: the spec allows 5,000; 1,000 keeps a query near 20 ms at 1M events

INDEX_COLUMNS = "d.id, d.family, d.key, d.project_id, d.session_id, d.snippet, d.meta, p.display_name"
PROJECT_JOIN = "JOIN projects p ON p.id = d.project_id"  # the hub's visibility rule reads `p`


@dataclass(frozen=True)
class QuerySql:
    """The query's SQL with every part's scope in it, made once from the hub's parts."""

    joins: str
    live: str
    hit: str  # ranking reads only ids and scores (up to ROWS_MAX rows)
    page: str  # the page's rows, read after the ranking, by id
    vector: str  # the semantic candidates pass the same visibility, scope and liveness
    session: str  # a row when `:sid` is a session the caller may search within ("": no part has sessions)
    families: Mapping[str, HitOf]

    @classmethod
    def of(cls, parts: Iterable[Part]) -> QuerySql:
        parts = tuple(parts)
        scopes = [s for part in parts if (s := part.search_scope()) is not None]
        joins = " ".join([PROJECT_JOIN, *(s.joins for s in scopes if s.joins)])
        columns = ", ".join([INDEX_COLUMNS, *(s.columns for s in scopes if s.columns)])
        live = " AND ".join([f"({s.live})" for s in scopes if s.live] or ["1"])
        families = {f.name: f.hit for part in parts for f in part.search_families()}
        return cls(
            joins=joins,
            live=live,
            families=families,
            session=next((s.session for s in scopes if s.session), ""),
            hit=f"""SELECT d.id, bm25(search_fts) AS score
FROM search_fts f JOIN search_docs d ON d.id = f.rowid {joins}
WHERE search_fts MATCH :match AND {{visible}} AND {{scope}} AND {live}
ORDER BY f.rowid DESC LIMIT :rows""",
            page=f"""SELECT {columns} FROM search_docs d {joins}
WHERE d.id IN (SELECT value FROM json_each(:ids))""",
            vector=f"""SELECT {columns}, v.vec
FROM search_vectors v JOIN search_docs d ON d.id = v.doc_id {joins}
WHERE v.doc_id IN (SELECT value FROM json_each(:ids)) AND {{visible}} AND {{scope}} AND {live}""",
        )


class SearchService:
    def __init__(self, core: Core, index: SearchIndex, semantic: SemanticIndex) -> None:
        self.core = core
        self.index = index
        self.semantic = semantic
        self.ranking = Ranking()
        self._sql: QuerySql | None = None

    @property
    def sql(self) -> QuerySql:
        """Made on the first query: the parts are assembled after this service is built."""
        if self._sql is None:
            self._sql = QuerySql.of(self.core.parts)
        return self._sql

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
            await self.core.store.read(lambda conn: _check_scope(conn, caller, req, self.sql.session))
        await self.index.settled()  # what was committed before this query is searchable
        near = await self._semantic() if req.mode == "semantic" else None
        hits, truncated = await self.core.store.read(lambda conn: self._hits(conn, caller, req, parsed, near))
        backend = "fts" if req.mode == "lexical" else "hybrid" if near is not None else "fts-fallback"
        page = {
            "query": req.q,
            "count": len(hits),
            "truncated": truncated,
            "took_ms": round((time.perf_counter() - started) * 1000, 3),
            "backend": backend,
            "groups": _groups(hits),
        }
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

    def _hits(
        self, conn: sqlite3.Connection, caller: Caller, req: SearchRequest, parsed: Parsed, near: Searcher | None = None
    ) -> tuple[list[dict[str, Any]], bool]:
        if req.project is not None:
            readable_project(conn, caller, req.project)
        sql = self.sql
        visible, params = visibility(caller)
        scope, scoped = _scope(conn, caller, req, visible, params, sql.session)
        bm25_sql = sql.hit.format(visible=visible, scope=scope)
        fill = {"joins": sql.joins, "visible": visible, "scope": scope, "live": sql.live}
        keep = req.limit + 1 if near is None else max(req.limit + 1, LEXICAL_MAX)  # the rows read in full
        ranked: list[int] = []
        budget = ROWS_MAX
        passes = {parsed.whole: False}  # whole words first; one pass when the two are alike
        passes.setdefault(parsed.prefix, True)
        for match, prefix in passes.items():
            if len(ranked) >= keep:
                break  # the page is whole-word hits only (and more matched: truncated)
            # Ranked in bm25's order, without its whole-index count where that costs (rank.py).
            rows = self.ranking.rank(
                conn,
                parsed,
                prefix=prefix,
                bm25_sql=bm25_sql,
                fill=fill,
                args={**params, **scoped, "match": match, "rows": budget},
                need=keep - len(ranked),
            )
            budget -= len(rows)
            seen = set(ranked)
            ranked.extend(r[0] for r in sorted(rows, key=lambda r: r[1]) if r[0] not in seen)
            if budget <= 0:
                break
        found = _rows(conn, sql.page, ranked[:keep])  # one read transaction: the same snapshot
        if near is not None:
            found = fuse(found, _neighbours(conn, near, req, sql.vector, visible, params, scope, scoped))
        truncated = budget <= 0 or len(ranked) > req.limit or len(found) > req.limit
        return [_hit(r, sql.families) for r in found[: req.limit]], truncated


def _rows(conn: sqlite3.Connection, sql: str, ids: list[int]) -> list[sqlite3.Row]:
    """The rows of `ids`, in that order."""
    if not ids:
        return []
    by_id = {r["id"]: r for r in conn.execute(sql, {"ids": orjson.dumps(ids).decode()})}
    return [by_id[i] for i in ids if i in by_id]


def _neighbours(
    conn: sqlite3.Connection,
    near: Searcher,
    req: SearchRequest,
    vector_sql: str,
    visible: str,
    params: dict[str, Any],
    scope: str,
    scoped: dict[str, Any],
) -> list[sqlite3.Row]:
    projects = (
        None
        if visible == "1" and req.project is None
        else [  # None: every project (the admin)
            r[0]
            for r in conn.execute(f"SELECT p.id FROM projects p WHERE {visible}", params)
            if req.project is None or r[0] == req.project
        ]
    )
    sql = vector_sql.format(visible=visible, scope=scope)

    def fetch(ids: list[int]) -> list[sqlite3.Row]:
        return conn.execute(sql, {**params, **scoped, "ids": orjson.dumps(ids).decode()}).fetchall()

    return near.neighbours(conn, req.q, projects, req.type, req.session_id, fetch)


def _check_scope(conn: sqlite3.Connection, caller: Caller, req: SearchRequest, session_sql: str) -> None:
    if req.project is not None:
        readable_project(conn, caller, req.project)
    _scope(conn, caller, req, *visibility(caller), session_sql)


def _scope(
    conn: sqlite3.Connection, caller: Caller, req: SearchRequest, visible: str, params: dict[str, Any], session_sql: str
) -> tuple[str, dict[str, Any]]:
    conds, args = ["1"], {}
    if req.project is not None:
        conds.append("d.project_id = :project")
        args["project"] = req.project
    if req.type is not None:
        conds.append("d.family = :family")
        args["family"] = req.type
    if req.session_id is not None:
        # The part that owns sessions says whether the caller may search within this one.
        row = (
            session_sql
            and conn.execute(session_sql.format(visible=visible), {**params, "sid": req.session_id}).fetchone()
        )
        if not row:
            raise not_found(f"session {req.session_id!r} not found")
        conds.append("d.session_id = :sid")
        args["sid"] = req.session_id
    return " AND ".join(conds), args


def _hit(row: sqlite3.Row, families: Mapping[str, HitOf]) -> dict[str, Any]:
    """A hit: the index's members, then its family's own (from the part that feeds it)."""
    hit: dict[str, Any] = {
        "type": row["family"],
        "project_id": row["project_id"],
        "project_display_name": row["display_name"],
        "snippet": row["snippet"],
    }
    own = families.get(row["family"])
    if own is not None:
        hit.update(own(row, orjson.loads(row["meta"])))
    return hit


def _groups(hits: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Hits by family, the families in the order of their best hit, hits in rank order inside."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for hit in hits:
        groups.setdefault(hit["type"], []).append(hit)
    return [{"type": family, "count": len(found), "hits": found} for family, found in groups.items()]
