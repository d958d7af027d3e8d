"""The same bad input gets the same code over REST and MCP, at every limit (issue 10, part 3).

For each operation on both surfaces, every shared member is walked with cases derived from its
typed request's published schema (the one definition both surfaces parse into): at the limit,
padded to it (text stored trimmed), one over, the wrong JSON type, `null`, and an unknown member.
Each case goes through REST (as the human) and through MCP (the SDK's client over real streamable
HTTP, as an agent, so that an idempotency key accepted over REST is not reused by the same actor for
another target) and must answer the same: accepted on both, or the same code on both (413 for a
content member over its size, 400 for every other refusal), and a refusal writes nothing. A member
whose schema gives the walker no limit to derive a case from fails the test, so a new member with
an unstated limit cannot slip past.

A query string carries only text, so for a query (`GET /projects/:id/feed`) the wrong-type case is
a non-number for a number member only, and `null` and unknown members are not walked (REST ignores
unknown query parameters).
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from mcp.client import Client

from hubcore.caller import Caller
from hubcore.config import HubSettings
from hubcore.services import ids
from hubcore.services.brains import BrainGet, BrainPut
from hubcore.services.feed import FeedRead
from hubcore.services.inbox import InboxList, InboxRead
from hubcore.services.kb.agent import BrainHistory
from hubcore.services.kb.models import KbVersions
from hubcore.services.posts import IdeaPost, SignalAppend
from hubcore.services.requests import CONTENT_MEMBERS, Request, input_schema
from hubcore.services.resolutions import AnswerPost
from hubcore.services.sessions import SessionEnd
from hubhttp.gate import MAX_BODY
from hubmcp.active import ActiveSessions, ConnectionKey
from hubmcp.context import FixedBinding
from hubmcp.server import HubMcp
from tests.adversarial.rest_support import snapshot
from tests.harness import ADMIN
from tests.mcp.live import LEGACY, LiveHub, error_in_text, live_hub
from tests.requests import a_question, a_session_start

pytestmark = pytest.mark.anyio

OK = "ok"
TOO_LARGE = "payload_too_large"
INVALID = "invalid_argument"
CURSOR = ids.encode(1_700_000_000_000, 0)  # a well-formed event id (no such event: an empty page)


@dataclass(frozen=True)
class Case:
    label: str
    value: Any
    expect: str


@dataclass(frozen=True)
class Op:
    name: str
    tool: str
    rest_model: type[Request]
    mcp_model: type[Request]
    base: dict[str, Any]  # the members a valid request carries besides the one walked
    members: tuple[str, ...]  # the members both surfaces take
    rest: Callable[[LiveHub, dict[str, str], dict[str, Any]], Awaitable[httpx.Response]]
    mcp: Callable[[dict[str, str], dict[str, Any]], dict[str, Any]]
    query: bool = False
    # A call naming a running session of the caller's is recorded in it for replay (refused ones
    # too), which touches the session's last activity: the one write a refusal may make.
    touches_session: bool = False
    accepted: tuple[str, ...] = ()  # codes that say the input passed (a read of a missing entry)
    companions: dict[str, dict[str, Any]] = field(default_factory=dict)  # members sent with the walked one
    # Optional in the schema, yet needed by this target: an answer's body (a form question takes a
    # `value` instead; the walked question has no form), so its null is refused on both surfaces.
    needed: tuple[str, ...] = ()


async def post_idea(live: LiveHub, _: dict[str, str], body: dict[str, Any]) -> httpx.Response:
    return await live.http.post("/api/v1/projects/web/ideas", json=body, headers=ADMIN)


async def post_answer(live: LiveHub, made: dict[str, str], body: dict[str, Any]) -> httpx.Response:
    return await live.http.post(f"/api/v1/questions/{made['rest']}/answer", json=body, headers=ADMIN)


async def end_session(live: LiveHub, made: dict[str, str], body: dict[str, Any]) -> httpx.Response:
    return await live.http.post(f"/api/v1/sessions/{made['rest']}/end", json=body, headers=ADMIN)


async def get_entry(live: LiveHub, made: dict[str, str], query: dict[str, Any]) -> httpx.Response:
    params = {k: str(v) for k, v in query.items()}
    return await live.http.get(f"/api/v1/sessions/{made['rest']}/brain/entry", params=params, headers=ADMIN)


async def get_feed(live: LiveHub, _: dict[str, str], query: dict[str, Any]) -> httpx.Response:
    params = {k: v if isinstance(v, list) else str(v) for k, v in query.items()}  # a list repeats
    return await live.http.get("/api/v1/projects/web/feed", params=params, headers=ADMIN)


async def get_versions(live: LiveHub, _: dict[str, str], query: dict[str, Any]) -> httpx.Response:
    params = {k: str(v) for k, v in query.items()}
    return await live.http.get("/api/v1/projects/web/kb/versions", params=params, headers=ADMIN)


async def get_inbox(live: LiveHub, _: dict[str, str], query: dict[str, Any]) -> httpx.Response:
    return await live.http.get("/api/v1/inbox", params={k: str(v) for k, v in query.items()}, headers=ADMIN)


OPS = [
    Op(
        "idea",
        "signal_append",
        IdeaPost,
        SignalAppend,
        {"summary": "an idea"},
        ("summary", "body", "payload", "session_id", "idempotency_key"),
        post_idea,
        lambda _, args: {"project_id": "web", "kind": "idea", **args},
        # A missing summary is taken from the body: walked with one, `null` is accepted.
        companions={"summary": {"body": "the longer text"}},
    ),
    Op(
        "answer",
        "answer_post",
        AnswerPost,
        AnswerPost,
        {"body": "yes"},
        ("body", "idempotency_key"),
        post_answer,
        lambda made, args: {"question_id": made["mcp"], **args},
        needed=("body",),
    ),
    Op(
        "feed",
        "feed_read",
        FeedRead,
        FeedRead,
        {},
        ("since", "before", "kind", "session_id", "limit"),
        get_feed,
        lambda _, args: {"project_id": "web", **args},
        query=True,
    ),
    # GET /inbox and inbox_read share the page size; the status is an enum (no limit to walk) and
    # the project is `project` in the REST query, `project_id` over MCP (docs/decisions.md).
    Op("inbox", "inbox_read", InboxList, InboxRead, {}, ("limit",), get_inbox, lambda _, args: dict(args), query=True),
    Op(
        "end",
        "session_end",
        SessionEnd,
        SessionEnd,
        {},
        ("handoff",),
        end_session,
        lambda made, args: {"session_id": made["mcp"], **args},
        touches_session=True,
    ),
    # Another agent's session, so the walker's reads are not recorded in it; no entry was ever
    # written, so a path the model accepts is answered not_found on both (read as accepted).
    Op(
        "brain",
        "brain_get",
        BrainGet,
        BrainGet,
        {},
        ("path",),
        get_entry,
        lambda made, args: {"session_id": made["mcp"], **args},
        query=True,
        accepted=("not_found",),
    ),
    # A knowledge base page's versions: GET .../kb/versions and brain_history share the page size
    # and the cursor; the page was never written, so an accepted request is not_found on both.
    Op(
        "kb_versions",
        "brain_history",
        KbVersions,
        BrainHistory,
        {"path": "/fs/walk.md"},
        ("limit", "before"),
        get_versions,
        lambda _, args: {"project_id": "web", **args},
        query=True,
        accepted=("not_found",),
    ),
]
# Values a pattern-held member accepts (the walker cannot invent one from a pattern).
EXAMPLES = {"since": CURSOR, "before": CURSOR, "if_version": "absent"}


def text_cases(member: str, prop: dict[str, Any]) -> list[Case]:
    over = TOO_LARGE if member in CONTENT_MEMBERS else INVALID
    if "x-max-chars-trimmed" in prop:
        n = prop["x-max-chars-trimmed"]
        return [
            Case("at the limit", "x" * n, OK),
            Case("padded to the limit", "  " + "x" * n + " \t", OK),
            Case("one over", "x" * (n + 1), over),
        ]
    if "x-max-bytes-serialized" in prop:
        n = prop["x-max-bytes-serialized"]
        return [Case("at the limit", "x" * n, OK), Case("one byte over", "x" * n + "é", over)]
    if "x-max-bytes-utf8" in prop:
        n = prop["x-max-bytes-utf8"]
        return [
            Case("at the limit", "x" * n, OK),
            Case("at the limit, two-byte letters", "é" * (n // 2), OK),
            Case("one byte over", "x" * (n - 1) + "é", over),
        ]
    if "x-max-bytes-canonical" in prop:
        n = prop["x-max-bytes-canonical"] - len("/kv/")
        return [
            Case("at the limit", "/kv/" + "k" * n, OK),
            Case("padded to the limit", "/kv/./" + "k" * n + "/", OK),
            Case("longer, canonical at the limit", "/kv/x/../" + "k" * n, OK),
            Case("one over", "/kv/" + "k" * (n + 1), over),
        ]
    if "maxLength" in prop:
        n = prop["maxLength"]
        return [Case("at the limit", "k" * n, OK), Case("one over", "k" * (n + 1), over)]
    if "pattern" in prop and member in EXAMPLES:
        return [Case("well formed", EXAMPLES[member], OK), Case("a final newline", EXAMPLES[member] + "\n", INVALID)]
    return []


def limit_cases(member: str, prop: dict[str, Any]) -> list[Case]:
    """The cases the member's own limit gives; empty when its schema states none."""
    kinds = prop.get("type", [])
    kinds = [kinds] if isinstance(kinds, str) else kinds
    if "string" in kinds:
        return text_cases(member, prop)
    if "integer" in kinds and "minimum" in prop and "maximum" in prop:
        low, high = prop["minimum"], prop["maximum"]
        return [
            Case("at the minimum", low, OK),
            Case("at the maximum", high, OK),
            Case("one under", low - 1, INVALID),
            Case("one over", high + 1, INVALID),
        ]
    if "object" in kinds and "x-max-bytes-serialized" in prop:
        n = prop["x-max-bytes-serialized"] - len('{"t":""}')
        return [Case("at the limit", {"t": "x" * n}, OK), Case("one byte over", {"t": "x" * (n + 1)}, TOO_LARGE)]
    branches = prop.get("anyOf", [])
    listed = [b for b in branches if b.get("type") == "array" and "enum" in b.get("items", {})]
    if listed:
        first = listed[0]["items"]["enum"][0]
        return [
            Case("a known value", first, OK),
            Case("a list of one", [first], OK),
            Case("an unknown value", "nope", INVALID),
        ]
    return []


