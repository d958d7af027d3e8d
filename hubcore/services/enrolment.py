"""Self-enrolment: an agent without a token asks to join, and the human admits or refuses it.

`POST /api/v1/enrol` creates the agent as `pending` with its own token (shown once) and its personal
space, and puts an `enrol_request` approval in that space, waiting in the human's inbox (the notify
target fires as for any approval). Every ordinary route refuses the pending token exactly as an
unknown one (`AuthService` resolves active agents only); only `GET /api/v1/enrol/status` reads it.
Deciding the approval (the decision route, or `POST /enrol/:id/approve|refuse`) runs
`admit_or_refuse` in the decision's own command: admitted, the agent is active and the same token
works everywhere; refused, its token is gone. A request still pending after `enrol_pending_ttl_secs`
is abandoned: the agent, its personal space, the request event and its search row are removed (so is
a refused one: it is kept as a record for the same span). Limits: one pending request per peer,
`enrol_pending_max` pending requests in all (0: no cap), both `rate_limited`. `enrol = off` closes
both routes with `not_found`, as an absent feature reads.
"""

from __future__ import annotations

import ipaddress
import logging
import re
import secrets
import sqlite3
import unicodedata
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any

import anyio
import orjson
from pydantic import AfterValidator, ConfigDict, Field
from pydantic_core import PydanticCustomError

from hubcore.caller import Caller
from hubcore.errors import HubError, conflict, not_found
from hubcore.origin import peer_trusted
from hubcore.services import events as ev
from hubcore.services import validate
from hubcore.services.access import require_admin
from hubcore.services.changes import Effects, owner_key
from hubcore.services.core import Core
from hubcore.services.fields import LABEL_PATTERN, AgentId, DisplayName, Trimmed
from hubcore.services.periodic import repeat
from hubcore.services.posts import start_waiting
from hubcore.services.requests import Request
from hubcore.services.resolutions import Decision, DecisionPost, Note
from hubcore.tokens import new_token, token_hash

log = logging.getLogger("hubcore.enrolment")

KIND = "enrol_request"
WHY_MAX = 199  # "under 200 characters"
STATUS_WAIT_MAX = 60  # the spec's waits top out at 60 s; the status poll asks for 30
SWEEP_INTERVAL_SECS = 60.0
RETRY_AFTER_SECS = 60
SUFFIX_TRIES = 20  # <id>-2 .. <id>-20 before a random suffix
TOKEN_REFUSED = "the hub refused the bearer token (missing, unknown, refused or abandoned)"


def _reason(value: str) -> str:
    """Shown to the human as the request's text: not blank, no control character."""
    if not value:
        raise PydanticCustomError("blank", "must not be blank")
    if not validate.is_label(value):
        raise PydanticCustomError("label", "must not hold control characters")
    return value


class EnrolRequest(Request):
    """`POST /api/v1/enrol`: who asks and why. Members other than these are ignored (the body of
    an unauthenticated route is the caller's to fill; only these three are read)."""

    model_config = ConfigDict(strict=True, extra="ignore", frozen=True, defer_build=True)

    display_name: DisplayName
    why: Annotated[
        str,
        Trimmed(WHY_MAX),
        AfterValidator(_reason),
        Field(
            json_schema_extra={"pattern": LABEL_PATTERN},
            description=f"one line saying why you should be admitted (under {WHY_MAX + 1} characters)",
        ),
    ]
    suggested_id: Annotated[
        AgentId | None, Field(description="the agent id you would like (a slug); another is chosen when it is taken")
    ] = None


class EnrolDecision(Request):
    """`POST /api/v1/enrol/:id/approve` and `/refuse` (admin): an optional note for the agent."""

    agent_id: AgentId
    note: Note | None = None


@dataclass(frozen=True)
class Peer:
    """Who asks, for the per-peer limit: the socket peer, or the client a trusted proxy names."""

    address: str

    @classmethod
    def of(cls, socket_peer: str | None, forwarded_for: Sequence[str], trust_proxy: Iterable[str]) -> Peer:
        """The socket peer, unless it is a `trust_proxy` proxy that appended an X-Forwarded-For hop:
        then that last hop (the one the proxy itself wrote; earlier hops are the client's word). A
        hop that is not an IP address leaves the proxy's own address: all such clients share one."""
        peer = _canonical(socket_peer or "") or socket_peer or "unknown"
        if not peer_trusted(socket_peer, trust_proxy):
            return cls(peer)
        hops = [hop.strip() for value in forwarded_for for hop in value.split(",")]
        return cls(_canonical(hops[-1] if hops else "") or peer)


