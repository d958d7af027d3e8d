"""Knowledge base pages through the service: write, read, list, delete, each rule at its edge;
every refusal leaves the pages, the log, the kept bytes and the feed as they were."""

from __future__ import annotations

from dataclasses import replace

import anyio
import orjson
import pytest

from hubcore.caller import Caller
from hubcore.errors import HubError
from hubcore.hub import Hub
from hubcore.services import entries
from hubcore.services.kb import models
from hubcore.services.kb.paths import from_url
from tests.kb.support import get, kb_events, kb_file, kb_rows, page, put, req, state

pytestmark = pytest.mark.anyio


async def refused(hub: Hub, code: str, call: object, project_id: str = "web") -> HubError:
    """Await `call`, expecting a refusal with `code` that changed nothing."""
    before = state(hub, project_id)
    with pytest.raises(HubError) as err:
        await call  # type: ignore[misc]
    assert err.value.code == code, err.value
    assert state(hub, project_id) == before
    return err.value


async def test_write_then_read_the_page_as_stored(hub: Hub, alice: Caller) -> None:
    content = page("Intro", "# Intro\nHello.\n")
    wrote = await put(hub, alice, "/fs/./notes//intro.md/", content)
    assert wrote == {
        "ok": True,
        "path": "/fs/notes/intro.md",
        "version": entries.version_of(content.encode()),
        "size_bytes": len(content.encode()),
        "lint": [],
        "warnings": [],
    }
    read = await get(hub, alice, "/fs/notes/intro.md")
    assert read["content"] == content and read["version"] == wrote["version"]
    assert read["last_write"] == {"actor": "alice", "at": "2027-01-15T08:00:00.000Z"}
    assert kb_rows(hub, "SELECT op, path, actor, version FROM log") == [
        ("kb.put", "/fs/notes/intro.md", "alice", wrote["version"])
    ]
    kind, actor, payload = kb_events(hub)[0]
    assert (kind, actor, orjson.loads(payload)) == (
        "signal",
        "alice",
        {"action": "kb_written", "path": "/fs/notes/intro.md"},
    )


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        ("/fs/a/../b.md", "/fs/b.md"),
        ("/fs/../../../x.md", "/fs/x.md"),  # `..` never climbs above /fs
        ("/fs/a/./b.md/", "/fs/a/b.md"),
        ("//fs///a.md", "/fs/a.md"),
    ],
)
async def test_paths_are_canonical_before_use(hub: Hub, alice: Caller, raw: str, canonical: str) -> None:
    assert (await put(hub, alice, raw, "x"))["path"] == canonical
    assert (await get(hub, alice, canonical))["content"] == "x"


@pytest.mark.parametrize(
    "raw",
    [
        "/kv/a.md",
        "/fs/",
        "/fs/..",
        "notes/a.md",
        "/fs/a\x00.md",
        "/fs/a\n.md",
        "/fs/a\t.md",
        "/fs/a\\b.md",
        "/fs/" + "a" * 509,
    ],
)
async def test_refused_paths_write_nothing(hub: Hub, alice: Caller, raw: str) -> None:
    err = await refused(hub, "invalid_argument", put(hub, alice, raw, "x"))
    assert err.details is not None and err.details["field"] == "path"
    assert not kb_file(hub).exists()


async def test_a_path_of_512_bytes_is_the_limit(hub: Hub, alice: Caller) -> None:
    longest = "/fs/" + "é" * 254  # 4 + 508 bytes
    assert len(longest.encode()) == 512
    assert (await put(hub, alice, longest, "x"))["path"] == longest
    err = await refused(hub, "invalid_argument", put(hub, alice, longest + "a", "x"))
    assert "513 bytes" in err.message
    err = await refused(hub, "invalid_argument", put(hub, alice, "/kv/x", "x"))
    assert "/fs/" in err.message


def test_the_url_form_drops_the_slash_and_may_omit_fs() -> None:
    assert from_url("notes/a.md") == from_url("fs/notes/a.md") == from_url("/fs/notes/a.md") == "/fs/notes/a.md"
    assert from_url("fs/fs/x.md") == "/fs/fs/x.md"
    assert from_url("", allow_root=True) == "/fs/"
    with pytest.raises(HubError):
        from_url("kv/a")