def cases(op: Op, member: str) -> list[Case]:
    schema = input_schema(op.mcp_model)
    prop = schema["properties"][member]
    assert prop == input_schema(op.rest_model)["properties"][member], f"{op.name}.{member} differs"
    found = limit_cases(member, prop)
    if not found:
        pytest.fail(f"{op.name}.{member}: its schema states no limit the walker can derive a case from")
    kinds = prop.get("type", [])
    if op.query:
        return found + ([Case("not a number", "ten", INVALID)] if "integer" in kinds else [])
    wrong = "12" if "string" not in kinds else 12
    optional = member not in schema.get("required", []) and member not in op.needed
    return [*found, Case("the wrong type", wrong, INVALID), Case("null", None, OK if optional else INVALID)]


@pytest.fixture
async def live(settings: HubSettings) -> AsyncIterator[LiveHub]:
    async with live_hub(settings) as hub:
        r = await hub.http.post("/api/v1/projects", json={"id": "web"}, headers=ADMIN)
        assert r.status_code == 201, r.text
        yield hub


def code_of_rest(r: httpx.Response) -> str:
    return OK if r.status_code < 300 else str(r.json()["code"])


def code_of_mcp(result: Any) -> str:
    return str(error_in_text(result)["code"]) if result.is_error else OK