def _canonical(text: str) -> str | None:
    """An IP address in one spelling (an IPv4-mapped IPv6 address as its IPv4 one), None for
    anything else: `::ffff:192.0.2.1` and `192.0.2.1` are one peer."""
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    mapped = address.ipv4_mapped if isinstance(address, ipaddress.IPv6Address) else None
    return str(mapped or address)


def closed() -> HubError:
    return not_found("enrolment is closed on this hub (setting enrol = off)")


def token_refused() -> HubError:
    return HubError("unauthenticated", TOKEN_REFUSED)


_SLUG_DROP = re.compile(r"[^a-z0-9]+")
ID_MAX = 57  # validate.AGENT_ID_RE: one leading character and up to 56 more


def slug(text: str) -> str:
    """An agent id from a display name: accents dropped, lower-case letters and digits, any other
    run as one '-'."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return _SLUG_DROP.sub("-", ascii_text.lower()).strip("-")[:ID_MAX].strip("-")


def _taken(conn: sqlite3.Connection, agent_id: str) -> bool:
    if agent_id in validate.RESERVED_AGENT_IDS:
        return True
    return bool(
        conn.execute(
            "SELECT 1 FROM agents WHERE id = ? UNION ALL SELECT 1 FROM projects WHERE id = ?",
            (agent_id, validate.PERSONAL_PREFIX + agent_id),
        ).fetchone()
    )


def choose_id(conn: sqlite3.Connection, wanted: str) -> str:
    """`wanted` when free, else `wanted-2`, `wanted-3`, ..., else `wanted-<random>`."""
    base = wanted or "agent"
    if not _taken(conn, base):
        return base
    for n in range(2, SUFFIX_TRIES + 1):
        candidate = f"{base[: ID_MAX - len(str(n)) - 1]}-{n}"
        if not _taken(conn, candidate):
            return candidate
    while True:
        candidate = f"{base[: ID_MAX - 9]}-{secrets.token_hex(4)}"
        if not _taken(conn, candidate):
            return candidate


def _pending_rows(conn: sqlite3.Connection) -> list[sqlite3.Row]:
    """The waiting enrolment requests with their peer (a handful: `enrol_pending_max` bounds them)."""
    return conn.execute(
        """SELECT i.event_id, e.actor, json_extract(e.payload, '$.peer') AS peer FROM inbox i
           JOIN events e ON e.id = i.event_id WHERE i.kind = ? AND i.status = 'waiting'""",
        (KIND,),
    ).fetchall()


def _request_of(conn: sqlite3.Connection, agent_id: str) -> sqlite3.Row | None:
    row: sqlite3.Row | None = conn.execute(
        """SELECT i.event_id, i.status FROM inbox i WHERE i.project_id = ? AND i.kind = ? AND i.actor = ?
           ORDER BY i.event_id DESC LIMIT 1""",
        (validate.PERSONAL_PREFIX + agent_id, KIND, agent_id),
    ).fetchone()
    return row


def admit_or_refuse(conn: sqlite3.Connection, row: sqlite3.Row, decision: str, now: float) -> None:
    """The decision hook: runs inside the decision's command, after its answer event. The subject
    is read from the request event; it must be a pending agent asking in its own personal space."""
    event = conn.execute("SELECT actor, project_id, payload FROM events WHERE id = ?", (row["event_id"],)).fetchone()
    subject = orjson.loads(event["payload"]).get("agent_id") if event is not None else None
    agent = conn.execute("SELECT status FROM agents WHERE id = ?", (subject,)).fetchone() if subject else None
    if (
        event is None
        or agent is None
        or agent["status"] != "pending"
        or event["actor"] != subject
        or event["project_id"] != validate.PERSONAL_PREFIX + str(subject)
    ):
        raise conflict(f"approval {row['event_id']!r} is not the enrolment request of a pending agent")
    if decision == "approved":
        conn.execute("UPDATE agents SET status = 'active', token_created_at = ? WHERE id = ?", (now, subject))
    else:
        conn.execute("UPDATE agents SET token_hash = NULL, token_created_at = NULL WHERE id = ?", (subject,))


def remove_agent(
    conn: sqlite3.Connection, agent_id: str, purge: Callable[[sqlite3.Connection, str], None], effects: Effects
) -> None:
    """Forget a pending (abandoned or refused) agent: its personal space with everything in it (the
    request event, its inbox item, its search row: `purge` runs every part's share), its cursors, its
    grants, the agent row. A status poll waiting on the request is woken."""
    space = validate.PERSONAL_PREFIX + agent_id
    request = _request_of(conn, agent_id)
    if request is not None:
        effects.inbox(space, request["event_id"], owner=agent_id, kind=KIND, resolved=True)
    # The request and its answer, with their inbox item and search rows; then whatever else the parts hold.
    ev.remove_events(conn, [r[0] for r in conn.execute("SELECT id FROM events WHERE project_id = ?", (space,))])
    purge(conn, space)
    conn.execute("DELETE FROM projects WHERE id = ?", (space,))
    conn.execute("DELETE FROM actor_cursors WHERE actor = ?", (agent_id,))
    conn.execute("DELETE FROM grants WHERE agent_id = ?", (agent_id,))
    conn.execute("DELETE FROM agents WHERE id = ? AND status = 'pending'", (agent_id,))


Decide = Callable[[Caller, DecisionPost], Awaitable[dict[str, Any]]]


class EnrolmentService:
    def __init__(self, core: Core, *, decide: Decide, credentials_changed: Callable[[], None]) -> None:
        self.core = core
        self._decide = decide  # the decision route's own service: the hook runs in its command
        self._credentials_changed = credentials_changed

    @property
    def open(self) -> bool:
        return self.core.settings.enrol == "on"

    def peer(self, socket_peer: str | None, forwarded_for: Sequence[str]) -> Peer:
        return Peer.of(socket_peer, forwarded_for, self.core.settings.trust_proxy)

    async def enrol(self, req: EnrolRequest, peer: Peer) -> dict[str, Any]:
        """Ask to join -> {token, agent_id, status: "pending"}."""
        if not self.open:
            raise closed()
        await self.sweep()  # an abandoned request frees its peer's slot and its place under the cap
        settings, now, token = self.core.settings, self.core.now(), new_token()
        cap = settings.enrol_pending_max

        def write(conn: sqlite3.Connection) -> tuple[dict[str, Any], Effects]:
            pending = _pending_rows(conn)
            if any(r["peer"] == peer.address for r in pending):
                raise _limited("an enrolment request from this address is already waiting for the human")
            if cap and len(pending) >= cap:
                raise _limited(f"the hub holds {cap} enrolment requests waiting for the human (enrol_pending_max)")
            agent_id = choose_id(conn, req.suggested_id or slug(req.display_name))
            conn.execute(
                """INSERT INTO agents (id, display_name, status, created_at, enrol_note, token_hash,
                            token_created_at) VALUES (?, ?, 'pending', ?, ?, ?, ?)""",
                (agent_id, req.display_name, now, req.why, token_hash(token), now),
            )
            conn.execute(
                """INSERT INTO projects (id, display_name, owner_agent, created_at, personal_of)
                            VALUES (?, ?, ?, ?, ?)""",
                (validate.PERSONAL_PREFIX + agent_id, f"{req.display_name}'s space", agent_id, now, agent_id),
            )
            effects = Effects()
            payload = {"body": req.why, "agent_id": agent_id, "display_name": req.display_name, "peer": peer.address}
            summary = f"{req.display_name} asks to join as {agent_id}: {req.why}"[: ev.SUMMARY_MAX]
            request = ev.NewEvent(
                validate.PERSONAL_PREFIX + agent_id, KIND, agent_id, summary, payload, roots_thread=True
            )
            event = ev.insert_event(conn, request, now=now, cap=settings.events_per_project, effects=effects)
            start_waiting(conn, event, None, now, effects)
            return {"token": token, "agent_id": agent_id, "status": "pending"}, effects

        result: dict[str, Any] = await self.core.store.execute_effects(write)
        log.info("enrolment request from %s as agent %s", peer.address, result["agent_id"])
        return result

    async def status(self, token: str | None, wait: int) -> dict[str, Any]:
        """A pending token's standing: pending (after waiting up to `wait` seconds for the human),
        approved; unknown, refused and abandoned tokens are all the same 401."""
        if not self.open:
            raise closed()
        digest = token_hash(token) if token else None
        found = await self._standing(digest)
        if found is None or found[1] != "pending" or wait <= 0:
            return _status(found)
        agent_id = found[0]
        notifier = self.core.publisher.changes
        with notifier.waiter(lambda c: c.kind == KIND and c.resolved, [owner_key(agent_id)]) as waiter:
            found = await self._standing(digest)  # read after filing the waiter: no decision is missed
            if found is not None and found[1] == "pending" and not waiter.fired:
                with anyio.move_on_after(min(wait, STATUS_WAIT_MAX)):
                    await waiter.wait()
                found = await self._standing(digest)
        return _status(found)

    async def _standing(self, digest: str | None) -> tuple[str, str] | None:
        """(agent id, "active" | "pending") for a token, None when it names nobody usable here: no
        agent, a refused one (no token), or a request past its time to live."""
        if digest is None:
            return None
        oldest = self.core.now() - self.core.settings.enrol_pending_ttl_secs

        def read(conn: sqlite3.Connection) -> tuple[str, str] | None:
            row = conn.execute("SELECT id, status, created_at FROM agents WHERE token_hash = ?", (digest,)).fetchone()
            if row is None:
                return None
            if row["status"] == "pending":
                request = _request_of(conn, row["id"])
                if request is None or request["status"] != "waiting" or row["created_at"] <= oldest:
                    return None
            return str(row["id"]), str(row["status"])

        return await self.core.store.read(read)

    async def decide(self, caller: Caller, req: EnrolDecision, decision: Decision) -> dict[str, Any]:
        """The admin's approve or refuse -> {agent_id, status, event_id}: the approval decision,
        hook and all, on the agent's waiting request."""
        require_admin(caller, "deciding an enrolment request")
        request = await self.core.store.read(lambda conn: _request_of(conn, req.agent_id))
        if request is None or request["status"] != "waiting":
            raise not_found(f"no enrolment request of agent {req.agent_id!r} is waiting")
        answer = await self._decide(
            caller, DecisionPost(approval_id=request["event_id"], decision=decision, note=req.note)
        )
        self._credentials_changed()
        return {
            "agent_id": req.agent_id,
            "status": "approved" if decision == "approve" else "refused",
            "event_id": answer["event_id"],
        }

    def on_commit(self, effects: Effects) -> None:
        """A decided enrolment changes which token names which active agent: forget cached tokens."""
        if any(c.kind == KIND and c.resolved for c in effects.changes):
            self._credentials_changed()

    # -- the time to live ------------------------------------------------------------------------

    async def sweep(self) -> int:
        """Remove pending agents whose request is older than `enrol_pending_ttl_secs` (abandoned, or
        refused and kept that long as a record). Writes nothing when none is due."""
        oldest = self.core.now() - self.core.settings.enrol_pending_ttl_secs
        due_sql = "SELECT id FROM agents WHERE status = 'pending' AND created_at <= ? ORDER BY created_at LIMIT 500"
        due = await self.core.store.read(lambda conn: conn.execute(due_sql, (oldest,)).fetchall())
        if not due:
            return 0
        parts = self.core.parts

        def purge(conn: sqlite3.Connection, project_id: str) -> None:
            for part in parts:
                part.purge_rows(conn, project_id)

        def write(conn: sqlite3.Connection) -> tuple[int, Effects]:
            effects = Effects()
            rows = conn.execute(due_sql, (oldest,)).fetchall()
            for row in rows:
                remove_agent(conn, row["id"], purge, effects)
            return len(rows), effects

        removed: int = await self.core.store.execute_effects(write)
        for part in parts:  # files outside hub.db: a pending agent never wrote any, but a part may hold some
            for row in due:
                await part.after_delete(validate.PERSONAL_PREFIX + row["id"])
        log.info("enrolment: removed %d request(s) past enrol_pending_ttl_secs", removed)
        return removed

    async def run_sweeper(self, interval: float = SWEEP_INTERVAL_SECS) -> None:
        """Background task: remove abandoned requests every `interval` seconds until cancelled."""
        await repeat(self.sweep, interval, "enrolment sweep", log)


def _limited(message: str) -> HubError:
    return HubError("rate_limited", message, retryable=True, headers={"Retry-After": str(RETRY_AFTER_SECS)})


def _status(found: tuple[str, str] | None) -> dict[str, Any]:
    if found is None:
        raise token_refused()
    agent_id, status = found
    return {"status": "approved", "agent_id": agent_id} if status == "active" else {"status": "pending"}
