"""Property tests of every MCP tool: hostile arguments never break the hub.

The tool list is read from the server at test time, so a new tool is covered without touching this
file. For each tool, hypothesis builds arguments from its input schema and then spoils them: a
member of the wrong JSON type, a required member missing, an unknown member, huge (beyond 64 bits),
negative and fractional numbers, 150-240 levels of nesting (and, sent raw, up to 5,000), strings of
a few hundred KB, and odd unicode (NUL, line and paragraph separators, direction marks; no lone
surrogates, which JSON cannot carry). Each call goes through the SDK's client over real streamable
HTTP, in both protocol eras, with and without an active session. Whatever is sent:

- the answer is a well-formed tool result (a transport failure or JSON-RPC error fails the test;
  the one exception is a parse error for a document nested past the JSON parser's limit);
- an error is MCP's convention: `isError`, `structuredContent == {"error": {code, message,
  retryable, details}}`, text starting with the code and message, and the code is never `internal`;
- a refused call wrote nothing: every hub.db table's row count and every brain's entries are as
  before (a session's replay log of its calls is meant to grow, so it is left out).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp.client import Client
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, TextContent

from tests import harness
from tests.mcp.live import LEGACY, MODERN, live_hub

PARSE_ERROR = -32700
AGENT = "prop-bot"
PROJECT = f"space-{AGENT}"
RAW_META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": {"name": "properties", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
JSON_TYPES = ("null", "boolean", "integer", "number", "string", "array", "object")
# Deterministic, no example database on disk, no per-example deadline (a 300 KB call on a busy
# machine is slow, not wrong).
PROFILE = settings(
    max_examples=40, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow]
)


@dataclass
class World:
    """One hub and its clients for the whole module: (era, with an active session) -> client."""

    data_dir: Path
    clients: dict[tuple[str, bool], Client]
    tools: dict[str, dict[str, Any]]  # name -> input schema, as tools/list gives it
    base: str  # the hub's URL, for raw requests the SDK's client cannot send
    token: str
    # Writes what the hub records behind (replay rows, touches), so a snapshot reads settled files.
    settle: Callable[[], Awaitable[None]]
    portal: BlockingPortal | None = None

    def call(self, era: str, in_session: bool, tool: str, arguments: dict[str, Any]) -> CallToolResult:
        """Call a tool on the hub's event loop, from the (synchronous) test."""
        assert self.portal is not None
        return self.portal.call(self.clients[(era, in_session)].call_tool, tool, arguments)

    def snapshot(self) -> dict[str, Any]:
        """Row counts of every hub.db table and each brain's entries (path, version, seal)."""
        assert self.portal is not None
        self.portal.call(self.settle)
        state: dict[str, Any] = {}
        with _read(self.data_dir / "hub.db") as conn:
            names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
            # The replay record is kept behind the call, refused ones too, and is not the call's
            # write: its rows staged in hub.db (and their counter) are left out, as the brains' are.
            for name in set(names) - {"call_staging", "sqlite_sequence"}:
                state[name] = conn.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0]
            state["sqlite_sequence"] = conn.execute(
                "SELECT count(*) FROM sqlite_sequence WHERE name != 'call_staging'"
            ).fetchone()[0]
        for brain in sorted((self.data_dir / "brains").glob("*.db")):
            with _read(brain) as conn:
                entries = conn.execute("SELECT path, version FROM entries ORDER BY path").fetchall()
                sealed = conn.execute("SELECT count(*) FROM seal").fetchone()[0]
            # A session's brain file appears with the first call recorded in its replay log: an
            # empty brain is the same as none.
            if entries or sealed:
                state[brain.name] = (entries, sealed)
        return state


class _read:
    """A read-only connection that is closed on exit (sqlite3's own context manager only commits)."""

    def __init__(self, path: Path) -> None:
        self.conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)

    def __enter__(self) -> sqlite3.Connection:
        return self.conn

    def __exit__(self, *exc: object) -> None:
        self.conn.close()


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    """The hub and its clients run on an event loop in a thread of their own; the tests are
    synchronous and call through a portal. (Hypothesis stops a test by raising a BaseException
    from a draw, which would kill anyio's shared test runner task if drawn inside an async test.)"""
    data_dir = tmp_path_factory.mktemp("mcp-properties") / "data"
    with start_blocking_portal("asyncio") as portal, portal.wrap_async_context_manager(open_world(data_dir)) as w:
        w.portal = portal
        yield w