async def targets(live: LiveHub, op: Op) -> dict[str, str]:
    """A fresh open question per surface for an answer, a fresh running session of the walker's
    per surface for an end (an accepted case closes it)."""
    if op.name == "end":
        sessions = live.app.hub.sessions
        walker = Caller.agent("walker")
        started = [await sessions.start(walker, a_session_start("web", f"walk-{uuid.uuid4().hex}")) for _ in range(2)]
        return {"rest": started[0]["session_id"], "mcp": started[1]["session_id"]}
    if op.name == "brain":
        named = a_session_start("web", f"read-{uuid.uuid4().hex}")
        row = await live.app.hub.sessions.start(Caller.agent("owner"), named)
        return {"rest": row["session_id"], "mcp": row["session_id"]}
    if op.name != "answer":
        return {}
    posts = live.app.hub.posts
    asked = [
        await posts.question_post(Caller.agent("asker"), a_question(project_id="web", summary="Which way?"))
        for _ in range(2)
    ]
    return {"rest": asked[0]["event_id"], "mcp": asked[1]["event_id"]}


def state(conn: sqlite3.Connection, op: Op) -> dict[str, list[str]]:
    """Every row of every table; for an operation whose MCP call is recorded in its session, the
    sessions' rows without their last activity (see `Op.touches_session`)."""
    rows = snapshot(conn)
    # The replay record is kept behind the call (refused ones too) and is not the call's write:
    # its rows staged in hub.db and their counter are left out, as the brains' rows are.
    rows.pop("call_staging", None)
    rows["sqlite_sequence"] = [row for row in rows.get("sqlite_sequence", []) if "'call_staging'" not in row]
    if op.touches_session:
        cut = conn.execute("SELECT id, project_id, name, owner, status, handoff, ended_at FROM sessions")
        rows["sessions"] = sorted(repr(tuple(row)) for row in cut)
    return rows


