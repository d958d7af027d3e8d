"""`ArtifactService`: publish, update, draft, reads and delete (see the package docstring).

Every write is one command on the hub store's actor (visibility, the password policy, the
idempotency replay, the base-version and live-session checks, the event ceiling, the rows and the
event together), wrapped by the blob store: the body is written and staged before the command,
and a blob the command left unreferenced (a refusal, a replay, a body a live draft or a delete
dropped) is removed after the commit.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import anyio
import orjson

from hubcore.caller import Caller
from hubcore.errors import conflict, invalid, not_found, unavailable
from hubcore.services import events as ev
from hubcore.services import idempotency as idem
from hubcore.services import ids
from hubcore.services.access import readable_project, visibility
from hubcore.services.artifacts import diffs, reviews, rows
from hubcore.services.artifacts.models import (
    TAG_BYTES,
    TITLE_MAX,
    ArtifactDraft,
    ArtifactGet,
    ArtifactList,
    ArtifactPublish,
    ArtifactRef,
    ArtifactUpdate,
    Envelope,
    decoded_base64,
)
from hubcore.services.changes import Effects
from hubcore.services.core import Core
from hubcore.store.blobs import BlobStore

READ_ATTEMPTS = 5  # a read racing live drafts retries; each draft replaces the body it read


@dataclass(frozen=True)
class Body:
    """A version's body as it will be stored: its text, its envelope (JSON text) or None, a diff's
    summary (JSON text) and the line comments it moves or marks outdated (`reviews.Moves`)."""

    content: str
    envelope: str | None
    diff: str | None = None
    moves: reviews.Moves | None = None

    @property
    def data(self) -> bytes:
        return self.content.encode()


@dataclass
class Outcome:
    """What a write command did: its result, and whether it referenced the staged body."""

    result: dict[str, Any]
    stored: bool = False
    dropped: tuple[str, ...] = ()


def body_of(content: str, envelope: Envelope | None, kind: str = "html") -> Body:
    """The body to store; a protected one's content must be base64 ciphertext with its tag; a
    diff's is parsed here, once (a non-diff is refused naming its first bad line)."""
    if kind == "diff":
        if envelope is not None:
            raise invalid(
                "envelope: a diff artifact cannot be password protected (the hub reads it to show the "
                "review); publish it plain",
                field="envelope",
            )
        return Body(content, None, orjson.dumps(diffs.summary(diffs.parse(content))).decode())
    if envelope is None:
        return Body(content, None)
    raw = decoded_base64(content)
    if raw is None or len(raw) < TAG_BYTES:
        raise invalid(
            f"content: a protected version's content is the base64 ciphertext (at least {TAG_BYTES} "
            "bytes: AES-256-GCM output with its tag)",
            field="content",
        )
    return Body(content, orjson.dumps(envelope.model_dump()).decode())


def check_policy(project: sqlite3.Row, protected: bool) -> None:
    """The project's artifact password policy, with an error that says what to send."""
    policy = project["artifact_password_policy"]
    if policy == "required" and not protected:
        raise invalid(
            f"project {project['id']!r} requires password-protected artifacts (policy 'required'): "
            "send a `password` through hub-cli or the stdio bridge, which encrypt it on your machine, "
            "or send the base64 ciphertext as content with its `envelope`",
            field="envelope",
            policy=policy,
        )
    if policy == "off" and protected:
        raise invalid(
            f"project {project['id']!r} takes no password-protected artifacts (policy 'off'): "
            "send the content as plain text without a password or envelope",
            field="envelope",
            policy=policy,
        )


def protection(req: ArtifactUpdate | ArtifactDraft, current: sqlite3.Row) -> Envelope | None:
    """The envelope of an update's or draft's new body. An omitted envelope keeps the artifact's
    protection: a protected artifact then needs the new version's own envelope (an envelope is
    never reused: its iv may encrypt one body only); `envelope: null` makes the version plain."""
    if req.envelope is not None or "envelope" in req.model_fields_set:
        return req.envelope
    if current["envelope"] is not None:
        raise invalid(
            "the artifact is password protected: send the new version's `envelope` (hub-cli and the "
            "stdio bridge build it from a `password`), or `envelope: null` to make it plain",
            field="envelope",
        )
    return None


def encode_list_cursor(row: sqlite3.Row) -> str:
    """A position in the listing's order (updated_at, then id, both descending): the float's repr
    (it round-trips exactly) and the id."""
    return f"{float(row['updated_at'])!r}~{row['id']}"


