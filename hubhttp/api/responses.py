"""Response models: what each /api/v1 route answers, for the OpenAPI document.

The services return plain dicts; these models state their shape once, for the document only (no
response is validated on its way out). A member a service always sends is required, one that may
be null says so, one sent only sometimes (a truncated handoff's flag, an item's deadline) has a
default and is not required; every object whose members are fixed is closed
(`additionalProperties: false`). tests/openapi_check.py checks every response the test harness
receives against the document, so a route that forgets a member or invents one fails the test that
got it: either the route or its model is then wrong, and the fix is never a looser model.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

from hubcore.services.events import KINDS
from hubcore.services.inbox import Status
from hubcore.services.projects import PasswordPolicy

Kind = Literal[KINDS]  # type: ignore[valid-type]  # the event kinds, from the events service's tuple
# Members sent only sometimes take this default: absent, never null.
ABSENT: Any = None


class Out(BaseModel):
    model_config = ConfigDict(extra="forbid")


# -- sessions and brains -------------------------------------------------------------------------


class Lineage(Out):
    kind: Literal["adopted", "forked"]
    from_session_id: str | None
    from_owner: str | None


class Session(Out):
    session_id: str
    project_id: str
    name: str
    owner: str
    status: Literal["active", "ended"]
    handoff: str | None
    lineage: Lineage | None
    created_at: str
    ended_at: str | None
    last_activity_at: str
    brain_bytes: int | None
    handoff_truncated: Literal[True] = ABSENT  # a listing cut the handoff to its first 200 characters


class SessionDetail(Session):
    events: int
    last_event: str | None


class SessionPage(Out):
    sessions: list[Session]
    truncated: bool


class BrainChild(Out):
    path: str
    type: Literal["file", "key", "dir"]
    size_bytes: int


class BrainLevel(Out):
    path: str
    entries: list[BrainChild]
    truncated: bool
    session_id: str


class BrainEntry(Out):
    path: str
    type: Literal["file", "key"]
    content: str
    version: str
    size_bytes: int
    written_at: str | None
    session_id: str


class ReplayCall(Out):
    at: str
    tool: str
    arguments: str
    outcome: str


class Replay(Out):
    session_id: str
    events: list[ReplayCall]


# -- projects and feeds --------------------------------------------------------------------------


class Project(Out):
    id: str
    display_name: str
    owner_agent: str | None
    created_at: str
    unseen_events: int
    is_personal: bool
    confidential: bool
    artifact_password_policy: PasswordPolicy


class ProjectList(Out):
    projects: list[Project]


class Event(Out):
    id: str
    project_id: str
    kind: Kind
    actor: str
    summary: str
    payload: dict[str, Any]
    session_id: str | None
    thread_id: str | None
    created_at: str


class FeedPage(Out):
    events: list[Event]
    next_since: str | None
    next_before: str | None


class ProjectFeedPage(FeedPage):
    last_seen: str | None


class FeedSeen(Out):
    project_id: str
    last_seen: str | None
    advanced: bool


class IdeaPosted(Out):
    id: str


class Stats(Out):
    """A count no part in the hub provides is null, never a made-up zero."""

    events: int
    artifacts: int | None
    sessions: int | None
    kb_pages: int | None
    agents_active: int
    threads: int
    agents_written: int
    disk_bytes: int | None


# -- the inbox and Home --------------------------------------------------------------------------


class Answer(Out):
    body: str | None  # a question that expired unanswered holds the hub's answer, with no body
    actor: str
    event_id: str
    answered_at: str
    value: dict[str, Any] = ABSENT  # a form question's structured answer


class ReviewComment(Out):
    id: str
    file: str | None
    side: str | None
    line: int | None
    end_line: int | None
    body: str
    author: str


class Review(Out):
    artifact_id: str
    version: int
    verdict: Literal["approved", "changes_requested"]
    comments: list[ReviewComment]
    open_comments: int
    truncated: bool


class Decision(Out):
    decision: str
    note: str | None
    actor: str
    event_id: str
    decided_at: str
    review: Review = ABSENT  # an approval naming a diff artifact (issue 29)


class Item(Out):
    event_id: str
    project_id: str
    project_display_name: str
    kind: Kind
    actor: str
    summary: str
    payload: dict[str, Any]
    status: Status
    created_at: str
    updated_at: str
    answer: Answer | None = ABSENT  # a question's: null until answered
    decision: Decision | None = ABSENT  # an approval's (or enrolment's): null until decided
    expires_at: str = ABSENT  # an item with a deadline
    on_expiry: str | None = ABSENT  # what the hub decides at the deadline; a question's is null
    expired: bool = ABSENT
    delivered_at: str | None = ABSENT  # a waiting kind's: when the resolution reached the asking agent
    actor_seen_at: str | None = ABSENT  # a waiting kind's: the asking agent's last call (its presence)


class ItemList(Out):
    items: list[Item]
    total: int  # every item the filters match, whatever the page
    next_cursor: str | None  # the cursor to the next page; null on the last


class Marked(Out):
    event_id: str
    status: Status
    changed: bool


class MarkedAll(Out):
    marked: int


class Resolved(Out):
    """An answer or a decision: the event appended to the question's or approval's thread."""

    event_id: str


class Node(Out):
    host: str
    mode: Literal["tls", "loopback", "network"]


class Volume(Out):
    used_bytes: int | None
    capacity_bytes: int | None
    free_bytes: int | None


class Prunable(Out):
    sessions: int | None
    bytes: int | None


class RecentEvent(Event):
    project_display_name: str


class Unseen(Out):
    project_id: str
    project_display_name: str
    unseen_events: int


class Home(Out):
    unread: int
    waiting: int
    waiting_items: list[Item]
    agents_active: int
    first_run: bool  # no agent has called this hub yet
    last_event_at: str | None
    recent: list[RecentEvent]
    unseen: list[Unseen]
    node: Node
    storage: Volume
    prunable: Prunable


# -- agents --------------------------------------------------------------------------------------


class Agent(Out):
    id: str
    display_name: str
    status: str
    personal_project_id: str
    created_at: str
    last_seen_at: str | None
    has_token: bool
    enrol_note: str = ABSENT  # an agent that asked to enrol


class AgentList(Out):
    agents: list[Agent]


class Token(Out):
    token: str
    created_at: str


class Grant(Out):
    agent_id: str
    project_id: str
    created_at: str


class GrantList(Out):
    grants: list[Grant]


class EnrolAccepted(Out):
    token: str  # the pending token, shown once; it works everywhere once the human admits the agent
    agent_id: str
    status: Literal["pending"]


class EnrolStatus(Out):
    status: Literal["pending", "approved"]
    agent_id: str = ABSENT  # once approved


class EnrolDecided(Out):
    agent_id: str
    status: Literal["approved", "refused"]
    event_id: str  # the answer on the request's thread


# -- push ----------------------------------------------------------------------------------------


class NotifyState(Out):
    configured: bool
    last_result: Literal["delivered", "failed"] | None
    last_at: str | None


class PushKey(Out):
    public_key: str  # the VAPID public key, base64url (the browser's applicationServerKey)
    contact: str
    notify_url: NotifyState  # the plain notify target's state (never its URL or token)


class PushDevice(Out):
    id: str
    name: str
    push_service: str  # the endpoint's origin; the endpoint itself is never shown
    filters: dict[str, Any]
    created_at: str
    last_delivered_at: str | None
    last_result: Literal["delivered", "failed", "gone"] | None


class PushDeviceList(Out):
    devices: list[PushDevice]


class PushTest(Out):
    device_id: str
    result: Literal["delivered", "failed", "gone"]


class PushActed(Out):
    item_id: str
    action: str
    event_id: str  # the answer or decision on the item's thread


# -- storage -------------------------------------------------------------------------------------


class ByKind(Out):
    events: int | None
    sessions: int | None
    artifacts: int | None
    knowledge: int | None


class StorageRow(Out):
    project_id: str
    project_display_name: str
    events_bytes: int
    session_bytes: int | None
    artifact_bytes: int | None
    kb_bytes: int | None
    prunable: Prunable
    last_write: str = ABSENT  # a project nothing was ever written to has none


class Storage(Out):
    total_bytes: int | None
    used_bytes: int | None
    capacity_bytes: int | None
    free_bytes: int | None
    data_path: str
    node: Node
    by_kind: ByKind
    events_shared_bytes: int | None
    prunable: Prunable
    projects: list[StorageRow]


class PrunedSession(Out):
    session_id: str
    project_id: str
    name: str
    undo_token: str
    undo_until: str
    bytes: int | None


class Pruned(Out):
    pruned: list[PrunedSession]
    count: int
    bytes: int | None


class Restored(Out):
    session_id: str
    project_id: str
    name: str
    restored: Literal[True]


# -- the schema ----------------------------------------------------------------------------------


class ResponseSchema(GenerateJsonSchema):
    """No titles; no defaults (a member sent only sometimes is simply not required)."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def model_schema(self, schema: core_schema.ModelSchema) -> JsonSchemaValue:
        out = super().model_schema(schema)
        out.pop("title", None)
        return out

    def default_schema(self, schema: core_schema.WithDefaultSchema) -> JsonSchemaValue:
        out = super().default_schema(schema)
        out.pop("default", None)
        return out


def response_schema(model: type[Out]) -> dict[str, Any]:
    """The model's JSON Schema with its `$defs` inlined (the document's readers take one tree)."""
    raw = model.model_json_schema(schema_generator=ResponseSchema, mode="serialization")
    defs = raw.pop("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                return walk(defs[ref.removeprefix("#/$defs/")])
            return {k: walk(v) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    return dict(walk(raw))


class IdRule(Out):
    pattern: str
    max_chars: int


class Limits(Out):
    project_id: IdRule
    agent_id: IdRule
    display_name_chars: int
    comment_body_chars: int
    comment_quote_chars: int
    decision_note_chars: int
    handoff_chars: int
    sessions_listing: int
    kb_page_bytes: int
    kb_history_page: int
    search_query_bytes: int
    search_terms: int
    search_types: list[str]
    push_device_name_chars: int