@asynccontextmanager
async def open_world(data_dir: Path) -> AsyncIterator[World]:
    async with live_hub(harness.test_settings(data_dir)) as live, AsyncExitStack() as stack:
        token = await live.make_agent(AGENT)
        clients: dict[tuple[str, bool], Client] = {}
        for era in (LEGACY, MODERN):
            for in_session in (False, True):
                # On 2026-07-28 the active session belongs to the Hub-Connection header's value.
                headers = {"Hub-Connection": f"props-{era}-{in_session}"} if era == MODERN else None
                client = await stack.enter_async_context(live.client(token, mode=era, headers=headers))
                if in_session:
                    started = await client.call_tool("session_start", {"project_id": PROJECT, "name": f"props-{era}"})
                    assert not started.is_error, started
                clients[(era, in_session)] = client
        listed = await clients[(LEGACY, False)].list_tools()
        tools = {tool.name: dict(tool.input_schema) for tool in listed.tools}
        assert "signal_append" in tools and "brain_put" in tools
        hub = live.app.hub

        async def settle() -> None:
            """What the hub writes behind: the replay rows and touches, and the search index's pass
            over what an accepted call wrote (it lands after the call's reply)."""
            await hub.brains.calls.flush()
            await hub.search_index.settled()

        yield World(data_dir, clients, tools, live.base, token, settle)


# -- building arguments from a schema ------------------------------------------------------------


def allowed_types(schema: dict[str, Any]) -> set[str]:
    """The JSON types a member's schema accepts (all of them when it does not say)."""
    if "type" in schema:
        kinds = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        found = set(kinds)
        if "number" in found:
            found.add("integer")
        return found
    if "enum" in schema:
        return {json_type(v) for v in schema["enum"]}
    if "const" in schema:
        return {json_type(schema["const"])}
    options = schema.get("oneOf") or schema.get("anyOf")
    if options:
        return set().union(*(allowed_types(option) for option in options))
    return set(JSON_TYPES)


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def example(name: str, schema: dict[str, Any]) -> Any:
    """A plausible valid value, so a spoiled call fails on the spoiled member alone."""
    if name == "project_id":
        return PROJECT
    if name == "wait_seconds":
        return 0  # a wait tool polls once instead of holding the test for half a minute
    if "enum" in schema:
        return schema["enum"][0]
    options = schema.get("oneOf") or schema.get("anyOf")
    if options:
        return example(name, options[0])
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) else kind
    if kind == "integer" or kind == "number":
        return schema.get("minimum", 1)
    if kind == "boolean":
        return False
    if kind == "array":
        item = schema.get("items", {"type": "string"})
        count = max(schema.get("minItems", 0), 1 if "minItems" in schema else 0)
        values = [example(name, item) for _ in range(count)]
        return [f"{v}{n}" if isinstance(v, str) else v for n, v in enumerate(values)]  # uniqueItems
    if kind == "object":
        return {}
    return "x" * max(schema.get("minLength", 1), 1)


def base_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    properties = schema.get("properties", {})
    args = {name: example(name, properties.get(name, {})) for name in schema.get("required", [])}
    if "wait_seconds" in properties:
        args["wait_seconds"] = 0
    return args


def odd_text(max_size: int) -> st.SearchStrategy[str]:
    odd = st.sampled_from(
        ["\x00", "\u2028", "\u2029", "\u200f", "\u202e", "\u200b", "\ufeff", "\U0001f600", "e\u0301", "\u0000\u0000"]
    )
    plain = st.characters(exclude_categories=["Cs"])  # lone surrogates are not valid JSON
    return st.lists(st.one_of(odd, plain), max_size=max_size).map("".join)


def nested(depth: int, leaf: Any, as_list: bool) -> Any:
    value = leaf
    for _ in range(depth):
        value = [value] if as_list else {"n": value}
    return value


SCALARS: dict[str, st.SearchStrategy[Any]] = {
    "null": st.none(),
    "boolean": st.booleans(),
    "integer": st.integers(min_value=-(2**70), max_value=2**70),
    "number": st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: not f.is_integer()),
    "string": odd_text(20),
    "array": st.lists(st.integers(), max_size=3),
    "object": st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
}
HUGE_OR_ODD_NUMBERS = st.one_of(
    st.integers(min_value=2**64, max_value=2**200),
    st.integers(min_value=-(2**200), max_value=-(2**63)),
    st.integers(max_value=-1, min_value=-1000),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0, -0.0, 1e308, -1e308, 5e-324, 2**53 + 1, 0.5]),
)


@dataclass
class Case:
    tool: str
    arguments: dict[str, Any]
    era: str
    in_session: bool
    must_refuse: bool  # the spoiling makes the call invalid by the schema alone

    def __repr__(self) -> str:  # a 300 KB argument is not worth printing whole on a failure
        shown = json.dumps(self.arguments, default=str)
        return (
            f"Case({self.tool}, era={self.era}, session={self.in_session}, refuse={self.must_refuse}, "
            f"args={shown[:300]}{'...' if len(shown) > 300 else ''})"
        )


Spoiler = Callable[[st.DataObject, dict[str, Any], dict[str, Any]], "tuple[dict[str, Any], bool] | None"]