def decode_list_cursor(cursor: str) -> tuple[float, str]:
    at, sep, artifact_id = cursor.partition("~")
    try:
        value = float(at)
    except ValueError:
        value = math.nan
    if (
        not sep
        or not math.isfinite(value)
        or not ids.ID_RE.match(artifact_id.upper())
        or artifact_id != artifact_id.lower()
    ):
        raise invalid("cursor is not one this listing issued", field="cursor")
    return value, artifact_id


def viewer_url(public_url: str | None, artifact_id: str, version: int) -> str:
    """The artifact's page at a version, with no credential; relative unless HUB_PUBLIC_URL is set."""
    path = f"artifacts/{artifact_id}?version={version}"
    return f"{public_url.rstrip('/')}/{path}" if public_url else path


class ArtifactService:
    def __init__(self, core: Core, blobs: BlobStore) -> None:
        self.core = core
        self.blobs = blobs
        self.touched: set[str] = set()  # artifacts written since the search index last asked (after commit)

    # -- writes ----------------------------------------------------------------------------------

    async def publish_artifact(self, caller: Caller, req: ArtifactPublish) -> dict[str, Any]:
        """A new artifact at version 1; `published <title>` in the feed. Returns {artifact_id, version}."""
        body = await anyio.to_thread.run_sync(body_of, req.content, req.envelope, req.kind)
        title = req.title or ""
        if not title and req.kind == "markdown" and body.envelope is None:
            title = rows.heading_of(req.content)[:TITLE_MAX]
        if not title:
            raise invalid(
                "title: blank, and the content has no heading to take it from (a markdown artifact's "
                "first heading is its title when the title is blank)",
                field="title",
            )
        now, cap, actor = self.core.now(), self.core.settings.events_per_project, caller.actor

        def write(conn: sqlite3.Connection, digest: str) -> tuple[Outcome, Effects]:
            project = readable_project(conn, caller, req.project_id)
            effects = Effects()
            earlier = idem.replayed(conn, actor, "artifact:publish", req.idempotency_key, req.project_id)
            if earlier is not None:
                return Outcome(earlier), effects
            check_policy(project, body.envelope is not None)
            artifact_id = ids.mint(conn, now).lower()
            conn.execute(
                """INSERT INTO artifacts (id, project_id, title, kind, description, actor, session_id, version,
                   created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?, ?)""",
                (artifact_id, req.project_id, title, req.kind, req.description or "", actor, req.session_id, now, now),
            )
            _insert_version(conn, artifact_id, 1, digest, body, req.label, actor, req.session_id, now)
            _event(conn, req.project_id, actor, "published", title, artifact_id, 1, req.session_id, now, cap, effects)
            result = {"artifact_id": artifact_id, "version": 1}
            idem.remember(
                conn, actor, "artifact:publish", req.idempotency_key, req.project_id, req.project_id, result, now
            )
            return Outcome(result, stored=True), effects

        return await self._write(body, write)

    async def update(self, caller: Caller, req: ArtifactUpdate) -> dict[str, Any]:
        """A new version; a live version is sealed first. A stale `base_version` is a conflict
        naming the newest version unless `force`. `updated <title>` in the feed."""
        now, cap, actor = self.core.now(), self.core.settings.events_per_project, caller.actor
        prepared = await self._prepare(caller, req)

        def write(conn: sqlite3.Connection, digest: str) -> tuple[Outcome, Effects]:
            a, body = _checked(conn, caller, req, prepared)
            effects = Effects()
            earlier = idem.replayed(conn, actor, "artifact:update", req.idempotency_key, req.artifact_id)
            if earlier is not None:
                return Outcome(earlier), effects
            newest = rows.newest_version(a)
            if req.base_version is not None and req.base_version != newest and not req.force:
                raise conflict(
                    f"stale base_version {req.base_version}: artifact {req.artifact_id!r} is at version "
                    f"{newest}; read it again, or pass force: true",
                    current_version=newest,
                )
            if a["live_version"] is not None:  # seal: the current version moves onto the live one
                effects.artifact_live(a["project_id"], a["id"], newest, 0)
            version = newest + 1
            _insert_version(conn, a["id"], version, digest, body, req.label, actor, req.session_id, now)
            if body.moves is not None:
                reviews.apply_moves(conn, a["id"], body.moves, version, now)
            conn.execute(
                """UPDATE artifacts SET version = ?, live_version = NULL, live_rev = 0, live_session = NULL,
                            live_at = NULL, updated_at = ? WHERE id = ?""",
                (version, now, a["id"]),
            )
            _event(
                conn, a["project_id"], actor, "updated", a["title"], a["id"], version, req.session_id, now, cap, effects
            )
            result = {"artifact_id": a["id"], "version": version}
            idem.remember(conn, actor, "artifact:update", req.idempotency_key, a["id"], a["project_id"], result, now)
            return Outcome(result, stored=True), effects

        return await self._write(prepared, write, mutates=True)

    async def draft(self, caller: Caller, req: ArtifactDraft) -> dict[str, Any]:
        """Hold the next version live (minted on the first draft), or change the live version in
        place with a rising `live_rev`; another session's live version is a conflict unless
        `force`. No feed event (the sealing update writes one); an `artifact-live` stream message."""
        now = self.core.now()
        prepared = await self._prepare(caller, req)
        public_url = self.core.settings.public_url

        def write(conn: sqlite3.Connection, digest: str) -> tuple[Outcome, Effects]:
            a, body = _checked(conn, caller, req, prepared)
            effects, dropped = Effects(), tuple[str, ...]()
            live = a["live_version"]
            if live is None:
                live, rev = int(a["version"]) + 1, 1
                _insert_version(conn, a["id"], live, digest, body, req.label, caller.actor, req.session_id, now)
            else:
                if a["live_session"] != req.session_id and not req.force:
                    raise conflict(
                        f"artifact {a['id']!r} version {live} is held live by another session "
                        f"({a['live_session'] or 'none'}); pass force: true to take it over",
                        live_version=live,
                        live_session=a["live_session"],
                    )
                rev = int(a["live_rev"]) + 1
                dropped = _mutate_version(
                    conn, a["id"], live, digest, body, req.label, caller.actor, req.session_id, now
                )
            conn.execute(
                """UPDATE artifacts SET live_version = ?, live_rev = ?, live_session = ?, live_at = ?,
                            updated_at = ? WHERE id = ?""",
                (live, rev, req.session_id, now, now, a["id"]),
            )
            effects.artifact_live(a["project_id"], a["id"], live, rev)
            result = {
                "artifact_id": a["id"],
                "live_version": live,
                "live_rev": rev,
                "viewer_url": viewer_url(public_url, a["id"], live),
            }
            return Outcome(result, stored=True, dropped=dropped), effects

        return await self._write(prepared, write, mutates=True)

    async def delete(self, caller: Caller, req: ArtifactRef) -> dict[str, Any]:
        """Remove the artifact and its history (rows, then the blobs no version references any
        more); a `deleted` event (exempt from the ceiling: a removal is never refused for it)."""
        now, actor = self.core.now(), caller.actor

        def write(conn: sqlite3.Connection) -> tuple[tuple[str, ...], Effects]:
            a = rows.readable(conn, caller, req.artifact_id)
            digests = tuple(rows.digests_of(conn, "a.id = ?", (a["id"],)))
            conn.execute("DELETE FROM artifact_versions WHERE artifact_id = ?", (a["id"],))
            conn.execute("DELETE FROM artifacts WHERE id = ?", (a["id"],))
            effects = Effects()
            ev.insert_event(
                conn,
                ev.NewEvent(
                    a["project_id"],
                    "artifact",
                    actor,
                    f"deleted {a['title']}",
                    {"action": "deleted", "artifact_id": a["id"], "title": a["title"]},
                    exempt=True,
                ),
                now=now,
                cap=0,
                effects=effects,
            )
            return digests, effects

        async with self.blobs.gate.mutating():
            digests = await self.core.store.execute_effects(write)
        await self.drop(digests)
        return {"ok": True}

    # -- reads -----------------------------------------------------------------------------------

    async def get(self, caller: Caller, req: ArtifactGet) -> dict[str, Any]:
        """One version with its content: `version`, else the live one when `live` and one is held,
        else the current sealed version (what the public page serves)."""

        def read(conn: sqlite3.Connection) -> dict[str, Any] | None:
            a = rows.readable(conn, caller, req.artifact_id)
            number = req.version or (a["live_version"] if req.live and a["live_version"] else a["version"])
            v = rows.version_row(conn, a["id"], number)
            if v is None:
                raise not_found(f"version {number} of artifact {req.artifact_id!r} not found")
            try:
                content = self.blobs.read(v["sha256"]).decode()
            except FileNotFoundError:
                return None  # a live draft replaced this body after the row was read: read again
            return rows.render_artifact(a, v, content)

        for _ in range(READ_ATTEMPTS):
            found = await self.core.store.read(read)
            if found is not None:
                return found
        raise unavailable(f"artifact {req.artifact_id!r} is changing too fast to be read; try again")

    async def versions(self, caller: Caller, req: ArtifactRef) -> dict[str, Any]:
        """Every version, oldest first (the live one marked `live`)."""

        def read(conn: sqlite3.Connection) -> dict[str, Any]:
            a = rows.readable(conn, caller, req.artifact_id)
            found = conn.execute(
                f"""SELECT {rows.VERSION_COLUMNS} FROM artifact_versions v WHERE v.artifact_id = ?
                                     ORDER BY v.version""",
                (a["id"],),
            ).fetchall()
            return {"artifact_id": a["id"], "versions": [rows.render_version(v, a["live_version"]) for v in found]}

        return await self.core.store.read(read)

    async def list(self, caller: Caller, req: ArtifactList) -> dict[str, Any]:
        """Artifacts of the projects the caller sees (one project, one session), newest updated
        first; `next_cursor` continues after the page (null on the last)."""
        after = None if req.cursor is None else decode_list_cursor(req.cursor)  # refused before any read

        def read(conn: sqlite3.Connection) -> dict[str, Any]:
            if req.project_id is not None:
                readable_project(conn, caller, req.project_id)
            cond, params = visibility(caller)
            where = [cond]
            if req.project_id is not None:
                where.append("a.project_id = :project")
            if req.session_id is not None:
                where.append("a.session_id = :session")
            if after is not None:
                where.append("(a.updated_at < :c_at OR (a.updated_at = :c_at AND a.id < :c_id))")
                params.update(c_at=after[0], c_id=after[1])
            found = conn.execute(
                f"""SELECT {rows.ARTIFACT_COLUMNS}, {rows.VERSION_COLUMNS} FROM artifacts a
                    JOIN projects p ON p.id = a.project_id
                    JOIN artifact_versions v ON v.artifact_id = a.id AND v.version = a.version
                    WHERE {" AND ".join(where)} ORDER BY a.updated_at DESC, a.id DESC LIMIT :limit""",
                {**params, "project": req.project_id, "session": req.session_id, "limit": req.limit + 1},
            ).fetchall()
            page = found[: req.limit]
            more = len(found) > req.limit
            return {
                "artifacts": [rows.render_summary(r, r) for r in page],
                "next_cursor": encode_list_cursor(page[-1]) if more and page else None,
            }

        return await self.core.store.read(read)

    async def live(self, caller: Caller, req: ArtifactRef) -> dict[str, Any]:
        """`{state, version, live_rev, actor, session_id}`: the live version (else the current one)
        and who holds it; `state` is `live`, `idle` or `sealed` (DESIGN section 7)."""
        now = self.core.now()

        def read(conn: sqlite3.Connection) -> dict[str, Any]:
            a = rows.readable(conn, caller, req.artifact_id)
            active_at = rows.session_activity(conn, a["live_session"])
            state = rows.live_state(a, active_at, now)
            if state == "sealed":
                return {
                    "state": state,
                    "version": a["version"],
                    "live_rev": 0,
                    "actor": a["actor"],
                    "session_id": a["session_id"],
                }
            v = rows.version_row(conn, a["id"], a["live_version"])
            return {
                "state": state,
                "version": a["live_version"],
                "live_rev": a["live_rev"],
                "actor": v["actor"] if v else None,
                "session_id": a["live_session"],
            }

        return await self.core.store.read(read)

    async def raw(self, caller: Caller, req: ArtifactGet) -> tuple[str, dict[str, Any] | None]:
        """The stored text of a version (as `get` picks it) and its envelope (None when plain):
        `/raw` sends the text, or for a protected version `{envelope, ciphertext}` as JSON."""
        found = await self.get(caller, req)
        return found["content"], found["envelope"]

    # -- the machinery ---------------------------------------------------------------------------

    async def _prepare(self, caller: Caller, req: ArtifactUpdate | ArtifactDraft) -> Body:
        """The new body, with the protection the artifact's current version decides for an
        omitted envelope (read once here; the command checks it again). A diff's update also
        works out where the open line comments on the current version go (`reviews.moves`)."""

        def read(conn: sqlite3.Connection) -> Body:
            a = rows.readable(conn, caller, req.artifact_id)
            current = rows.version_row(conn, a["id"], rows.newest_version(a))
            body = body_of(req.content, protection(req, current) if current is not None else req.envelope, a["kind"])
            if a["kind"] == "diff" and isinstance(req, ArtifactUpdate):
                body = replace(body, moves=reviews.moves(conn, self.blobs, a, req.content))
            return body

        return await self.core.store.read(read)

    async def _write(
        self, body: Body, write: Callable[[sqlite3.Connection, str], tuple[Outcome, Effects]], *, mutates: bool = False
    ) -> dict[str, Any]:
        """Stage the body, run the command, then remove what it left unreferenced. A write that
        may replace a live body or seal one (`mutates`) waits while a backup holds the blobs."""
        leftover: tuple[str, ...] = ()
        try:
            async with self.blobs.staged(body.data) as digest:
                leftover = (digest,)  # a refused command leaves its staged body unreferenced
                if mutates:
                    async with self.blobs.gate.mutating():
                        outcome = await self.core.store.execute_effects(lambda conn: write(conn, digest))
                else:
                    outcome = await self.core.store.execute_effects(lambda conn: write(conn, digest))
                leftover = outcome.dropped if outcome.stored else (digest, *outcome.dropped)
                self.touched.add(outcome.result["artifact_id"])
        finally:
            if leftover:
                with anyio.CancelScope(shield=True):
                    await self.drop(leftover)
        return outcome.result

    async def drop(self, digests: Sequence[str]) -> int:
        """Remove the blobs among `digests` no version references (after the commit that dropped them)."""

        async def referenced(candidates: list[str]) -> set[str]:
            return await self.core.store.read(lambda conn: rows.referenced(conn, candidates))

        return await self.blobs.remove_unreferenced(digests, referenced)


