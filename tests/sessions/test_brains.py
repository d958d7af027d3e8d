"""Brain stores: namespaces, versions, conditional writes, ownership, limits, REST reads, replay."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from hubcore.caller import Caller
from hubcore.errors import HubError
from hubcore.hub import Hub
from hubcore.services import entries
from hubcore.services.brains import BrainGet
from hubcore.services.requests import input_schema, parse
from hubcore.store import brain
from tests.foundation.test_gate import assert_problem
from tests.harness import ADMIN, HubClient
from tests.requests import a_brain_delete, a_brain_get, a_brain_list, a_brain_put, a_session_end, a_session_start

pytestmark = pytest.mark.anyio

ALICE, BOB = Caller.agent("alice"), Caller.agent("bob")


async def started(hub: Hub, who: Caller = ALICE, name: str = "task") -> tuple[str, str]:
    s = await hub.sessions.start(who, a_session_start("web", name))
    return s["session_id"], "web"


async def behind_the_service(hub: Hub, sid: str, write: Callable[[sqlite3.Connection], object]) -> None:
    """Write rows the service would refuse (or is slow) to write, through the brain's own actor:
    never a second writer on a file whose actor is running."""
    async with hub.brains.pool.use(sid) as actor:
        await actor.execute(write)


def brain_file(hub: Hub, sid: str) -> Path:
    return hub.brains.path_of(sid)


async def put(hub: Hub, who: Caller, active: tuple[str, str] | None, **fields: Any) -> dict[str, Any]:
    """A brain write as the tool makes it; the request is parsed when awaited, so a refusal of
    the request itself is caught by `refused` as the service's are."""
    return await hub.brains.write_entry(who, a_brain_put(**fields), active=active)


async def delete(hub: Hub, who: Caller, active: tuple[str, str] | None, **fields: Any) -> dict[str, Any]:
    return await hub.brains.delete_entry(who, a_brain_delete(**fields), active=active)


async def refused(code: str, coro: object) -> HubError:
    with pytest.raises(HubError) as caught:
        await coro  # type: ignore[misc]
    assert caught.value.code == code, caught.value
    return caught.value


async def test_file_is_created_on_first_write_only(hub: Hub) -> None:
    active = await started(hub)
    sid = active[0]
    await refused("not_found", hub.brains.read_entry(ALICE, a_brain_get(path="/kv/x"), active=active))
    listing = await hub.brains.list_entries(ALICE, a_brain_list(), active=active)
    assert listing["entries"] == [] and listing["truncated"] is False
    assert not brain_file(hub, sid).exists()
    wrote = await put(hub, ALICE, active, path="/kv/x", content="1", store="session")
    assert wrote["version"] == entries.version_of(b"1") and wrote["size_bytes"] == 1 and wrote["warnings"] == []
    assert brain_file(hub, sid).exists()


async def test_put_get_list_delete_and_versions(hub: Hub) -> None:
    active = await started(hub)
    w = await put(hub, ALICE, active, path="/fs/docs/./a/../plan.md", content="# plan", store="session")
    assert w["path"] == "/fs/docs/plan.md"
    await put(hub, ALICE, active, path="/fs/docs/deep/x.md", content="xx", store="session")
    await put(hub, ALICE, active, path="/kv/state", content="{}", store="session")
    got = await hub.brains.read_entry(ALICE, a_brain_get(path="/fs/docs/plan.md"), active=active)
    assert got["content"] == "# plan" and got["version"] == w["version"] and got["type"] == "file"
    assert (await hub.brains.read_entry(ALICE, a_brain_get(path="/kv/state"), active=active))["type"] == "key"
    level = await hub.brains.list_entries(ALICE, a_brain_list(path="/fs/docs/"), active=active)
    assert level["entries"] == [
        {"path": "/fs/docs/deep", "type": "dir", "size_bytes": 2},
        {"path": "/fs/docs/plan.md", "type": "file", "size_bytes": 6},
    ]
    await refused("conflict", hub.brains.read_entry(ALICE, a_brain_get(path="/fs/docs"), active=active))
    await delete(hub, ALICE, active, path="/fs/docs/plan.md", store="session")
    await refused("not_found", hub.brains.read_entry(ALICE, a_brain_get(path="/fs/docs/plan.md"), active=active))
    await refused("not_found", delete(hub, ALICE, active, path="/fs/docs/plan.md", store="session"))