async def both(live: LiveHub, mcp: Client, op: Op, members: dict[str, Any]) -> tuple[str, str, bool]:
    """(REST's code, MCP's code, whether the store is unchanged) for one request on each surface."""
    made = await targets(live, op)
    await live.app.hub.search_index.settled()  # the index has followed those writes: the snapshot starts at rest
    db = Path(live.app.settings.data_path) / "hub.db"
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        before = state(conn, op)
        rest = code_of_rest(await op.rest(live, made, members))
        over_mcp = code_of_mcp(await mcp.call_tool(op.tool, op.mcp(made, members)))
        rest, over_mcp = (OK if code in op.accepted else code for code in (rest, over_mcp))
        unchanged = state(conn, op) == before
    conn.close()
    return rest, over_mcp, unchanged


@pytest.mark.parametrize("op", OPS, ids=[op.name for op in OPS])
async def test_every_limit_answers_alike_over_rest_and_mcp(live: LiveHub, op: Op) -> None:
    faults: list[str] = []
    walked = [(member, case) for member in op.members for case in cases(op, member)]
    if not op.query:
        walked.append(("colour", Case("an unknown member", "blue", INVALID)))
    async with live.client(await live.make_agent("walker")) as mcp:
        for member, case in walked:
            members = {**op.base, **op.companions.get(member, {}), member: case.value}
            rest, over_mcp, unchanged = await both(live, mcp, op, members)
            if (rest, over_mcp) != (case.expect, case.expect):
                faults.append(f"{member} {case.label}: REST {rest}, MCP {over_mcp}, expected {case.expect}")
            if case.expect != OK and not unchanged:
                faults.append(f"{member} {case.label}: a refused request wrote to the store")
    assert faults == []


# -- brain_put: no REST route writes a brain, so its pair is the agent endpoint's two transports ----


async def no_rest(live: LiveHub, made: dict[str, str], body: dict[str, Any]) -> httpx.Response:
    raise AssertionError("brain_put has no REST route; its pair is /mcp and the in-process server")


# Each case writes to fresh sessions of the walker's, one per transport; an accepted case writes an
# entry, so a refused one is checked to have written none (and hub.db only its last activity).
BRAIN_PUT = Op(
    "brain_put",
    "brain_put",
    BrainPut,
    BrainPut,
    {"path": "/kv/walk", "content": "x", "store": "session"},
    ("path", "content", "if_version"),
    no_rest,
    lambda made, args: {"session_id": made["local"], **args},
    touches_session=True,
)