def _checked(
    conn: sqlite3.Connection, caller: Caller, req: ArtifactUpdate | ArtifactDraft, prepared: Body
) -> tuple[sqlite3.Row, Body]:
    """The artifact row, re-checked inside the command: visibility, the protection the prepared
    body assumed, and the project's password policy."""
    a = rows.readable(conn, caller, req.artifact_id)
    current = rows.version_row(conn, a["id"], rows.newest_version(a))
    if current is not None:
        protection(req, current)
    project = conn.execute("SELECT * FROM projects WHERE id = ?", (a["project_id"],)).fetchone()
    check_policy(project, prepared.envelope is not None)
    return a, prepared


def _insert_version(
    conn: sqlite3.Connection,
    artifact_id: str,
    version: int,
    digest: str,
    body: Body,
    label: str | None,
    actor: str,
    session_id: str | None,
    now: float,
) -> None:
    conn.execute(
        """INSERT INTO artifact_versions (artifact_id, version, sha256, size_bytes, label, envelope, actor, session_id,
           created_at, updated_at, diff) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
        (
            artifact_id,
            version,
            digest,
            len(body.data),
            label or None,
            body.envelope,
            actor,
            session_id,
            now,
            now,
            body.diff,
        ),
    )


def _mutate_version(
    conn: sqlite3.Connection,
    artifact_id: str,
    version: int,
    digest: str,
    body: Body,
    label: str | None,
    actor: str,
    session_id: str | None,
    now: float,
) -> tuple[str, ...]:
    """Change a live version in place; returns the body it dropped (when it changed)."""
    old = conn.execute(
        "SELECT sha256, label FROM artifact_versions WHERE artifact_id = ? AND version = ?", (artifact_id, version)
    ).fetchone()
    conn.execute(
        """UPDATE artifact_versions SET sha256 = ?, size_bytes = ?, label = ?, envelope = ?, actor = ?, session_id = ?,
           updated_at = ?, diff = ? WHERE artifact_id = ? AND version = ?""",
        (
            digest,
            len(body.data),
            label if label is not None else old["label"],
            body.envelope,
            actor,
            session_id,
            now,
            body.diff,
            artifact_id,
            version,
        ),
    )
    return (old["sha256"],) if old["sha256"] != digest else ()


def _event(
    conn: sqlite3.Connection,
    project_id: str,
    actor: str,
    action: str,
    title: str,
    artifact_id: str,
    version: int,
    session_id: str | None,
    now: float,
    cap: int,
    effects: Effects,
) -> None:
    """The `artifact` event of a publish or update (under the event ceiling)."""
    ev.insert_event(
        conn,
        ev.NewEvent(
            project_id,
            "artifact",
            actor,
            f"{action} {title}",
            {"action": action, "artifact_id": artifact_id, "version": version, "title": title},
            session_id,
        ),
        now=now,
        cap=cap,
        effects=effects,
    )