async def test_if_version_and_absent(hub: Hub) -> None:
    active = await started(hub)
    first = await put(hub, ALICE, active, path="/kv/k", content="a", store="session", if_version="absent")
    err = await refused(
        "conflict", put(hub, ALICE, active, path="/kv/k", content="b", store="session", if_version="absent")
    )
    assert err.message.endswith(f"current_version={first['version']}")
    err = await refused(
        "conflict", put(hub, ALICE, active, path="/kv/k", content="b", store="session", if_version="sha256:" + "0" * 64)
    )
    assert err.message.endswith(f"current_version={first['version']}")
    assert (await hub.brains.read_entry(ALICE, a_brain_get(path="/kv/k"), active=active))["content"] == "a"
    second = await put(hub, ALICE, active, path="/kv/k", content="b", store="session", if_version=first["version"])
    assert second["version"] == entries.version_of(b"b")
    err = await refused(
        "conflict",
        put(hub, ALICE, active, path="/kv/new", content="b", store="session", if_version="sha256:" + "0" * 64),
    )
    assert err.message.endswith("current_version=absent")
    # One if_version rule on every surface: a version the hub could not have written is refused.
    for bad in ("sha256:00", "sha256:xyz", "sha256:" + "A" * 64, "Absent", ""):
        err = await refused(
            "invalid_argument", put(hub, ALICE, active, path="/kv/k", content="c", store="session", if_version=bad)
        )


async def test_bad_paths_and_store_are_refused(hub: Hub) -> None:
    active = await started(hub)
    for path in ("/etc/passwd", "fs", "/fs/", "/fs/a\nb", "/fs/a\\b", "/fs/" + "x" * 509, "", 5):
        await refused("invalid_argument", put(hub, ALICE, active, path=path, content="v", store="session"))
    ok = await put(hub, ALICE, active, path="/fs/" + "x" * 508, content="v", store="session")
    assert len(ok["path"].encode()) == 512
    await refused("invalid_argument", put(hub, ALICE, active, path="/fs/a", content="v", store=None))
    await refused("invalid_argument", put(hub, ALICE, active, path="/fs/a", content="v", store="disk"))
    assert (await hub.brains.list_entries(ALICE, a_brain_list(), active=active))["entries"] == [
        {"path": "/fs/" + "x" * 508, "type": "file", "size_bytes": 1}
    ]


async def test_value_limit_edge(hub: Hub) -> None:
    active = await started(hub)
    at_limit = "v" * entries.CONTENT_MAX
    ok = await put(hub, ALICE, active, path="/kv/big", content=at_limit, store="session")
    assert ok["size_bytes"] == entries.CONTENT_MAX
    await refused(
        "payload_too_large", put(hub, ALICE, active, path="/kv/bigger", content=at_limit + "v", store="session")
    )
    await refused("not_found", hub.brains.read_entry(ALICE, a_brain_get(path="/kv/bigger"), active=active))


async def test_writes_only_to_own_running_session(hub: Hub) -> None:
    alice = await started(hub)
    await refused("conflict", put(hub, ALICE, None, path="/kv/k", content="v", store="session"))
    err = await refused(
        "forbidden", put(hub, BOB, None, path="/kv/k", content="v", store="session", session_id=alice[0])
    )
    assert err.message.endswith("owner=alice")
    await hub.sessions.end(ALICE, a_session_end(session_id=alice[0]))
    await refused("conflict", put(hub, ALICE, alice, path="/kv/k", content="v", store="session"))
    assert not brain_file(hub, alice[0]).exists()


async def test_reads_of_other_sessions_by_id_or_agent_and_name(client: HubClient, hub: Hub) -> None:
    alice = await started(hub)
    await put(hub, ALICE, alice, path="/fs/n.md", content="note", store="session")
    bob = await started(hub, BOB, "other")
    by_id = await hub.brains.read_entry(BOB, a_brain_get(path="/fs/n.md", session={"session_id": alice[0]}), active=bob)
    by_name = await hub.brains.read_entry(
        BOB, a_brain_get(path="/fs/n.md", session={"agent": "alice", "name": "task"}), active=bob
    )
    assert by_id["content"] == by_name["content"] == "note"
    await client.make_project("secret", confidential=True)
    await client.post("/api/v1/agents/alice/grants", json={"project_id": "secret"}, headers=ADMIN)
    hidden = await hub.sessions.start(ALICE, a_session_start("secret", "hidden"))
    e1 = await refused(
        "not_found", hub.brains.read_entry(BOB, a_brain_get(path="/fs/n.md", session_id=hidden["session_id"]))
    )
    e2 = await refused("not_found", hub.brains.read_entry(BOB, a_brain_get(path="/fs/n.md", session_id="ses_nothing")))
    assert e1.message.replace(hidden["session_id"], "X") == e2.message.replace("ses_nothing", "X")