async def fresh_sessions(live: LiveHub) -> dict[str, str]:
    """Two new running sessions of the walker's: one per transport."""
    walker, sessions = Caller.agent("walker"), live.app.hub.sessions
    started = [await sessions.start(walker, a_session_start("web", f"put-{uuid.uuid4().hex}")) for _ in range(2)]
    return {"http": started[0]["session_id"], "local": started[1]["session_id"]}


@asynccontextmanager
async def in_process(live: LiveHub, agent: str) -> AsyncIterator[Client]:
    """The server `hub-cli mcp` serves over stdio, as `agent`, with no HTTP in front of it."""
    hub = live.app.hub
    binding = FixedBinding(hub, Caller.agent(agent), ConnectionKey("stdio", uuid.uuid4().hex), ActiveSessions(), None)
    async with Client(HubMcp(hub, binding).server, mode=LEGACY, cache=None) as client:
        yield client


def entries_in(live: LiveHub, session_id: str) -> int:
    path = live.app.hub.brains.path_of(session_id)
    if not path.exists():
        return 0
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        count = int(conn.execute("SELECT COUNT(*) FROM entries").fetchone()[0])
    conn.close()
    return count


async def over_http(live: LiveHub, mcp: Client, token: str, args: dict[str, Any]) -> str:
    """brain_put over /mcp. A call too big for the request body limit (4 MiB, the whole JSON-RPC
    message) never reaches the tool: it is sent raw, and the gate's 413 is its answer."""
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "brain_put", "arguments": args}}
    raw = orjson.dumps(message)
    if len(raw) <= MAX_BODY:
        return code_of_mcp(await mcp.call_tool("brain_put", args))
    # Through the same app in process: over a socket the gate's early 413 closes the connection
    # while the client is still sending, which a client sees as a reset rather than the answer.
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=live.app), base_url=live.base) as http:
        r = await http.post(
            "/mcp",
            content=raw,
            headers={
                "Authorization": f"Bearer {token}",
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
            },
        )
    assert r.status_code == 413, r.text[:300]
    return str(r.json()["code"])


async def test_brain_put_limits_answer_alike_over_http_and_in_process(live: LiveHub) -> None:
    """Every case the published schema gives (content at its 4 MiB of UTF-8 and one byte over, the
    path's canonical bytes, if_version's forms, wrong types, null, an unknown member) answers the
    same in process (`hub-cli mcp`) and over /mcp, except where /mcp's body limit answers first: a
    call carrying 4 MiB of content is itself over 4 MiB, so it is 413 over HTTP before the tool
    runs (the same code the tool gives one byte over). A refusal writes no entry anywhere."""
    faults: list[str] = []
    walked = [(m, c) for m in BRAIN_PUT.members for c in cases(BRAIN_PUT, m)]
    walked.append(("colour", Case("an unknown member", "blue", INVALID)))
    token = await live.make_agent("walker")
    db = Path(live.app.settings.data_path) / "hub.db"
    async with live.client(token) as mcp, in_process(live, "walker") as local:
        for member, case in walked:
            args = {**BRAIN_PUT.base, member: case.value}
            made = await fresh_sessions(live)
            await live.app.hub.search_index.settled()  # the last call's write is indexed: start at rest
            with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
                before = state(conn, BRAIN_PUT)
                http = await over_http(live, mcp, token, {"session_id": made["http"], **args})
                here = code_of_mcp(await local.call_tool("brain_put", {"session_id": made["local"], **args}))
                unchanged = state(conn, BRAIN_PUT) == before
            conn.close()
            too_big = len(orjson.dumps(args)) > MAX_BODY
            if (http, here) != (TOO_LARGE if too_big else case.expect, case.expect):
                faults.append(f"{member} {case.label}: /mcp {http}, in process {here}, expected {case.expect}")
            # Each call is recorded in its session's brain behind the reply (replay): written before
            # the files are read, so a brain file being created is never read half made.
            await live.app.hub.brains.calls.flush()
            written = [entries_in(live, made[k]) for k in ("http", "local")]
            if case.expect != OK and (written != [0, 0] or not unchanged):
                faults.append(f"{member} {case.label}: a refused call wrote (entries {written})")
    assert faults == []