async def test_a_page_is_at_most_one_mebibyte(hub: Hub, alice: Caller) -> None:
    exactly = "x" * entries.PAGE_MAX
    assert (await put(hub, alice, "/fs/big.md", exactly))["size_bytes"] == entries.PAGE_MAX
    await refused(hub, "payload_too_large", put(hub, alice, "/fs/big.md", exactly + "y"))
    await refused(hub, "payload_too_large", put(hub, alice, "/fs/big.md", "é" * (entries.PAGE_MAX // 2 + 1)))


async def test_if_version_conditions_the_write(hub: Hub, alice: Caller) -> None:
    # A refused condition on a project without a file creates none.
    await refused(hub, "conflict", put(hub, alice, "/fs/a.md", "one", if_version="sha256:" + "0" * 64))
    assert not kb_file(hub).exists()
    first = await put(hub, alice, "/fs/a.md", "one", if_version="absent")
    err = await refused(hub, "conflict", put(hub, alice, "/fs/a.md", "two", if_version="absent"))
    assert err.message.endswith(f"current_version={first['version']}")
    err = await refused(hub, "conflict", put(hub, alice, "/fs/a.md", "two", if_version="sha256:" + "1" * 64))
    assert err.message.endswith(f"current_version={first['version']}")
    second = await put(hub, alice, "/fs/a.md", "two", if_version=first["version"])
    assert (await get(hub, alice, "/fs/a.md"))["version"] == second["version"]
    await refused(hub, "conflict", put(hub, alice, "/fs/b.md", "x", if_version=first["version"]))
    with pytest.raises(HubError) as err_:
        req(models.KbWrite, path="/fs/a.md", content="x", if_version="sha1:abc")
    assert err_.value.code == "invalid_argument"


async def test_a_page_and_a_directory_never_share_a_path(hub: Hub, alice: Caller) -> None:
    await put(hub, alice, "/fs/guide/setup.md", "x")
    await refused(hub, "conflict", put(hub, alice, "/fs/guide", "x"))
    await refused(hub, "conflict", put(hub, alice, "/fs/guide/setup.md/more.md", "x"))


async def test_unreadable_project_is_missing_for_an_agent(hub: Hub, alice: Caller, admin: Caller) -> None:
    await put(hub, admin, "/fs/secret.md", "x", project_id="vault")
    for call in (
        put(hub, alice, "/fs/a.md", "x", project_id="vault"),
        get(hub, alice, "/fs/secret.md", project_id="vault"),
        put(hub, alice, "/fs/a.md", "x", project_id="nowhere"),
    ):
        await refused(hub, "not_found", call, project_id="vault")
    assert (await get(hub, admin, "/fs/secret.md", project_id="vault"))["content"] == "x"


async def test_a_control_character_in_frontmatter_is_refused(hub: Hub, alice: Caller) -> None:
    await refused(hub, "invalid_argument", put(hub, alice, "/fs/a.md", "---\ntitle: a\x07b\n---\nbody\n"))
    # In the body it is text like any other.
    assert (await put(hub, alice, "/fs/a.md", "---\ntitle: ab\n---\nbo\x07dy\n"))["ok"]


async def test_reads_of_missing_pages_and_versions(hub: Hub, alice: Caller) -> None:
    await refused(hub, "not_found", get(hub, alice, "/fs/none.md"))
    assert not kb_file(hub).exists()  # a read creates no file
    one = await put(hub, alice, "/fs/a.md", "one")
    two = await put(hub, alice, "/fs/a.md", "two")
    old = await get(hub, alice, "/fs/a.md", version=one["version"])
    assert old == {
        "path": "/fs/a.md",
        "content": "one",
        "version": one["version"],
        "size_bytes": 3,
        "current": False,
        "at": "2027-01-15T08:00:00.000Z",
        "actor": "alice",
    }
    assert (await get(hub, alice, "/fs/a.md", version=two["version"]))["current"] is True
    await refused(hub, "not_found", get(hub, alice, "/fs/a.md", version="sha256:" + "2" * 64))
    await refused(hub, "not_found", get(hub, alice, "/fs/b.md", version=one["version"]))  # not b's history
    await hub.kb.delete(alice, req(models.KbDelete, path="/fs/a.md"))
    await refused(hub, "not_found", get(hub, alice, "/fs/a.md"))
    assert (await get(hub, alice, "/fs/a.md", version=two["version"]))["current"] is False  # deleted: readable


async def test_listing_one_level_with_directory_sizes(hub: Hub, alice: Caller) -> None:
    for path, text in [
        ("/fs/index.md", "ab"),
        ("/fs/guide/a.md", "abc"),
        ("/fs/guide/b.md", "abcd"),
        ("/fs/guide/deep/c.md", "abcde"),
        ("/fs/guide/deep/d.md", "x"),
    ]:
        await put(hub, alice, path, text)
    top = await hub.kb.list(alice, req(models.KbList))
    assert top == {
        "entries": [
            {"path": "/fs/guide", "type": "dir", "size_bytes": 7, "children": 3},
            {"path": "/fs/index.md", "type": "file", "size_bytes": 2, "children": None},
        ],
        "truncated": False,
    }
    guide = await hub.kb.list(alice, req(models.KbList, prefix="/fs/guide/", limit=2))
    assert [e["path"] for e in guide["entries"]] == ["/fs/guide/a.md", "/fs/guide/b.md"] and guide["truncated"]
    meta = await hub.kb.list(alice, req(models.KbList, prefix="/fs/guide", meta=True))
    assert [e["path"] for e in meta["entries"]] == [
        "/fs/guide/a.md",
        "/fs/guide/b.md",
        "/fs/guide/deep/c.md",
        "/fs/guide/deep/d.md",
    ]
    await refused(hub, "conflict", hub.kb.list(alice, req(models.KbList, prefix="/fs/index.md")))
    assert await hub.kb.list(alice, req(models.KbList, prefix="/fs/none")) == {"entries": [], "truncated": False}
    with pytest.raises(HubError):
        req(models.KbList, limit=entries.LISTING_MAX + 1)


async def test_listing_an_unwritten_knowledge_base_creates_no_file(hub: Hub, alice: Caller) -> None:
    assert await hub.kb.list(alice, req(models.KbList)) == {"entries": [], "truncated": False}
    assert not kb_file(hub).exists()


async def test_meta_rows_carry_the_page_row_fields(hub: Hub, alice: Caller, clock: object) -> None:
    await put(
        hub,
        alice,
        "/fs/a.md",
        page("Alpha", description="the first", status="draft", tags="[x, y]", stale_after="2027-01-14"),
    )
    await put(hub, alice, "/fs/b.md", "no block")
    rows = (await hub.kb.list(alice, req(models.KbList, meta=True)))["entries"]
    assert rows[0] == {
        "path": "/fs/a.md",
        "type": "file",
        "size_bytes": rows[0]["size_bytes"],
        "children": None,
        "title": "Alpha",
        "description": "the first",
        "page_type": "Concept",
        "status": "draft",
        "tags": ["x", "y"],
        "trust": "unverified",
        "verified_by": None,
        "verified_at": None,
        "stale": True,
        "stale_after": "2027-01-14",
        "last_write_by": "alice",
        "last_write_at": "2027-01-15T08:00:00.000Z",
    }
    assert {k: rows[1][k] for k in ("title", "page_type", "tags", "stale", "stale_after")} == {
        "title": None,
        "page_type": None,
        "tags": None,
        "stale": False,
        "stale_after": None,
    }


async def test_delete_rules(hub: Hub, alice: Caller) -> None:
    await refused(hub, "not_found", hub.kb.delete(alice, req(models.KbDelete, path="/fs/a.md")))
    one = await put(hub, alice, "/fs/a.md", "one")
    await put(hub, alice, "/fs/dir/b.md", "b")
    await refused(hub, "not_found", hub.kb.delete(alice, req(models.KbDelete, path="/fs/c.md")))
    await refused(hub, "invalid_argument", hub.kb.delete(alice, req(models.KbDelete, path="/fs/dir")))
    await refused(
        hub, "conflict", hub.kb.delete(alice, req(models.KbDelete, path="/fs/a.md", if_version="sha256:" + "3" * 64))
    )
    assert await hub.kb.delete(alice, req(models.KbDelete, path="/fs/a.md", if_version=one["version"])) == {
        "ok": True,
        "path": "/fs/a.md",
    }
    assert kb_rows(hub, "SELECT op, version, replaced FROM log WHERE path = '/fs/a.md' ORDER BY id") == [
        ("kb.put", one["version"], None),
        ("kb.delete", None, one["version"]),
    ]
    assert orjson.loads(kb_events(hub)[-1][2]) == {"action": "kb_deleted", "path": "/fs/a.md"}
    await refused(hub, "not_found", hub.kb.delete(alice, req(models.KbDelete, path="/fs/a.md")))
    # The directory deletes once it is empty: then it is no longer anything.
    await hub.kb.delete(alice, req(models.KbDelete, path="/fs/dir/b.md"))
    await refused(hub, "not_found", hub.kb.delete(alice, req(models.KbDelete, path="/fs/dir")))


async def test_the_file_limit_warns_then_refuses_and_never_refuses_a_delete(
    hub: Hub, alice: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    await put(hub, alice, "/fs/a.md", "x" * 1000)
    size = kb_file(hub).stat().st_size + (kb_file(hub).with_name("web.db-wal").stat().st_size)
    monkeypatch.setattr(entries, "FILE_WARN", size)
    monkeypatch.setattr(entries, "FILE_MAX", size + 2000)
    wrote = await put(hub, alice, "/fs/b.md", "y" * 10)
    assert wrote["warnings"] and "warning mark" in wrote["warnings"][0]
    monkeypatch.setattr(entries, "FILE_MAX", size)
    await refused(hub, "payload_too_large", put(hub, alice, "/fs/c.md", "z" * 10))
    assert (await hub.kb.delete(alice, req(models.KbDelete, path="/fs/a.md")))["ok"]


async def test_the_write_signal_is_dropped_past_the_ceiling_and_the_write_stands(
    hub: Hub, alice: Caller, admin: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    await put(hub, alice, "/fs/a.md", "one")
    events = len(kb_events(hub))
    monkeypatch.setattr(hub.core, "settings", replace(hub.core.settings, events_per_project=1))
    two = await put(hub, alice, "/fs/a.md", "two")
    assert (await get(hub, alice, "/fs/a.md"))["version"] == two["version"]
    assert len(kb_events(hub)) == events  # dropped, not refused
    # Operations whose signal is not best effort are refused naming the cap, writing nothing.
    err = await refused(hub, "conflict", hub.kb.delete(alice, req(models.KbDelete, path="/fs/a.md")))
    assert err.details == {"cap": 1, "setting": "events_per_project"}
    await refused(hub, "conflict", hub.kb.review(admin, req(models.KbReview, path="/fs/a.md")))


async def test_a_writes_lint_is_what_its_own_bytes_and_links_decide(hub: Hub, alice: Caller) -> None:
    await put(hub, alice, "/fs/guide/index.md", page("Guide"))
    await put(hub, alice, "/fs/other.md", page("Other"))
    body = (
        "[ok](other.md) [dir](guide/) [gone](missing.md)\n\n[out](../../etc/passwd) [web](https://x.org)\n"
        "`[code](nowhere.md)`\n"
    )
    wrote = await put(hub, alice, "/fs/a.md", "---\ntitle: A\nokf_version: 1\n---\n" + body)
    assert [(f["code"], f.get("line")) for f in wrote["lint"]] == [
        ("broken_link", 5),
        ("link_escapes_bundle", 7),
        ("missing_type", wrote["lint"][2].get("line")),
        ("okf_version_misplaced", 3),
    ]
    # Lint never fails a write; the bundle's structure is the lint route's, not the write's.
    assert (await get(hub, alice, "/fs/a.md"))["version"] == wrote["version"]
    assert (await put(hub, alice, "/fs/lonely.md", page("Lonely")))["lint"] == []


async def test_racing_conditional_writes_are_ordered_by_the_files_actor(hub: Hub, alice: Caller) -> None:
    """Compare and write happen in one command: of ten racing creates exactly one lands, and of ten
    racing updates from the same version exactly one lands."""
    outcomes: list[str] = []

    async def attempt(n: int, condition: str) -> None:
        try:
            await put(hub, alice, "/fs/race.md", f"writer {n}", if_version=condition)
            outcomes.append("ok")
        except HubError as err:
            outcomes.append(err.code)

    async with anyio.create_task_group() as tg:
        for n in range(10):
            tg.start_soon(attempt, n, "absent")
    assert sorted(outcomes) == ["conflict"] * 9 + ["ok"]
    held = (await get(hub, alice, "/fs/race.md"))["version"]
    outcomes.clear()
    async with anyio.create_task_group() as tg:
        for n in range(10, 20):
            tg.start_soon(attempt, n, held)
    assert sorted(outcomes) == ["conflict"] * 9 + ["ok"]
    assert kb_rows(hub, "SELECT COUNT(*) FROM log") == [(2,)]
    assert len(kb_events(hub)) == 2