def brain_pages(hub: Hub, sid: str) -> int:
    """The brain's size as its limits count it: its database's pages, WAL included."""
    with sqlite3.connect(hub.brains.path_of(sid)) as conn:
        row = conn.execute("SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()").fetchone()
        return int(row[0])


def brain_counter(hub: Hub, sid: str) -> tuple[str, int] | None:
    with sqlite3.connect(hub.brains.path_of(sid)) as conn:
        return brain.counter(conn)


async def test_file_size_limits_at_their_edges(hub: Hub, monkeypatch: pytest.MonkeyPatch) -> None:
    active = await started(hub)
    await put(hub, ALICE, active, path="/kv/a", content="a" * 1000, store="session")
    monkeypatch.setattr(entries, "FILE_WARN", brain_pages(hub, active[0]) + 1)
    assert (await put(hub, ALICE, active, path="/kv/b", content="b", store="session"))["warnings"] == []
    size = brain_pages(hub, active[0])
    monkeypatch.setattr(entries, "FILE_WARN", size)
    warned = await put(hub, ALICE, active, path="/kv/b", content="c", store="session")
    assert warned["warnings"] == [f"session brain {active[0]} is {size + 1} bytes, past the {size}-byte warning mark"]
    size, counter = brain_pages(hub, active[0]), brain_counter(hub, active[0])
    monkeypatch.setattr(entries, "FILE_MAX", size + 10)
    err = await refused("payload_too_large", put(hub, ALICE, active, path="/kv/c", content="c" * 10, store="session"))
    assert err.details == {"limit": size + 10, "size_bytes": size}
    await refused("not_found", hub.brains.read_entry(ALICE, a_brain_get(path="/kv/c"), active=active))
    assert (brain_pages(hub, active[0]), brain_counter(hub, active[0])) == (size, counter)  # its seq given back
    monkeypatch.setattr(entries, "FILE_MAX", size + 11)
    assert (await put(hub, ALICE, active, path="/kv/c", content="c" * 10, store="session"))["ok"]


async def test_rest_brain_reads(client: HubClient, hub: Hub) -> None:
    active = await started(hub)
    sid = active[0]
    r = await client.get(f"/api/v1/sessions/{sid}/brain/entry?path=/fs/x.md", headers=ADMIN)
    assert_problem(r, 404, "not_found")
    assert not brain_file(hub, sid).exists()
    await put(hub, ALICE, active, path="/fs/dir/x.md", content="hello", store="session")
    r = await client.get(f"/api/v1/sessions/{sid}/brain?path=/fs/", headers=ADMIN)
    assert r.json() == {
        "path": "/fs/",
        "entries": [{"path": "/fs/dir", "type": "dir", "size_bytes": 5}],
        "truncated": False,
        "session_id": sid,
    }
    r = await client.get(f"/api/v1/sessions/{sid}/brain/entry?path=/fs/dir/x.md", headers=ADMIN)
    body = r.json()
    assert body["content"] == "hello" and body["type"] == "file" and body["size_bytes"] == 5
    assert body["written_at"].endswith("Z")
    assert_problem(await client.get(f"/api/v1/sessions/{sid}/brain/entry?path=/fs/dir", headers=ADMIN), 409, "conflict")
    await behind_the_service(
        hub,
        sid,
        lambda conn: conn.execute(
            "INSERT INTO entries (path, value, version) VALUES ('/fs/bin', x'fffe00', 'sha256:x')"
        ),
    )
    r = await client.get(f"/api/v1/sessions/{sid}/brain/entry?path=/fs/bin", headers=ADMIN)
    assert_problem(r, 422, "invalid_argument")


async def test_rest_level_listing_is_capped_at_500(hub: Hub, client: HubClient) -> None:
    active = await started(hub)
    await put(hub, ALICE, active, path="/kv/seed", content="s", store="session")
    await behind_the_service(
        hub,
        active[0],
        lambda conn: conn.executemany(
            "INSERT INTO entries (path, value, version) VALUES (?, 'v', 'sha256:v')",
            [(f"/kv/k{i:04d}",) for i in range(500)],
        ),
    )
    r = await client.get(f"/api/v1/sessions/{active[0]}/brain?path=/kv/", headers=ADMIN)
    assert len(r.json()["entries"]) == 500 and r.json()["truncated"] is True
    await behind_the_service(hub, active[0], lambda conn: conn.execute("DELETE FROM entries WHERE path = '/kv/seed'"))
    r = await client.get(f"/api/v1/sessions/{active[0]}/brain?path=/kv/", headers=ADMIN)
    assert len(r.json()["entries"]) == 500 and r.json()["truncated"] is False