def wrong_type(data: st.DataObject, schema: dict[str, Any], args: dict[str, Any]) -> tuple[dict[str, Any], bool] | None:
    properties = schema.get("properties", {})
    if not properties:
        return None
    name = data.draw(st.sampled_from(sorted(properties)), label="member")
    others = [t for t in JSON_TYPES if t not in allowed_types(properties[name])]
    if not others:
        return None
    value = data.draw(st.sampled_from(others).flatmap(lambda t: SCALARS[t]), label="value")
    # The catalogue leaves `null` out of an optional member's schema (issue 27: no `[X, "null"]`
    # unions), yet the hub reads a JSON null as absent for every optional member, as the guide
    # says: such a call is accepted. A null for a required member is still refused.
    lenient = value is None and name not in schema.get("required", [])
    return {**args, name: value}, not lenient


def missing_required(
    data: st.DataObject, schema: dict[str, Any], args: dict[str, Any]
) -> tuple[dict[str, Any], bool] | None:
    required = schema.get("required", [])
    if not required:
        return None
    name = data.draw(st.sampled_from(required), label="dropped")
    return {k: v for k, v in args.items() if k != name}, True


def extra_member(data: st.DataObject, schema: dict[str, Any], args: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    known = set(schema.get("properties", {}))
    name = data.draw(odd_text(30), label="extra") * data.draw(st.sampled_from([1, 200]), label="repeat")
    if name in known:
        name += "_extra"
    return {**args, name: data.draw(st.sampled_from(JSON_TYPES).flatmap(lambda t: SCALARS[t]))}, True


def odd_number(data: st.DataObject, schema: dict[str, Any], args: dict[str, Any]) -> tuple[dict[str, Any], bool] | None:
    properties = schema.get("properties", {})
    numeric = sorted(n for n, s in properties.items() if allowed_types(s) & {"integer", "number"})
    name = data.draw(st.sampled_from(numeric or sorted(properties) or ["n"]), label="member")
    value = data.draw(HUGE_OR_ODD_NUMBERS, label="number")
    if name == "wait_seconds" and isinstance(value, int | float) and 0 < value <= 60:
        value = -value  # refused rather than a wait of up to a minute
    return {**args, name: value}, False


def deep(data: st.DataObject, schema: dict[str, Any], args: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    properties = schema.get("properties", {})
    name = data.draw(st.sampled_from(sorted(properties) or ["deep"]), label="member")
    # The SDK's client (pydantic) refuses to serialise past about 250 levels in all; deeper
    # documents are sent raw in test_deeper_nesting_sent_raw.
    depth = data.draw(st.integers(min_value=150, max_value=240), label="depth")
    value = nested(depth, data.draw(st.sampled_from([1, "x", None, {}])), data.draw(st.booleans()))
    return {**args, name: value}, False


def long_or_odd_string(
    data: st.DataObject, schema: dict[str, Any], args: dict[str, Any]
) -> tuple[dict[str, Any], bool] | None:
    properties = schema.get("properties", {})
    strings = sorted(n for n, s in properties.items() if "string" in allowed_types(s) and n != "project_id")
    if not strings:
        return None
    name = data.draw(st.sampled_from(strings), label="member")
    size = data.draw(st.sampled_from([0, 1, 100, 70_000, 300_000]), label="size")
    unit = data.draw(st.sampled_from(["x", "\x00", "\u2028", "\u202e", "é", "\U0001f600", "a\u2029b"]), label="unit")
    value = (unit * (size // len(unit) + 1))[:size] + data.draw(odd_text(12), label="tail")
    return {**args, name: value}, False


def check_call(world: World, data: st.DataObject, spoil: Spoiler) -> None:
    tool = data.draw(st.sampled_from(sorted(world.tools)), label="tool")
    schema = world.tools[tool]
    spoiled = spoil(data, schema, base_arguments(schema))
    if spoiled is None:
        return  # nothing of that kind to spoil in this tool
    era = data.draw(st.sampled_from([LEGACY, MODERN]), label="era")
    case = Case(tool, spoiled[0], era, data.draw(st.booleans(), label="in session"), spoiled[1])
    before = world.snapshot()
    try:
        result = world.call(case.era, case.in_session, case.tool, case.arguments)
    except MCPError as exc:
        # The one protocol error allowed: a document nested past the JSON parser's limit is not
        # read at all (the handshake era's parser stops near 200 levels). Nothing was written
        # and the connection still serves.
        assert spoil is deep and exc.error.code == PARSE_ERROR, (case, exc)
        assert not world.call(case.era, case.in_session, "whoami", {}).is_error
        assert world.snapshot() == before, case
        return
    error = well_formed(result, case)
    if error is None:
        assert not case.must_refuse, f"accepted: {case!r}"
        return
    assert error["code"] != "internal", (case, error)
    if case.must_refuse:
        assert error["code"] == "invalid_argument", (case, error)
    assert world.snapshot() == before, f"a refused call wrote: {case!r} -> {error}"


def well_formed(result: CallToolResult, case: Case) -> dict[str, Any] | None:
    """The error of a refused call (checked against MCP's convention), or None for a success."""
    body = result.structured_content
    assert result.content and isinstance(result.content[0], TextContent), (case, result)
    text = result.content[0].text
    if not result.is_error:
        assert isinstance(body, dict), (case, result)
        assert json.loads(text) == body, case
        return None
    # An error has no structured content (it would contradict the output schema); its text's
    # last line is the error object.
    assert body is None and len(result.content) == 1, (case, result)
    last = json.loads(text.rsplit("\n", 1)[-1])
    assert set(last) == {"error"}, (case, last)
    error = last["error"]
    assert set(error) == {"code", "message", "retryable", "details"}, (case, error)
    assert isinstance(error["code"], str) and isinstance(error["message"], str), (case, error)
    assert isinstance(error["retryable"], bool) and isinstance(error["details"], dict), (case, error)
    assert text.startswith(f"{error['code']}: {error['message']}"), (case, text[:300])
    assert len(text) < 4096, (case, text[:300])  # never echoes a large offending value
    return dict(error)


@PROFILE
@given(data=st.data())
def test_a_member_of_the_wrong_type_is_refused(world: World, data: st.DataObject) -> None:
    check_call(world, data, wrong_type)


@PROFILE
@given(data=st.data())
def test_a_missing_required_member_is_refused(world: World, data: st.DataObject) -> None:
    check_call(world, data, missing_required)


@PROFILE
@given(data=st.data())
def test_an_unknown_member_is_refused(world: World, data: st.DataObject) -> None:
    check_call(world, data, extra_member)


@PROFILE
@given(data=st.data())
def test_huge_negative_and_fractional_numbers(world: World, data: st.DataObject) -> None:
    check_call(world, data, odd_number)


@settings(PROFILE, max_examples=25)
@given(data=st.data())
def test_deep_nesting(world: World, data: st.DataObject) -> None:
    check_call(world, data, deep)


@settings(PROFILE, max_examples=30)
@given(data=st.data())
def test_long_strings_and_odd_unicode(world: World, data: st.DataObject) -> None:
    check_call(world, data, long_or_odd_string)


@settings(PROFILE, max_examples=12)
@given(
    depth=st.integers(min_value=256, max_value=5000),
    as_list=st.booleans(),
    tool=st.sampled_from(["signal_append", "brain_put", "whoami", "question_post"]),
)
def test_deeper_nesting_sent_raw(world: World, depth: int, as_list: bool, tool: str) -> None:
    """Past what the SDK's client can serialise, over 2026-07-28 requests: a tool result (the
    payload's own depth limit, or validation) or a JSON-RPC parse error, never a 500."""
    arguments = {**base_arguments(world.tools[tool]), "payload": "DEEP"}
    deep_text = ("[" * depth + "1" + "]" * depth) if as_list else ('{"n":' * depth + "1" + "}" * depth)
    envelope = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments, "_meta": RAW_META},
    }
    body = json.dumps(envelope).replace('"DEEP"', deep_text)  # spliced in: json.dumps would recurse
    headers = {
        "Authorization": f"Bearer {world.token}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "tools/call",
        "Mcp-Name": tool,
    }
    before = world.snapshot()
    r = httpx.post(f"{world.base}/mcp", content=body, headers=headers, timeout=60)
    reply = r.json()
    if r.status_code == 400:
        assert reply["error"]["code"] == PARSE_ERROR, reply
    else:
        assert r.status_code == 200, r.text[:500]
        result = CallToolResult.model_validate(reply["result"])
        error = well_formed(result, Case(tool, {"depth": depth}, MODERN, False, False))
        assert error is not None and error["code"] == "invalid_argument", error
    assert world.snapshot() == before, (tool, depth)


def test_every_tool_is_exercised(world: World) -> None:
    """Every listed tool takes an object of arguments, so every spoiler above applies to it."""
    for name, schema in world.tools.items():
        assert schema.get("type") == "object", name
        result = world.call(LEGACY, False, name, {**base_arguments(schema), "\u202e": 1})
        error = well_formed(result, Case(name, {}, LEGACY, False, True))
        assert error is not None and error["code"] == "invalid_argument", (name, error)


def test_an_unknown_tool_is_a_not_found_result(world: World) -> None:
    before = world.snapshot()
    for era in (LEGACY, MODERN):
        result = world.call(era, True, "no_such_tool\u2028\x00", {"a": [[[]]]})
        error = well_formed(result, Case("no_such_tool", {}, era, True, True))
        assert error is not None and error["code"] == "not_found", error
    assert world.snapshot() == before