async def test_replay_records_calls_oldest_first(client: HubClient, hub: Hub) -> None:
    sid, _ = await started(hub)
    r = await client.get(f"/api/v1/sessions/{sid}/replay", headers=ADMIN)
    assert r.json() == {"session_id": sid, "events": []}
    await hub.brains.record_call(sid, "brain_put", {"path": "/kv/a", "content": "z" * 1000}, "ok")
    await hub.brains.record_call(sid, "feed_read", {"project_id": "web"}, "invalid_argument")
    events = (await client.get(f"/api/v1/sessions/{sid}/replay", headers=ADMIN)).json()["events"]
    assert [(e["tool"], e["outcome"]) for e in events] == [("brain_put", "ok"), ("feed_read", "invalid_argument")]
    assert "1000 chars" in events[0]["arguments"] and len(events[0]["arguments"]) < 300
    await hub.brains.remove(sid)
    assert (await client.get(f"/api/v1/sessions/{sid}/replay", headers=ADMIN)).json()["events"] == []


async def test_a_namespace_root_read_as_an_entry_is_a_directory(client: HubClient, hub: Hub) -> None:
    active = await started(hub)
    sid = active[0]
    for written in (False, True):
        for root in ("/kv", "/fs", "/kv/", "/fs/", "/fs/./", "/kv/a/.."):
            r = await client.get(f"/api/v1/sessions/{sid}/brain/entry", params={"path": root}, headers=ADMIN)
            assert_problem(r, 409, "conflict")
            assert "directory" in r.json()["detail"]
        assert brain_file(hub, sid).exists() is written  # the refusal created no file
        await put(hub, ALICE, active, path="/kv/a", content="1", store="session")
    r = await client.get(f"/api/v1/sessions/{sid}/brain/entry", params={"path": "/kv/a"}, headers=ADMIN)
    assert r.status_code == 200 and r.json()["content"] == "1"


SESSION_FORMS: list[tuple[Any, bool]] = [
    (None, True),
    ({"session_id": "ses_x"}, True),
    ({"agent": "bob", "name": "task"}, True),
    ({"agent": "bob", "name": "task", "project_id": "web"}, True),
    ({"agent": "bob", "name": "task", "project_id": None}, True),
    ("ses_x", False),
    ({}, False),
    ({"session_id": ""}, False),
    ({"session_id": "s" * 129}, False),
    ({"session_id": "ses_x", "agent": "bob"}, False),
    ({"session_id": None, "agent": "bob", "name": "t"}, False),
    ({"agent": "bob"}, False),
    ({"agent": "bob", "name": 5}, False),
    ({"agent": "bob", "name": "t", "x": 1}, False),
    ({"agent": "bob", "name": "t", "project_id": "Not A Slug"}, False),
    (["ses_x"], False),
    (5, False),
]


@pytest.mark.parametrize(("value", "accepted"), SESSION_FORMS)
def test_the_session_reference_parses_exactly_what_its_schema_publishes(value: Any, accepted: bool) -> None:
    """The brain tools' `session`: the parser accepts a value exactly when the published schema
    does (null included: it reads as absent), and a refusal names `session`."""
    schema = input_schema(BrainGet)["properties"]["session"]
    assert Draft202012Validator(schema).is_valid(value) is accepted
    if accepted:
        parse(BrainGet, {"path": "/fs/a", "session": value})
    else:
        with pytest.raises(HubError) as caught:
            parse(BrainGet, {"path": "/fs/a", "session": value})
        assert caught.value.code == "invalid_argument" and caught.value.details == {"field": "session"}


async def test_a_file_whose_schema_is_not_committed_yet_reads_as_never_written(hub: Hub) -> None:
    """The first write's actor creates the file before its migration commits: a read landing in
    between finds no tables and answers as for a brain never written, never a store error."""
    active = await started(hub)
    sid = active[0]
    brain_file(hub, sid).parent.mkdir(parents=True, exist_ok=True)
    sqlite3.connect(brain_file(hub, sid)).close()  # the file exists, empty: no schema yet
    await refused("not_found", hub.brains.read_entry(ALICE, a_brain_get(path="/kv/x"), active=active))
    listing = await hub.brains.list_entries(ALICE, a_brain_list(), active=active)
    assert listing["entries"] == [] and listing["truncated"] is False
    assert await hub.brains.read_file(sid, lambda conn: conn.execute("SELECT * FROM entries").fetchall()) is None
    wrote = await put(hub, ALICE, active, path="/kv/x", content="1", store="session")
    got = await hub.brains.read_entry(ALICE, a_brain_get(path="/kv/x"), active=active)
    assert got["content"] == "1" and got["version"] == wrote["version"]
